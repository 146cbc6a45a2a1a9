"""Framework vocabulary: the frameworks a question names or implies, and their central API
names, so that prose questions meet the code that answers them."""

from __future__ import annotations

from collections.abc import Sequence

from core.frameworks import ALIASES, LEXICON, canonical_framework, framework_mentions
from query.retrieval.expansion.words import TOKEN

VOCABULARY_TERMS = 3

# Domains whose questions are about Apple platforms (or may be); elsewhere Apple framework
# vocabulary is only added for frameworks the caller asked for by name.
_APPLE_DOMAINS = (None, "ios", "general")

# The central API names of a framework, most characteristic first. Keys are the lexicon's
# canonical names (chunkers.frameworks); this table adds only what the lexicon lacks: symbols.
FRAMEWORK_VOCABULARY: dict[str, tuple[str, ...]] = {
    "SwiftData": ("@Model", "ModelContainer", "ModelContext", "@Query", "FetchDescriptor"),
    "SwiftUI": ("View", "@State", "@Binding", "NavigationStack", "@Environment"),
    "CoreData": (
        "NSManagedObject", "NSPersistentContainer", "NSManagedObjectContext", "NSFetchRequest",
    ),
    "CloudKit": ("CKContainer", "CKRecord", "CKDatabase", "CKQuery", "CKSyncEngine"),
    "Observation": ("@Observable", "withObservationTracking", "@ObservationIgnored"),
    "Combine": ("Publisher", "@Published", "ObservableObject", "AnyCancellable", "sink"),
    "UIKit": ("UIViewController", "UIView", "UIApplication", "UIWindowScene"),
    "Foundation": ("URLSession", "JSONDecoder", "FileManager", "UserDefaults"),
    "WidgetKit": ("TimelineProvider", "WidgetConfiguration", "TimelineEntry"),
    "AppIntents": ("AppIntent", "AppShortcutsProvider", "@Parameter"),
    "ActivityKit": ("ActivityAttributes", "Activity", "ActivityContent"),
    "StoreKit": ("Product", "Transaction", "SubscriptionStoreView"),
    "Charts": ("Chart", "BarMark", "LineMark", "PointMark"),
    "TipKit": ("Tip", "TipView", "Tips.configure"),
    "MapKit": ("Map", "MKMapView", "MKCoordinateRegion", "Marker"),
    "CoreLocation": ("CLLocationManager", "CLLocation", "CLLocationUpdate"),
    "UserNotifications": ("UNUserNotificationCenter", "UNNotificationRequest"),
    "HealthKit": ("HKHealthStore", "HKQuantityType", "HKSampleQuery"),
    "XCTest": ("XCTestCase", "XCTAssertEqual", "XCUIApplication"),
    "Testing": ("@Test", "#expect", "@Suite"),
    "FoundationModels": ("LanguageModelSession", "SystemLanguageModel", "@Generable"),
    "RealityKit": ("RealityView", "Entity", "ModelEntity"),
    "AVFoundation": ("AVPlayer", "AVAudioSession", "AVCaptureSession"),
    "CoreML": ("MLModel", "MLFeatureProvider"),
    "OSLog": ("Logger", "OSLogStore"),
}  # fmt: skip
assert set(FRAMEWORK_VOCABULARY) <= LEXICON, set(FRAMEWORK_VOCABULARY) - LEXICON

# Spelled-out names that mean their framework in any case ("core data"), unlike the
# lexicon's qualified aliases ("natural language" is often just English).
_ALIASES_LOWER = {alias.lower(): name for alias, name in ALIASES.items()}

# Symbols distinctive enough to imply their framework (`Map`, `View`, `Product`, `Entity`
# are ordinary words or shared names, and imply nothing).
_GENERIC_SYMBOLS = frozenset(
    {"View", "Publisher", "Product", "Transaction", "Map", "Marker", "Entity", "Chart",
     "Tip", "Activity", "Logger", "sink", "@State", "@Binding", "@Environment", "@Parameter"}
)  # fmt: skip
SYMBOL_FRAMEWORK: dict[str, str] = {
    symbol.lower(): framework
    for framework, symbols in FRAMEWORK_VOCABULARY.items()
    for symbol in symbols
    if symbol not in _GENERIC_SYMBOLS
}


def frameworks_of(query: str, requested: Sequence[str], domain: str | None = None) -> list[str]:
    """Frameworks asked for, named in the question (name, alias or lowercase spelling), or
    implied by one of their distinctive symbols in it; requested ones first."""
    found = [canonical_framework(n) or n for n in requested]
    if domain in _APPLE_DOMAINS:
        found.extend(framework_mentions(query))
        words = query.split()
        for size in (3, 2):  # "core data", "grand central dispatch", in any case
            for i in range(len(words) - size + 1):
                phrase = " ".join(w.strip("?.,:;!()") for w in words[i : i + size]).lower()
                if phrase in _ALIASES_LOWER:
                    found.append(_ALIASES_LOWER[phrase])
        for match in TOKEN.finditer(query):
            token = match[0]
            name = canonical_framework(token) if len(token) > 3 else None
            if name in FRAMEWORK_VOCABULARY and name not in found:
                found.append(name)
            implied = SYMBOL_FRAMEWORK.get(token.lower())
            if implied:
                found.append(implied)
    return list(dict.fromkeys(found))


def vocabulary_terms(
    query: str, frameworks: Sequence[str], per_framework: int = VOCABULARY_TERMS
) -> list[str]:
    """Central API names of the frameworks that the question does not already contain."""
    # Case-sensitive: the word "model" in a question is not the `@Model` macro.
    present = {t.lstrip("@#") for t in TOKEN.findall(query)}
    out: list[str] = []
    named = frameworks[:2]  # more frameworks would drown the question
    per_framework = per_framework if len(named) == 1 else max(1, per_framework - 1)
    for name in named:
        terms = [s for s in FRAMEWORK_VOCABULARY.get(name, ()) if s.lstrip("@#") not in present][
            :per_framework
        ]
        out.extend(t for t in terms if t not in out)
    return out
