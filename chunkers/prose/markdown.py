"""Markdown and DocC articles → section pieces.

Blocks of one section (same heading path) are packed up to `cfg.target_tokens`; sections are
not merged, so every piece has one heading context, except tiny ones (a line or two), which
join their neighbours under the headings they share (`_merge_small`). A text block over the target is split
into sentences, a code block stays whole up to `cfg.max_tokens` and is otherwise cut into
fenced line windows (`markdown_code`). When a section continues in a new piece, the new
piece opens with the last sentences (up to `cfg.overlap_tokens`) of the previous one.

Tokens are counted once per block (and per sentence of split blocks) and summed; only pieces
whose sum comes near the hard limit are recounted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.packing import pack, pack_by
from chunkers.prose.front_matter import split_front_matter
from chunkers.prose.markdown_code import code_windows
from chunkers.prose.markdown_scan import Block, Section, scan
from chunkers.prose.sentences import Span, cut_at_words, split_sentences
from chunkers.spans import enforce_max

CONTEXT_SEPARATOR = " › "
# A piece under 1/25 of the target (16 tokens by default) is a heading's line or two; a real
# section, even a short one, says more and keeps its own chunk.
TINY_FRACTION = 25
_OVERLAP_CANDIDATES = 8  # trailing sentences counted when looking for overlap
# Prose averages 4-5 characters per token; a text block with 10 per token of the target is
# over the target for any realistic text.
_CHARS_PER_TOKEN_CEILING = 10


@dataclass
class _Unit:
    """A span of one block that is packed as a whole."""

    block: Block
    start: int
    end: int
    tokens: int
    sentence: bool = False  # a single sentence (or part of one): may repeat as overlap
    alone: bool = False  # a window of an oversize code block: always a piece by itself


def chunk_markdown(text: str, cfg: ChunkConfig, *, title: str | None = None) -> list[Piece]:
    """Section pieces of a markdown/DocC document; see the module docstring.

    Context is `Title › Section › Subsection` (the first H1, else `title`); line numbers
    refer to `text` as given, front matter included."""
    front, body, offset = split_front_matter(text)
    sections, h1 = scan(body.splitlines(), first_line=offset + 1)
    doc_title = h1 or title
    counts = _block_tokens([b for s in sections for b in s.blocks], cfg)
    drafts: list[_Draft] = []
    for section in sections:
        for group in _pack(_units(section, counts, cfg), cfg):
            content, first, last = _render(group)
            drafts.append(
                _Draft(list(section.path), content, first, last, sum(u.tokens for u in group))
            )
    pieces: list[Piece] = []
    estimates: list[int] = []
    for draft in _merge_small(drafts, cfg):
        context = CONTEXT_SEPARATOR.join(_context_parts(draft.path, doc_title))
        metadata: dict[str, Any] = {"headings": [t for _, t in draft.path]}
        if front:
            metadata["front_matter"] = front
        pieces.append(
            Piece(
                draft.content, context, draft.first, draft.last, kind="section", metadata=metadata
            )
        )
        estimates.append(draft.tokens)
    return enforce_max(pieces, estimates, cfg)


@dataclass
class _Draft:
    """A piece before its context is rendered: the heading path it sits under."""

    path: list[tuple[int, str]]
    content: str
    first: int
    last: int
    tokens: int


def _merge_small(drafts: list[_Draft], cfg: ChunkConfig) -> list[_Draft]:
    """Join runs of consecutive tiny pieces (a line or two: under 1/25 of the target, 16
    tokens by default) into pieces up to the target. A page of a hundred thousand one-line
    sections would otherwise become a hundred thousand chunks of a few tokens: too small to
    mean anything to a reader or a model, and each costs an embedding. A tiny section
    between real ones (a DocC Topics list) keeps its own piece and heading context. The
    joined piece sits under the headings its parts share; the others move into its text."""
    small = max(cfg.target_tokens // TINY_FRACTION, 1)

    # A run: the draft so far, and whether it is made of tiny drafts and so may take more.
    def start(draft: _Draft) -> tuple[_Draft, bool]:
        return draft, draft.tokens < small

    def grow(run: tuple[_Draft, bool], draft: _Draft) -> tuple[_Draft, bool] | None:
        so_far, open_run = run
        if not (open_run and draft.tokens < small):
            return None
        joined = _join(so_far, draft)
        return (joined, True) if joined.tokens <= cfg.target_tokens else None

    return [draft for draft, _ in pack_by(drafts, start, grow)]


def _join(a: _Draft, b: _Draft) -> _Draft:
    shared = 0
    while shared < min(len(a.path), len(b.path)) and a.path[shared] == b.path[shared]:
        shared += 1
    parts, tokens = [], a.tokens + b.tokens
    for draft in (a, b):
        headings = "\n".join("#" * level + " " + text for level, text in draft.path[shared:])
        # Headings are short: two characters per token overestimates them, and enforce_max
        # recounts any piece whose estimate comes near the hard limit.
        tokens += len(headings) // 2 + (1 if headings else 0)
        parts.append(f"{headings}\n\n{draft.content}" if headings else draft.content)
    return _Draft(a.path[:shared], "\n\n".join(parts), a.first, b.last, tokens)


def _context_parts(path: list[tuple[int, str]], doc_title: str | None) -> list[str]:
    texts = [t for _, t in path]
    if (path and path[0][0] == 1) or not doc_title:
        return texts
    return [doc_title, *texts]


def _block_tokens(blocks: list[Block], cfg: ChunkConfig) -> dict[int, int | None]:
    """Token count of each block by id. Text far longer than the target in characters will be
    split into sentences and counted per sentence anyway, so it is not counted whole (None)."""
    sure_split = _CHARS_PER_TOKEN_CEILING * cfg.target_tokens
    counted = [b for b in blocks if b.kind == "code" or len(b.text) <= sure_split]
    counts: dict[int, int | None] = {id(b): None for b in blocks}
    tokens = cfg.counter.count_many([b.text for b in counted])
    counts.update(zip(map(id, counted), tokens, strict=True))
    return counts


def _units(section: Section, counts: dict[int, int | None], cfg: ChunkConfig) -> list[_Unit]:
    units: list[_Unit] = []
    for block in section.blocks:
        n = counts[id(block)]
        if n is None:
            units += _sentence_units(block, cfg)
        elif block.kind == "code" and n > cfg.max_tokens:
            units += [
                _Unit(w.block, 0, len(w.block.text), w.tokens, alone=True)
                for w in code_windows(block, cfg)
            ]
        elif block.kind == "code" or n <= cfg.target_tokens:
            units.append(_Unit(block, 0, len(block.text), n))
        else:
            units += _sentence_units(block, cfg)
    return units


def _sentence_units(block: Block, cfg: ChunkConfig, spans: list[Span] | None = None) -> list[_Unit]:
    """Sentences of a text block; a sentence over the hard limit is cut at words."""
    text = block.text
    spans = split_sentences(text) if spans is None else spans
    counts = cfg.counter.count_many([text[a:b] for a, b in spans])
    units: list[_Unit] = []
    for (a, b), n in zip(spans, counts, strict=True):
        if n <= cfg.max_tokens:
            units.append(_Unit(block, a, b, n, sentence=True))
            continue
        parts = cut_at_words(text, (a, b), cfg, cfg.target_tokens)
        part_counts = cfg.counter.count_many([text[p:q] for p, q in parts])
        units += [
            _Unit(block, p, q, k, sentence=True)
            for (p, q), k in zip(parts, part_counts, strict=True)
        ]
    return units


def _pack(units: list[_Unit], cfg: ChunkConfig) -> list[list[_Unit]]:
    """Greedy groups of consecutive units up to the target; see the module docstring."""

    def carry(group: list[_Unit], following: _Unit) -> list[_Unit]:
        # The overlap must leave room for the unit, or the piece would hold only repeats.
        return _overlap(group, cfg, min(cfg.overlap_tokens, cfg.target_tokens - following.tokens))

    return pack(units, _tokens, cfg.target_tokens, alone=_alone, carry=carry)


def _tokens(unit: _Unit) -> int:
    return unit.tokens


def _alone(unit: _Unit) -> bool:
    return unit.alone


def _overlap(group: list[_Unit], cfg: ChunkConfig, budget: int) -> list[_Unit]:
    """The trailing sentences of `group` that fit in `budget` tokens (none after code)."""
    taken: list[_Unit] = []
    total = 0
    for unit in reversed(group):
        if budget <= 0 or unit.block.kind == "code":
            break
        sentences = [unit] if unit.sentence else _tail_sentences(unit, cfg)
        for s in reversed(sentences):
            if total + s.tokens > budget:
                return taken[::-1]
            taken.append(s)
            total += s.tokens
        if not unit.sentence:
            break  # overlap comes from the last paragraph only
    return taken[::-1]


def _tail_sentences(unit: _Unit, cfg: ChunkConfig) -> list[_Unit]:
    spans = [
        (a + unit.start, b + unit.start)
        for a, b in split_sentences(unit.block.text[unit.start : unit.end])
    ]
    return _sentence_units(unit.block, cfg, spans[-_OVERLAP_CANDIDATES:])


def _render(group: list[_Unit]) -> tuple[str, int, int]:
    """Content of a group: consecutive units of one block as the original span of that block,
    blocks separated by a blank line. With the first and last original line numbers."""
    runs: list[list[_Unit]] = []
    for unit in group:
        if runs and runs[-1][-1].block is unit.block and runs[-1][-1].end <= unit.start:
            runs[-1].append(unit)
        else:
            runs.append([unit])
    content = "\n\n".join(r[0].block.text[r[0].start : r[-1].end] for r in runs)
    first = group[0].block.line_at(group[0].start)
    last = group[-1].block.line_at(max(group[-1].end - 1, group[-1].start))
    return content, first, last
