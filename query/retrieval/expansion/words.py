"""Words of questions and documents: tokens, stopwords, code identifiers spelled out as
words, crude stems. Shared by the deterministic expansions and CoRAG."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from core.frameworks import LEXICON
from core.store.analyzer import STOPWORDS as BM25_STOPWORDS
from core.store.analyzer import analyze

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

TOKEN = re.compile(r"[@#]?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


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


def stem(word: str) -> str:
    """A crude English stem, enough to match "models" with "model", "syncing" with "sync"."""
    word = word.lower()
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("es", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


def named_identifiers(text: str) -> list[str]:
    """The code identifiers a query names (`TripStore`, `fetch_user`, `URLSession.shared`),
    without `@`/`#`, in order, once each."""
    found = (t.lstrip("@#") for t in TOKEN.findall(text) if is_identifier(t))
    return list(dict.fromkeys(t for t in found if t))


MIN_DOTTED_PART = 2  # `Promise.resolve` is a member; "e.g" and "i.e" are not


def code_shaped(token: str) -> bool:
    """An identifier by its spelling alone: an attribute or macro (`@Model`, `#expect`), a
    dotted name whose parts are words (`Promise.resolve`, `URLSession.shared`), snake_case
    (`fetch_user`, `__init__`). camelCase is not enough: "JavaScript", "SwiftUI" and "iOS"
    are spelled so in prose."""
    if token[:1] in "@#" and len(token) > 1:
        return True
    parts = token.split(".")
    if len(parts) > 1 and all(len(p) >= MIN_DOTTED_PART for p in parts):
        return True
    return "_" in token.strip("_") or (token.startswith("_") and len(token) > 1)


def identifier_mentions(text: str) -> list[tuple[str, bool]]:
    """Each identifier-like token of a question once, in order, without `@`/`#`, with whether
    its shape alone makes it code (`code_shaped`, called with `(`, next to `::`); the rest
    are camelCase words, identifiers only where an index declares them. A Markdown code
    span proves nothing: the Swift docs' questions quote keywords (`some View`, `if let`),
    and the floor on them cost 0.005 nDCG@10 there."""
    found: dict[str, bool] = {}
    for match in TOKEN.finditer(text):
        token, start, end = match[0], match.start(), match.end()
        marked = (
            code_shaped(token)
            or text[end : end + 1] == "("
            or "::" in (text[max(start - 2, 0) : start], text[end : end + 2])
        )
        if marked or is_identifier(token):
            name = token.lstrip("@#")
            if name:
                found[name] = found.get(name, False) or marked
    return list(found.items())


def declared_identifiers(
    text: str, declared: Callable[[Sequence[str]], Collection[str]]
) -> list[str]:
    """The identifiers a question names, in order, once each: the code-shaped ones
    (`identifier_mentions`), and the camelCase words that `declared` (one batched lookup of
    the searched indexes' declarations) finds declared: `RCTBridge` where a header declares
    it, never "JavaScript" in an index that declares no such name."""
    mentions = identifier_mentions(text)
    words = [name for name, shaped in mentions if not shaped]
    known = set(declared(words)) if words else set()
    return [name for name, shaped in mentions if shaped or name in known]
