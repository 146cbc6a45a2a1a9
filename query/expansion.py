"""Query expansion: 3-5 search variants of a question, the original first.

With an LLM (an OpenAI-compatible chat endpoint), the model is asked for a JSON list of
rewrites; replies are parsed tolerantly (fenced ```json blocks, an object holding the list,
prose around the JSON, a numbered or bulleted list). Anything else — no LLM, an LLM that is
down, slow or answers garbage — falls back to deterministic expansion, built from:

* identifier splitting: `NavigationStack` → "navigation stack", `fetch_all` → "fetch all"
  (embeddings of the spelled-out words match prose better than the identifier does);
* framework vocabulary: a framework named or implied by the question (by name, alias, or one
  of its API symbols) brings its central API names (`SwiftData` ↔ `@Model`, `ModelContext`,
  `ModelContainer`), so prose questions meet the code that answers them;
* pseudo-relevance feedback: the terms most shared by the top BM25 hits of the original
  question (`feedback_texts`), minus stopwords and terms the question already has.

`Expansion.method` says what ran: "llm", "llm+deterministic" (too few rewrites, topped up),
"deterministic", or "deterministic (llm failed: REASON)". A configured LLM that failed is
reported as a "degraded: " note, since something meant to run did not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chunkers.tagging.frameworks import ALIASES, LEXICON, canonical_framework, framework_mentions
from core.store.analyzer import STOPWORDS as BM25_STOPWORDS
from core.store.analyzer import analyze
from query.llm import LLMUnavailable, describe_llm, json_values

MIN_VARIANTS = 3
MAX_VARIANT_CHARS = 300  # a longer "rewrite" is an answer or an essay, not a search query
FEEDBACK_TERMS = 4
VOCABULARY_TERMS = 3
DEGRADED = "degraded: "  # the prefix query.retrieve.DEGRADED gives notes that --strict counts

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
# Their words alone ("Core" of "Core Data") are fragments, never feedback terms.
_ALIAS_WORDS = frozenset(word for alias in _ALIASES_LOWER for word in alias.split())

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

# English function words and question filler: terms that never make a search better.
# The BM25 analyzer's list is short on purpose (it keeps "get", "new", ...); this one is for
# choosing terms to add, where a wrong pick costs more than a missed one.
STOPWORDS = BM25_STOPWORDS | frozenset(
    {
        "able", "about", "above", "after", "again", "against", "all", "also", "am", "any",
        "anything", "because", "been", "before", "being", "below", "best", "between", "both",
        "can", "cannot", "correct", "correctly", "could", "did", "doing", "down", "during", "e.g",
        "each", "else", "etc", "even", "ever", "every", "example", "examples", "few", "for",
        "from", "further", "get", "gets", "getting", "go", "going", "good", "got", "had", "has",
        "have", "having", "her", "here", "hers", "herself", "him", "himself", "his", "however",
        "i.e", "if", "in", "instead", "into", "itself", "just", "know", "least", "let", "lets",
        "like", "made", "make", "makes", "many", "may", "might", "more", "most", "much", "must",
        "myself", "need", "needs", "new", "no", "nor", "not", "now", "off", "once", "one", "only",
        "onto", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "per",
        "possible", "rather", "right", "same", "see", "seen", "shall", "she", "should", "show",
        "some", "something", "still", "such", "tell", "than", "thats", "theirs", "themselves",
        "there", "they", "thing", "things", "this", "through", "thus", "too", "tried", "try",
        "trying", "under", "until", "upon", "use", "used", "uses", "using", "very", "via", "want",
        "wants", "way", "ways", "we", "well", "were", "whether", "while", "whom", "whose",
        "within", "without", "work", "working", "works", "would", "yet", "yours", "yourself",
        "yourselves",
    }
)  # fmt: skip

# Words every code chunk is full of (keywords, common type and doc words): fine in a
# question, never worth adding to one as a feedback term.
CODE_NOISE = frozenset(
    {
        "any", "as", "async", "await", "bool", "case", "class", "def", "default", "double", "else",
        "enum", "extension", "false", "final", "float", "func", "function", "guard", "import",
        "init", "instance", "int", "internal", "lambda", "let", "method", "nil", "none", "object",
        "override", "parameter", "parameters", "pass", "private", "property", "protocol", "public",
        "return", "returns", "self", "some", "static", "string", "struct", "switch", "throws",
        "true", "try", "type", "value", "values", "var", "void", "where", "with", "yield",
        "app", "apps", "code", "data", "file", "files", "item", "items", "list", "name",
        "names", "text", "user", "users",
    }
)  # fmt: skip

TOKEN = re.compile(r"[@#]?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_LIST_LINE = re.compile(r"^[ \t]*(?:\d{1,2}[.):]|[-*•+])[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_LIST_KEYS = ("queries", "rewrites", "variants", "expansions", "alternatives", "search_queries")
_ITEM_KEYS = ("query", "text", "rewrite", "q", "variant")


@dataclass
class Expansion:
    variants: list[str]
    method: str
    notes: list[str] = field(default_factory=list)


def expand_query(
    query: str,
    *,
    llm: Any | None,
    domain: str | None = None,
    frameworks: Sequence[str] = (),
    feedback_texts: Sequence[str] = (),
    max_variants: int = 5,
    deterministic: bool = True,
) -> Expansion:
    """Search variants of `query` (the original first, at most `max_variants`). Without an
    LLM, the deterministic variants only when `deterministic` (RAG_DETERMINISTIC_EXPANSION)."""
    query = " ".join(query.split())
    limit = max(1, max_variants)
    if limit == 1:
        return Expansion([query], "none", ["max_variants=1: the original query only"])

    def fallback() -> tuple[list[str], list[str]]:
        return deterministic_variants(
            query, domain=domain, frameworks=frameworks, feedback_texts=feedback_texts,
            limit=limit,
        )  # fmt: skip

    if llm is None and not deterministic:
        return Expansion([query], "none", [DETERMINISTIC_OFF])
    if llm is None:
        variants, parts = fallback()
        notes = ["no LLM configured (OPENCLAW_LLM_ENDPOINT unset); " + _describe(parts)]
        return Expansion(variants, "deterministic", notes)
    try:
        reply = llm.complete(rewrite_messages(query, domain, frameworks, limit - 1))
        rewrites = parse_rewrites(reply)
        if not rewrites:
            raise LLMUnavailable(f"reply held no rewrites: {_excerpt(reply)!r}")
    except Exception as exc:  # the LLM is optional: any failure means deterministic
        reason = str(exc) if isinstance(exc, LLMUnavailable) else f"{type(exc).__name__}: {exc}"
        variants, parts = fallback()
        note = f"{DEGRADED}query expansion LLM {describe_llm(llm)} failed ({reason}); "
        method = f"deterministic (llm failed: {reason})"
        return Expansion(variants, method, [note + _describe(parts)])
    variants = add_variants([query], rewrites)[:limit]
    if len(variants) >= min(MIN_VARIANTS, limit):
        return Expansion(variants, "llm", [f"query expanded by LLM {describe_llm(llm)}"])
    extra, parts = fallback()
    variants = add_variants(variants, extra[1:])[:limit]
    topped = ", ".join(parts) or "nothing"
    note = f"LLM {describe_llm(llm)} gave {len(rewrites)} rewrite(s); topped up with {topped}"
    return Expansion(variants, "llm+deterministic", [note])


# Measured on the dev sets (README, *Evaluation*): even routed to the keyword leg at a
# quarter of the original's weight, the deterministic variants cost code search 0.013 nDCG@10
# (CoSQA) for +0.005 on SciFact and +0.003 on HotpotQA, so they are not the default.
DETERMINISTIC_OFF = (
    "no LLM configured (OPENCLAW_LLM_ENDPOINT unset): the original query only "
    "(RAG_DETERMINISTIC_EXPANSION=true adds keyword and feedback variants)"
)


def _describe(parts: list[str]) -> str:
    if not parts:
        return "deterministic expansion found nothing to add"
    return "deterministic expansion: " + ", ".join(parts)


def _excerpt(text: Any, n: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


# The LLM path


def rewrite_messages(
    query: str, domain: str | None, frameworks: Sequence[str], n: int
) -> list[dict[str, str]]:
    context = []
    if domain:
        context.append(f"Domain: {domain}")
    if frameworks:
        context.append(f"Frameworks: {', '.join(frameworks)}")
    return [
        {
            "role": "system",
            "content": (
                "You rewrite search queries for a hybrid keyword and embedding search over "
                "developer documentation and source code. Reply with only a JSON array of "
                "strings, no explanation."
            ),
        },
        {
            "role": "user",
            "content": (
                f"Write {max(1, n)} different search queries that would find the documents "
                "answering the question below. Use the exact API, type and framework names "
                "such documents contain; include one keyword-only query and one rephrasing. "
                "Do not answer the question.\n"
                + "".join(line + "\n" for line in context)
                + f"Question: {query}"
            ),
        },
    ]


def parse_rewrites(reply: Any) -> list[str]:
    """Rewrites from a model reply: the first JSON list of strings found (bare, fenced,
    inside an object, or inside prose), else the items of a numbered or bulleted list;
    [] when there are none. Cleaned, deduplicated, over-long items dropped."""
    if not isinstance(reply, str):
        return []
    for value in json_values(reply):
        found = _strings_in(value)
        if found:
            return unique_variants(found)
    return unique_variants([m[1] for m in _LIST_LINE.finditer(reply)])


def _strings_in(value: Any, depth: int = 0) -> list[str]:
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                out.extend(v for k in _ITEM_KEYS if isinstance(v := item.get(k), str))
        return out
    if isinstance(value, dict) and depth < 2:
        keys = [k for k in _LIST_KEYS if k in value] + [k for k in value if k not in _LIST_KEYS]
        for key in keys:
            found = _strings_in(value[key], depth + 1)
            if found:
                return found
    return []


def clean_variant(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    text = " ".join(text.replace("**", "").split()).strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    if not text or len(text) > MAX_VARIANT_CHARS:
        return None
    return text


def unique_variants(texts: Iterable[Any]) -> list[str]:
    """Cleaned texts, first spelling kept for texts equal but for case and punctuation."""
    return add_variants([], texts)


def add_variants(variants: list[str], more: Iterable[Any]) -> list[str]:
    """`variants` as they are (the original query may be longer than any variant may be),
    then the cleaned texts of `more` that none of them equals."""
    out = {_variant_key(v): v for v in variants}
    for text in more:
        cleaned = clean_variant(text)
        key = _variant_key(cleaned) if cleaned else ""
        if key and cleaned:
            out.setdefault(key, cleaned)
    return list(out.values())


def _variant_key(text: str) -> str:
    return " ".join(re.findall(r"[@#\w.]+", text.casefold())).strip(".")


# The deterministic path


def deterministic_variants(
    query: str,
    *,
    domain: str | None = None,
    frameworks: Sequence[str] = (),
    feedback_texts: Sequence[str] = (),
    limit: int = 5,
) -> tuple[list[str], list[str]]:
    """(variants with the original first, names of the expansions that added one)."""
    core = content_words(query)
    keyword_form = " ".join(core)
    candidates: list[tuple[str, str]] = []

    split = split_identifiers(query)
    if split != query:
        candidates.append(("identifier splitting", split))

    named = frameworks_of(query, frameworks, domain)
    vocab = vocabulary_terms(query, named)
    if vocab:
        missing = [
            name for name in named if name.lower() not in {w.lower() for w in core}
        ]  # fmt: skip
        label = f"framework vocabulary ({', '.join(named)})"
        candidates.append((label, " ".join([*core, *missing, *vocab])))

    prf = feedback_terms(feedback_texts, exclude=query)
    if prf:
        label = f"feedback terms from {len(feedback_texts)} BM25 hit(s)"
        candidates.append((label, " ".join([*core, *prf])))

    if keyword_form and keyword_form.casefold() != query.casefold():
        # Last: it only narrows the original, so it is the weakest variant.
        candidates.append(("keyword form", keyword_form))

    variants = [query]
    parts = []
    for label, text in candidates:
        if len(variants) >= limit:
            break
        grown = add_variants(variants, [text])
        if len(grown) > len(variants):
            variants = grown
            parts.append(label)
    return variants, parts


def split_identifiers(text: str) -> str:
    """Code identifiers spelled out as lowercase words (`NavigationStack` → "navigation
    stack", `fetch_all` → "fetch all", `@Model` → "model"); framework names stay whole,
    since "cloud kit" is nobody's search."""

    def spell(match: re.Match[str]) -> str:
        token = match[0]
        if not is_identifier(token) or token in LEXICON:
            return token
        return " ".join(_parts(token))

    return TOKEN.sub(spell, text)


def is_identifier(token: str) -> bool:
    """A code identifier rather than a word: attributes/macros (`@Model`, `#expect`),
    dotted names, snake_case and camelCase (anything the analyzer splits into parts)."""
    if token[:1] in "@#" and len(token) > 1:
        return True
    if "." in token.strip("."):
        return True
    return len(analyze(token)) > 1


def _parts(token: str) -> list[str]:
    """The lowercase word parts of an identifier, in order."""
    out: list[str] = []
    for piece in re.split(r"[.@#]", token):
        if not piece:
            continue
        tokens = analyze(piece)
        out.extend(tokens[1:] if len(tokens) > 1 else tokens)
    return out


def content_words(text: str) -> list[str]:
    """The words of a question that carry meaning, in order, as written (identifiers whole),
    without stopwords or repeats."""
    out: dict[str, str] = {}
    for match in TOKEN.finditer(text):
        token = match[0].rstrip(".")
        if token.lower() in STOPWORDS or (len(token) < 2 and not token.isupper()):
            continue
        out.setdefault(token.lower(), token)
    return list(out.values())


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


def feedback_terms(
    texts: Sequence[str], *, exclude: str = "", n: int = FEEDBACK_TERMS
) -> list[str]:
    """The terms that best characterise the top hits: those found in most of them (document
    frequency across the feedback set), then by total frequency, code identifiers ahead of
    plain words at a tie. Stopwords, numbers, short tokens and anything the excluded text
    (the question) already contains are never picked. With several hits a term must occur in
    at least two, so one document's peculiarities do not steer the search."""
    docs = [t for t in texts if isinstance(t, str) and t.strip()]
    if not docs:
        return []
    excluded = set(analyze(exclude)) | {t.lower() for t in TOKEN.findall(exclude)}
    excluded |= {stem(t) for t in excluded} | _ALIAS_WORDS
    df: Counter[str] = Counter()
    tf: Counter[str] = Counter()
    spelling: dict[str, Counter[str]] = {}
    for doc in docs:
        seen = set()
        for match in TOKEN.finditer(doc):
            token = match[0].strip(".")
            key = token.lower()
            if not _feedback_candidate(token, key, excluded):
                continue
            tf[key] += 1
            spelling.setdefault(key, Counter())[token] += 1
            seen.add(key)
        df.update(seen)
    min_df = 2 if len(docs) >= 2 else 1

    def rank(key: str) -> tuple[int, float, str]:
        written = spelling[key].most_common(1)[0][0]
        code_bonus = 0.5 if is_identifier(written) else 0.0
        return (-df[key], -(math.log1p(tf[key]) + code_bonus), key)

    ranked = sorted((key for key in df if df[key] >= min_df), key=rank)
    return [spelling[key].most_common(1)[0][0] for key in ranked[:n]]


def stem(word: str) -> str:
    """A crude English stem, enough to match "models" with "model", "syncing" with "sync"."""
    word = word.lower()
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("es", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


def _feedback_candidate(token: str, key: str, excluded: set[str]) -> bool:
    if len(key) < 3 or len(key) > 40 or key in STOPWORDS or key in CODE_NOISE:
        return False
    if key in excluded or stem(key) in excluded:
        return False
    parts = analyze(token)
    # An identifier whose words are all in the question adds nothing new.
    return not (len(parts) > 1 and set(parts[1:]) <= excluded)
