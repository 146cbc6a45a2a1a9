"""Apple framework names: a canonical lexicon, and detection from imports, fields and prose.

In core because both sides of an index read it: tagging (chunkers/tagging/tags.py) records
the frameworks a chunk mentions, and query expansion (query/retrieval/expansion/) recognises
the same names, aliases and mentions in a question, so the two cannot drift apart.

Detection rules:

* `import X` (Swift syntax, any modifiers) counts for every framework in the lexicon.
  Only Swift imports count for `os`, because `import os` in Python means something else.
* Distinctive names (SwiftUI, UIKit, CloudKit, ...) count as whole, case-sensitive words
  anywhere in prose, as do the spelled-out names "Core Data", "Core ML", "Swift Charts",
  "App Intents", "Swift Testing", "Grand Central Dispatch", ...
* Names that are also English words (Foundation, Combine, Observation, Network, Vision,
  Speech, Charts, Dispatch, Accelerate, Security, Photos, ...) count in prose only when
  qualified: "Combine framework" (so also "the Combine framework"), a module-qualified name
  such as `Foundation.Date`, or an import. "Combine the results" is not a mention.
* `Testing` and `os` never count from prose words at all ("Testing framework" is as often
  generic as not); Swift Testing is found by its full name or its import.
* Spelled-out forms of the other multi-word names ("Natural Language", "Foundation Models")
  count only with "framework" after them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Names that are not ordinary words: a capitalised whole-word match means the framework.
DISTINCTIVE = (
    "ARKit", "AVFoundation", "AVKit", "ActivityKit", "AdSupport", "AppIntents", "AppKit",
    "AppTrackingTransparency", "AudioToolbox", "AuthenticationServices", "BackgroundTasks",
    "CallKit", "CarPlay", "ClockKit", "CloudKit", "ContactsUI", "CoreAudio", "CoreBluetooth",
    "CoreData", "CoreFoundation", "CoreGraphics", "CoreHaptics", "CoreImage", "CoreLocation",
    "CoreML", "CoreMedia", "CoreMotion", "CoreNFC", "CoreSpotlight", "CoreTelephony",
    "CoreText", "CoreTransferable", "CoreVideo", "CreateML", "CryptoKit", "DeviceActivity",
    "EventKit", "EventKitUI", "FamilyControls", "FoundationModels", "GameController",
    "GameKit", "GameplayKit", "GroupActivities", "HealthKit", "HomeKit", "LinkPresentation",
    "LocalAuthentication", "ManagedSettings", "MapKit", "MessageUI", "Metal", "MetalKit",
    "MetalPerformanceShaders", "ModelIO", "MultipeerConnectivity", "MusicKit",
    "NaturalLanguage", "NearbyInteraction", "NetworkExtension", "OSLog", "PDFKit", "PassKit",
    "PencilKit", "PhotosUI", "PushKit", "QuartzCore", "QuickLook", "RealityKit",
    "RegexBuilder", "ReplayKit", "SafariServices", "SceneKit", "ShazamKit", "SoundAnalysis",
    "SpriteKit", "StoreKit", "SwiftData", "SwiftUI", "SystemConfiguration", "TipKit",
    "UIKit", "UniformTypeIdentifiers", "UserNotifications", "VisionKit", "WatchConnectivity",
    "WatchKit", "WeatherKit", "WebKit", "WidgetKit", "XCTest",
)  # fmt: skip

# Names that are also ordinary English words: only qualified mentions count.
COMMON_WORDS = (
    "Accelerate", "Charts", "Combine", "Compression", "Contacts", "Dispatch", "Distributed",
    "Foundation", "Intents", "Messages", "Network", "Observation", "Photos", "Security",
    "Speech", "Spatial", "Symbols", "Synchronization", "Translation", "Vision",
)  # fmt: skip

# Never from prose words: only imports (and for Testing, its full name "Swift Testing").
IMPORT_ONLY = ("Testing", "os")

LEXICON = frozenset(DISTINCTIVE + COMMON_WORDS + IMPORT_ONLY)

# Spelled-out names that are unambiguous on their own.
ALIASES = {
    "Core Data": "CoreData",
    "Core ML": "CoreML",
    "Core Location": "CoreLocation",
    "Core Graphics": "CoreGraphics",
    "Core Image": "CoreImage",
    "Core Motion": "CoreMotion",
    "Core Bluetooth": "CoreBluetooth",
    "Core Haptics": "CoreHaptics",
    "Core Text": "CoreText",
    "Core Spotlight": "CoreSpotlight",
    "Core NFC": "CoreNFC",
    "Core Media": "CoreMedia",
    "Core Video": "CoreVideo",
    "Core Audio": "CoreAudio",
    "Core Foundation": "CoreFoundation",
    "Core Animation": "QuartzCore",
    "Create ML": "CreateML",
    "AV Foundation": "AVFoundation",
    "App Intents": "AppIntents",
    "Swift Charts": "Charts",
    "Swift Testing": "Testing",
    "Grand Central Dispatch": "Dispatch",
    "Quick Look": "QuickLook",
    "PhotoKit": "Photos",
}


def _spelled_out(name: str) -> str:
    """'NaturalLanguage' → 'Natural Language'; names without a lower→upper step stay."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)


