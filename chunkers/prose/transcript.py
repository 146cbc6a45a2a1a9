"""Unstructured prose (talk transcripts) → topic pieces of whole sentences.

Every sentence gap gets a similarity of the text on either side: by default lexical cohesion
as TextTiling measures it (the cosine of the content-word counts of `LEXICAL_WINDOW`
sentences on each side, smoothed over neighbouring gaps), which needs no model, so a corpus
of talks is searchable by keyword before any embedding; with `cfg.sentence_embedder`, the
cosine of embedded windows of `WINDOW` sentences (kept to measure one against the other:
docs/evaluation.md, *Transcripts cut by lexical cohesion*). A gap whose similarity is a local minimum below the
`PERCENTILE`-th percentile of all gaps is a topic shift. Shifts are taken deepest first,
each only if the pieces on both sides keep at least `target_tokens // 4` tokens; a piece
still over the target is cut at its least similar gaps.

Pieces do not overlap: topic boundaries are the point. `metadata["boundary"]` says how the
piece's end was chosen ("semantic": a topic shift, "size": the size limit); the last piece,
which ends with the text, reports how its start was chosen.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from chunkers.config import ChunkConfig, SentenceEmbedder
from chunkers.model import Piece
from chunkers.packing import pack_counts
from chunkers.prose.sentences import Span, cut_at_words, split_sentences
from chunkers.spans import LineIndex, enforce_max

WINDOW = 3
LEXICAL_WINDOW = 6
_WORD = re.compile(r"[A-Za-z][A-Za-z']+")
# Words every talk uses whatever its topic: their counts say nothing about a shift.
_STOPWORDS = frozenset(
    [
        "the",
        "and",
        "that",
        "this",
        "with",
        "you",
        "your",
        "for",
        "are",
        "was",
        "were",
        "have",
        "has",
        "had",
        "not",
        "but",
        "can",
        "will",
        "just",
        "what",
        "when",
        "where",
        "which",
        "who",
        "how",
        "all",
        "any",
        "some",
        "more",
        "most",
        "also",
        "into",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "here",
        "our",
        "out",
        "its",
        "it's",
        "about",
        "from",
        "over",
        "very",
        "really",
        "going",
        "gonna",
        "get",
        "got",
        "let",
        "let's",
        "we'll",
        "we're",
        "you're",
        "i'm",
        "don't",
        "can't",
        "now",
        "one",
        "two",
        "see",
        "look",
        "like",
        "make",
        "want",
        "need",
        "use",
        "using",
        "know",
        "think",
        "thing",
        "things",
        "way",
        "right",
        "okay",
        "well",
        "yeah",
        "actually",
        "basically",
        "lot",
        "little",
        "new",
        "these",
        "those",
        "been",
        "being",
        "would",
        "could",
        "should",
        "because",
        "while",
        "each",
        "other",
        "only",
        "even",
        "much",
        "many",
        "same",
        "such",
        "own",
        "again",
        "off",
        "today",
        "talk",
        "show",
        "session",
    ]
)
PERCENTILE = 25
RUN_ON_TOKENS = 100  # a "sentence" longer than this is run-on text: cut it at words

Cut = tuple[int, str]  # (index after the last sentence of a piece, reason)


def chunk_transcript(text: str, cfg: ChunkConfig) -> list[Piece]:
    """Topic pieces of `text`, in order, covering every sentence exactly once."""
    limit = min(cfg.target_tokens, cfg.max_tokens)
    spans, counts = _sentences(text, cfg, min(limit, RUN_ON_TOKENS))
    if not spans:
        return []
    embedder = cfg.sentence_embedder
    if len(spans) < 2:
        cuts = _size_cuts(counts, limit)
    elif embedder is not None:
        cuts = _semantic_cuts(counts, _gap_similarities(text, spans, embedder), limit)
    else:
        cuts = _semantic_cuts(counts, lexical_similarities(text, spans), limit)
    return enforce_max(*_pieces(text, spans, counts, cuts, len(spans) > 1), cfg)


def _sentences(text: str, cfg: ChunkConfig, unit: int) -> tuple[list[Span], list[int]]:
    spans = split_sentences(text)
    counts = cfg.counter.count_many([text[a:b] for a, b in spans])
    if all(n <= unit for n in counts):
        return spans, counts
    out_spans: list[Span] = []
    out_counts: list[int] = []
    for span, n in zip(spans, counts, strict=True):
        if n <= unit:
            out_spans.append(span)
            out_counts.append(n)
            continue
        # Even parts: a 101-token run-on becomes two halves, not 100 + 1.
        size = math.ceil(n / math.ceil(n / unit))
        parts = cut_at_words(text, span, cfg, size)
        out_spans += parts
        out_counts += cfg.counter.count_many([text[a:b] for a, b in parts])
    return out_spans, out_counts


def _gap_similarities(text: str, spans: list[Span], embed: SentenceEmbedder) -> np.ndarray:
    """Cosine similarity across each gap g (after sentence g) of the windows either side."""
    n = len(spans)
    keys: dict[tuple[int, int], int] = {}
    pairs = []
    for g in range(n - 1):
        left, right = (max(0, g - WINDOW + 1), g + 1), (g + 1, min(n, g + 1 + WINDOW))
        pairs.append((keys.setdefault(left, len(keys)), keys.setdefault(right, len(keys))))
    texts = [text[spans[a][0] : spans[b - 1][1]] for a, b in keys]
    vectors = np.asarray(embed(texts), dtype=np.float64)
    # Rows should be unit vectors already; normalising again costs little and forgives.
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    left_idx, right_idx = (np.array(side) for side in zip(*pairs, strict=True))
    return np.einsum("ij,ij->i", vectors[left_idx], vectors[right_idx])


def lexical_similarities(text: str, spans: list[Span]) -> np.ndarray:
    """TextTiling's lexical cohesion across each gap g (after sentence g): the cosine of the
    content-word counts of the LEXICAL_WINDOW sentences either side, averaged with the gaps
    next to it (a single gap's words are too few to trust)."""
    ids: dict[str, int] = {}
    rows: list[list[int]] = []
    for a, b in spans:
        rows.append([ids.setdefault(w, len(ids)) for w in _content_words(text[a:b])])
    n = len(spans)
    counts = np.zeros((n + 1, max(1, len(ids))), dtype=np.float32)
    for i, row in enumerate(rows):
        np.add.at(counts[i + 1], row, 1.0)
    prefix = np.cumsum(counts, axis=0)  # prefix[i]: the counts of sentences before i
    gaps = np.arange(1, n)  # a gap before sentence g + 1
    left = prefix[gaps] - prefix[np.maximum(0, gaps - LEXICAL_WINDOW)]
    right = prefix[np.minimum(n, gaps + LEXICAL_WINDOW)] - prefix[gaps]
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    sims = np.einsum("ij,ij->i", left, right) / np.maximum(norms, 1e-12)
    if len(sims) >= 3:
        padded = np.concatenate(([sims[0]], sims, [sims[-1]]))
        sims = (padded[:-2] + padded[1:-1] + padded[2:]) / 3
    return sims.astype(np.float64)


def _content_words(sentence: str) -> list[str]:
    """Lowercased words of three letters or more, not function words, a plural's `s` off."""
    words = (w.lower() for w in _WORD.findall(sentence))
    return [w[:-1] if w.endswith("s") and len(w) > 4 else w for w in words
            if len(w) > 2 and w not in _STOPWORDS]  # fmt: skip


def _topic_shifts(sims: np.ndarray) -> np.ndarray:
    """Gaps that are local minima of similarity below the percentile threshold."""
    threshold = np.percentile(sims, PERCENTILE)
    padded = np.concatenate(([np.inf], sims, [np.inf]))
    local_min = (sims <= padded[:-2]) & (sims <= padded[2:])
    return local_min & (sims <= threshold)


def _semantic_cuts(counts: Sequence[int], sims: np.ndarray, target: int) -> list[Cut]:
    """Accept topic shifts deepest first while both neighbouring pieces keep `min_tokens`,
    then cut pieces still over the target at their least similar gaps."""
    n = len(counts)
    min_tokens = max(1, target // 4)
    prefix = np.concatenate(([0], np.cumsum(counts)))  # tokens of sentences before i
    shifts = np.flatnonzero(_topic_shifts(sims))
    bounds = [0, n]
    for gap in shifts[np.argsort(sims[shifts], kind="stable")]:
        cut = int(gap) + 1
        k = bisect_right(bounds, cut)
        lo, hi = bounds[k - 1], bounds[k]
        if prefix[cut] - prefix[lo] >= min_tokens and prefix[hi] - prefix[cut] >= min_tokens:
            bounds.insert(k, cut)
    cuts: list[Cut] = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        cuts += _fit_segment(lo, hi, counts, prefix, sims, (min_tokens, target))
        cuts.append((hi, "semantic" if hi < n else ""))
    return cuts


def _fit_segment(
    lo: int,
    hi: int,
    counts: Sequence[int],
    prefix: np.ndarray,
    sims: np.ndarray,
    size: tuple[int, int],
) -> list[Cut]:
    """Size cuts inside sentences [lo, hi): each piece ends at the least similar gap among
    those that keep it between the minimum and the target size."""
    min_tokens, target = size
    cuts: list[Cut] = []
    start = lo
    while prefix[hi] - prefix[start] > target:
        tokens, gaps = 0, []
        for j in range(start, hi):
            if j > start and tokens + counts[j] > target:
                break
            tokens += counts[j]
            if tokens >= min_tokens:
                gaps.append(j)
        best = min(gaps, key=lambda g: sims[g]) if gaps else j - 1
        cuts.append((best + 1, "size"))
        start = best + 1
    return cuts


def _size_cuts(counts: Sequence[int], target: int) -> list[Cut]:
    groups = pack_counts(counts, target)
    return [(last + 1, "size") for _, last in groups[:-1]] + [(len(counts), "")]


def _pieces(
    text: str, spans: list[Span], counts: list[int], cuts: list[Cut], semantic: bool
) -> tuple[list[Piece], list[int]]:
    lines = LineIndex(text)
    pieces: list[Piece] = []
    estimates: list[int] = []
    start, previous = 0, "semantic" if semantic else "size"
    for end, reason in cuts:
        a, b = spans[start][0], spans[end - 1][1]
        boundary = reason or previous
        pieces.append(
            Piece(
                text[a:b],
                start_line=lines.line(a),
                end_line=lines.line(b - 1),
                kind="topic",
                metadata={"boundary": boundary},
            )
        )
        estimates.append(sum(counts[start:end]))
        start, previous = end, boundary
    return pieces, estimates
