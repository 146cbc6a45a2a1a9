"""CoRAG: follow-up retrieval hops until the gathered context covers the question.

After the first retrieval, each hop decides whether the context suffices and, if not, which
follow-up query to search; the follow-up's new chunks (by candidate key) join the context.

* With an LLM: the model sees the question, the follow-ups asked so far and excerpts of the
  gathered chunks, and answers `{"sufficient": bool, "follow_up": str}` (parsed tolerantly:
  fenced, prose-wrapped, "yes"/"no" strings). A failing or unparsable LLM hands the rest of
  the loop to the deterministic judge, with a "degraded: " note.
* Without one: the aspects of the question — quoted strings, capitalised multi-word
  entities, code identifiers, other content words — that no gathered chunk's text mentions
  (the top chunks of the first retrieval and the new chunks of every hop) become the
  follow-up; an aspect already searched for is not searched again.

Before the loop, with or without an LLM, a bridge hop follows links (query.retrieval.links): the
documents whose titles the best first-round chunks mention, scored by the mentioning chunks'
fused scores. They take reserved places right below the first KEEP_FIRST chunks, rather
than below everything: a multi-hop question needs its second passage in the top ten. With an
LLM, each follow-up's best HOP_SLOTS chunks and the chunks they link to take the next
reserved places; the deterministic judge's follow-ups go below everything.
(HotpotQA-100: both supporting paragraphs in the top 10 for 0.78 of the questions without
the hop, 0.93 with it; docs/evaluation.md.)

The loop stops when the context is judged sufficient, when there is nothing left to ask,
when a follow-up repeats an earlier query, when a hop finds no new chunk, or after
`max_hops` hops. A hop is one follow-up retrieval; the notes say why the loop stopped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from query.retrieval.expansion.words import STOPWORDS, TOKEN, is_identifier, stem
from query.retrieval.llm import LLMUnavailable, describe_llm, json_values
from query.types import Candidate

DEGRADED = "degraded: "
KEEP_FIRST = 5  # first-round chunks that stay above every bridge
HOP_SLOTS = 2  # an LLM follow-up's best new chunks, placed below the bridges
COVERAGE_DOCS = 10  # chunks of the first retrieval that count as "retrieved" context
HOP_DOCS = 5  # new chunks per hop that join that context
CONTEXT_CHARS = 600  # per chunk shown to the LLM
CONTEXT_CHUNKS = 8
MAX_FOLLOW_UP_TERMS = 8

_QUOTED = re.compile(r"\"([^\"]{2,80})\"|“([^”]{2,80})”|`([^`]{2,80})`|'([^']{3,80})'")
# Two or more capitalised words in a row ("Grand Central Dispatch", "Core Data").
_ENTITY = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[ \t]+(?:(?:of|for|the)[ \t]+)?[A-Z][A-Za-z0-9]*)+")


@dataclass(frozen=True)
class Hop:
    query: str
    new_chunk_ids: list[str] = field(default_factory=list)
    reason: str = ""
    # For a bridge hop: each added chunk's title and the chunk that mentioned it.
    links: list[dict[str, str]] = field(default_factory=list)
    ms: float = 0.0


@dataclass(frozen=True)
class Bridge:
    """A chunk reached by a link: the name (title or declared identifier) a first-round chunk
    mentioned, and that chunk; or (`relation` "calls") a chunk calling `name`, which the
    first-round chunk declares."""

    candidate: Candidate
    name: str
    mentioned_by: str
    relation: str = "names"


Retrieve = Callable[[str], list[Candidate]]
Bridges = Callable[[Sequence[Candidate]], list[Bridge]]


def run_corag(
    question: str,
    retrieve: Retrieve,
    *,
    llm: Any | None,
    max_hops: int,
    first: Sequence[Candidate],
    bridges: Bridges | None = None,
) -> tuple[list[Candidate], list[Hop], list[str]]:
    """(the first candidates, bridges in their reserved places, then every hop's new ones;
    the hops; notes)."""
    gathered = list(first)
    seen = {c.key for c in gathered}
    hops: list[Hop] = []
    notes: list[str] = []
    slot = KEEP_FIRST  # where the next placed evidence goes
    if bridges is not None:
        gathered, hop = bridge_hop(gathered, bridges)
        if hop is not None:
            hops.append(hop)
            seen.update(c.key for c in gathered)
            slot += len(hop.new_chunk_ids)
    context = list(gathered[:COVERAGE_DOCS])
    asked = {_normal(question)}
    searched: set[str] = set()  # aspects the deterministic judge already searched for
    judge = "llm" if llm is not None else "deterministic"
    if llm is None:
        notes.append("CoRAG without an LLM: deterministic follow-ups from uncovered terms")

    stop = f"hop limit of {max_hops} reached"
    for _ in range(max(0, max_hops)):
        decision: tuple[bool, str, str] | None = None
        placed_by_llm = False
        if judge == "llm":
            try:
                decision = judge_with_llm(llm, question, context, [h.query for h in hops])
                placed_by_llm = True
            except Exception as exc:
                reason = str(exc) if isinstance(exc, LLMUnavailable) else repr(exc)
                notes.append(
                    f"{DEGRADED}CoRAG LLM {describe_llm(llm)} failed ({reason}); "
                    "deterministic follow-ups used"
                )
                judge = "deterministic"
        if decision is None:
            decision = judge_deterministically(question, context, searched)
        sufficient, follow_up, reason = decision
        if sufficient:
            stop = f"context judged sufficient ({judge}): {reason}"
            break
        if not follow_up:
            stop = f"no follow-up to ask ({judge}): {reason}"
            break
        if _normal(follow_up) in asked:
            stop = f"follow-up {follow_up!r} repeats an earlier query"
            break
        asked.add(_normal(follow_up))
        searched.update(_normal(a) for a in aspects(follow_up))
        started = time.perf_counter()
        found = retrieve(follow_up)
        new = [c for c in found if c.key not in seen]
        links: list[dict[str, str]] = []
        if placed_by_llm and new:
            # The model asked for this evidence: its best chunks, and the chunks they link
            # to, take reserved places. A deterministic follow-up is a guess, so its chunks
            # go below everything (placing them by rank cost HotpotQA-100 nDCG@10).
            best = new[:HOP_SLOTS]
            linked = [b for b in (bridges(best) if bridges else []) if b.candidate.key not in seen]
            gathered, placed = place(gathered, [*best, *_mark(linked)], slot)
            slot += len(placed)
            links = _link_trace(linked, placed)
            new = [*placed, *(c for c in new if c.key not in {p.key for p in placed})]
            gathered.extend(c for c in new[len(placed) :])
        else:
            gathered.extend(new)
        seen.update(c.key for c in new)
        context.extend(new[:HOP_DOCS])
        ms = round((time.perf_counter() - started) * 1000, 2)
        hops.append(Hop(follow_up, [c.chunk_id for c in new], reason, links, ms))
        if not new:
            stop = f"follow-up {follow_up!r} found no new chunks"
            break
    notes.append(f"CoRAG stopped after {len(hops)} hop(s): {stop}")
    return gathered, hops, notes


def bridge_hop(first: list[Candidate], bridges: Bridges) -> tuple[list[Candidate], Hop | None]:
    """The first candidates with the linked chunks placed right below the top KEEP_FIRST."""
    started = time.perf_counter()
    found = bridges(first)
    merged, placed = place(first, _mark(found), KEEP_FIRST)
    if not placed:
        return first, None
    hop = Hop(
        query="links from the first results",
        new_chunk_ids=[c.chunk_id for c in placed],
        reason=f"{len(placed)} chunk(s) named by the top chunks (titles, declared identifiers)",
        links=_link_trace(found, placed),
        ms=round((time.perf_counter() - started) * 1000, 2),
    )
    return merged, hop


def place(
    ranked: list[Candidate], added: Sequence[Candidate], at: int
) -> tuple[list[Candidate], list[Candidate]]:
    """(`ranked` with `added` placed at position `at`, best first; the added ones that
    moved). A chunk already above `at` stays where it is; one found lower down moves up once.
    An added chunk's score is kept below the score of the chunk above it, so the list stays
    in score order."""
    head = ranked[:at]
    on_top = {c.key for c in head}
    moved = list({c.key: c for c in added if c.key not in on_top}.values())
    lifted = {c.key for c in moved}
    tail = [c for c in ranked[at:] if c.key not in lifted]
    ceiling = head[-1].score if head else 1.0
    for rank, cand in enumerate(moved, start=1):
        cand.score = min(cand.score, ceiling * (1 - 1e-6 * rank))
    return head + moved + tail, moved


def _mark(found: Sequence[Bridge]) -> list[Candidate]:
    for bridge in found:
        bridge.candidate.linked_from = {
            "name": bridge.name,
            "chunk_id": bridge.mentioned_by,
            "relation": bridge.relation,
        }
    return [b.candidate for b in found]


def _link_trace(found: Sequence[Bridge], placed: Sequence[Candidate]) -> list[dict[str, str]]:
    keys = {c.key for c in placed}
    return [
        {
            "chunk_id": b.candidate.chunk_id,
            "name": b.name,
            "mentioned_by": b.mentioned_by,
            "relation": b.relation,
        }
        for b in found
        if b.candidate.key in keys
    ]


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[\w@#.]+", text.casefold())).strip(".")


# The LLM judge


def judge_with_llm(
    llm: Any, question: str, context: Sequence[Candidate], asked: Sequence[str]
) -> tuple[bool, str, str]:
    """(sufficient, follow-up query, reason) from the LLM; raises LLMUnavailable when the
    reply cannot be read."""
    reply = llm.complete(judge_messages(question, context, asked))
    parsed = parse_judgment(reply)
    if parsed is None:
        flat = " ".join(str(reply).split())[:80]
        raise LLMUnavailable(f"unreadable sufficiency judgment: {flat!r}")
    return parsed


def judge_messages(
    question: str, context: Sequence[Candidate], asked: Sequence[str]
) -> list[dict[str, str]]:
    # The best of the first retrieval and the newest hop's chunks: the judge must see what
    # the last follow-up brought, or it would ask for it again.
    half = CONTEXT_CHUNKS // 2
    shown = list(context)
    if len(shown) > CONTEXT_CHUNKS:
        shown = [*shown[:half], *shown[-half:]]
    excerpts = []
    for number, cand in enumerate(shown, start=1):
        text = " ".join(_text(cand).split())[:CONTEXT_CHARS]
        excerpts.append(f"[{number}] {text}")
    earlier = "".join(f"- {q}\n" for q in asked) or "- none\n"
    return [
        {
            "role": "system",
            "content": (
                "You decide whether retrieved documentation answers a developer's question. "
                'Reply with only JSON: {"sufficient": true or false, "follow_up": "a short '
                'search query for what is missing, or empty"}.'
            ),
        },
        {
            "role": "user",
            "content": (
                f"Question: {question}\n\nFollow-up searches so far:\n{earlier}\n"
                "Retrieved context:\n" + "\n".join(excerpts or ["(nothing)"])
            ),
        },
    ]


def parse_judgment(reply: Any) -> tuple[bool, str, str] | None:
    """(sufficient, follow_up, reason) from the first JSON object with a "sufficient"
    field; None when there is none."""
    if not isinstance(reply, str):
        return None
    for value in json_values(reply):
        if not isinstance(value, dict) or "sufficient" not in value:
            continue
        sufficient = _truth(value["sufficient"])
        if sufficient is None:
            continue
        follow_up = value.get("follow_up") or value.get("query") or ""
        follow_up = " ".join(follow_up.split()) if isinstance(follow_up, str) else ""
        reason = value.get("reason") or value.get("missing") or ""
        reason = str(reason) if reason else ("context suffices" if sufficient else "llm")
        return sufficient, follow_up[:300], reason[:300]
    return None


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"true", "yes", "y", "1"}:
            return True
        if lowered in {"false", "no", "n", "0"}:
            return False
    return None


# The deterministic judge


def judge_deterministically(
    question: str, context: Sequence[Candidate], searched: set[str]
) -> tuple[bool, str, str]:
    """Sufficient when every aspect of the question appears in the context's text; else the
    uncovered aspects not searched for yet become the follow-up."""
    text = " ".join(_text(c) for c in context)
    missing = [a for a in aspects(question) if not covered(a, text)]
    if not missing:
        return True, "", "every term of the question appears in the retrieved chunks"
    fresh = [a for a in missing if _normal(a) not in searched]
    if not fresh:
        return False, "", f"already searched for {', '.join(missing)}"
    follow_up = " ".join(fresh[:MAX_FOLLOW_UP_TERMS])
    return False, follow_up, f"not yet covered: {', '.join(fresh)}"


def aspects(question: str) -> list[str]:
    """What a question asks about, most specific first: quoted strings, capitalised
    multi-word entities, code identifiers, then other content words; without repeats or
    words already inside an earlier aspect."""
    found: list[str] = []
    for match in _QUOTED.finditer(question):
        found.append(next(g for g in match.groups() if g))
    for match in _ENTITY.finditer(question):
        words = match[0].split()
        while words and words[0].lower() in STOPWORDS:  # "How", "What" opening a sentence
            words = words[1:]
        if len(words) >= 2:
            found.append(" ".join(words))
    tokens = [m[0].rstrip(".") for m in TOKEN.finditer(question)]
    found.extend(t for t in tokens if is_identifier(t))
    found.extend(
        t for t in tokens if not is_identifier(t) and t.lower() not in STOPWORDS and len(t) >= 3
    )
    out: list[str] = []
    inside: set[str] = set()
    for aspect in found:
        key = aspect.casefold()
        if key in inside:
            continue
        out.append(aspect)
        inside.add(key)
        inside.update(w.casefold() for w in aspect.split())
    return out


def covered(aspect: str, text: str) -> bool:
    """Whether `text` mentions the aspect: a phrase as a phrase (spacing and case aside), a
    word by its stem (so "models" covers "model")."""
    lowered = text.casefold()
    words = aspect.split()
    if len(words) > 1 or not re.fullmatch(r"[\w]+", aspect):
        phrase = r"\s+".join(re.escape(w.casefold()) for w in words)
        return re.search(phrase, lowered) is not None
    root = stem(aspect)
    return re.search(rf"\b{re.escape(root)}", lowered) is not None


def _text(cand: Candidate) -> str:
    row = cand.row or {}
    parts = [row.get("context"), row.get("symbol"), row.get("content")]
    return " ".join(str(p) for p in parts if p)