# Spelled-out multi-word names that need "framework" after them to count.
QUALIFIED_ALIASES = {
    spelled: name
    for name in DISTINCTIVE
    if (spelled := _spelled_out(name)) != name and spelled not in ALIASES
}

_CANONICAL = {
    **{name.lower(): name for name in LEXICON},
    **{alias.lower(): name for alias, name in ALIASES.items()},
    **{alias.lower(): name for alias, name in QUALIFIED_ALIASES.items()},
}


def _words(names: Iterable[str]) -> str:
    # Longest first: an alternation takes the first branch that matches.
    escaped = (re.escape(n).replace(r"\ ", r"\s+") for n in sorted(names, key=len, reverse=True))
    return "|".join(escaped)


# The scans below are anchored on something rare (a capitalised word, "framework", "import")
# and then look around it: one alternation of a hundred names over a whole text is slow.
# Capitalised words, with whether a type follows (`Foundation.Date`, not `Security.html`).
_CAPITALISED = re.compile(r"\b([A-Z]\w*)(\.(?=[A-Z]))?")
_DISTINCTIVE_SET = frozenset(DISTINCTIVE)
_COMMON_SET = frozenset(COMMON_WORDS)
_ALIAS_RES = {
    alias: (frozenset(alias.split()), re.compile(rf"\b{_words([alias])}\b")) for alias in ALIASES
}
_FRAMEWORK_WORD = re.compile(r"\bframeworks?\b", re.IGNORECASE)
# The name right before "framework"; "Core Foundation framework" is not Foundation's.
_QUALIFIER = re.compile(rf"(?<!Core )\b(?P<name>{_words([*COMMON_WORDS, *QUALIFIED_ALIASES])})\s+$")
_QUALIFIER_CHARS = 40
_IMPORT_RE = re.compile(
    r"\bimport\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?"
    r"(?P<name>[A-Za-z_]\w*)"
)


def canonical_framework(name: str) -> str | None:
    """The lexicon spelling of a framework name or alias ("core data" → "CoreData")."""
    if not isinstance(name, str):
        return None
    return _CANONICAL.get(re.sub(r"\s+", " ", name).strip().lower())


def framework_field(value: object) -> list[str]:
    """Frameworks named by a document's `frameworks` field: a list, or a comma-separated
    string from hand-written front matter. Unknown names are kept as written: the author
    said so explicitly."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        return []
    names = (item.strip() for item in items if isinstance(item, str))
    return sorted({canonical_framework(n) or n for n in names if n})


def import_frameworks(imports: Iterable[str], *, swift: bool) -> list[str]:
    """Lexicon frameworks among import lines or bare module names (`SwiftUI`,
    `import SwiftUI`, `@testable import struct Foundation.Date`). Other modules (the
    user's own, third-party packages) are not frameworks."""
    found: set[str] = set()
    for entry in imports:
        if not isinstance(entry, str):
            continue
        match = _IMPORT_RE.search(entry)
        module = match["name"] if match else entry.strip().split(".")[0]
        found.update(_lexicon_module(module, swift=swift))
    return sorted(found)


def imported_frameworks(text: str, *, swift: bool) -> list[str]:
    """Lexicon frameworks imported anywhere in text."""
    found: set[str] = set()
    if not text or "import" not in text:
        return []
    for match in _IMPORT_RE.finditer(text):
        found.update(_lexicon_module(match["name"], swift=swift))
    return sorted(found)


def _lexicon_module(module: str, *, swift: bool) -> list[str]:
    if module not in LEXICON or (module == "os" and not swift):
        return []
    return [module]


def framework_mentions(text: str) -> list[str]:
    """Frameworks a text mentions, by the rules in the module docstring; sorted, unique."""
    if not text:
        return []
    words: set[str] = set()
    found: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        word = match[1]
        words.add(word)
        in_path = match.start() > 0 and text[match.start() - 1] == "/"
        if match[2] and word in _COMMON_SET and not in_path:
            found.add(word)
    found.update(words & _DISTINCTIVE_SET)
    found.update(
        ALIASES[alias]
        for alias, (parts, pattern) in _ALIAS_RES.items()
        if parts <= words and pattern.search(text)
    )
    found.update(_qualified(text))
    found.update(imported_frameworks(text, swift=False))
    return sorted(found)


def _qualified(text: str) -> set[str]:
    """Names followed by "framework(s)"."""
    found = set()
    for match in _FRAMEWORK_WORD.finditer(text):
        before = _QUALIFIER.search(text, max(0, match.start() - _QUALIFIER_CHARS), match.start())
        if before:
            found.add(_CANONICAL[_normal(before["name"])])
    return found


def _normal(name: str) -> str:
    return re.sub(r"\s+", " ", name).lower()
