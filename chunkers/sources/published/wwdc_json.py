"""WWDC sessions as JSON: timed transcripts, and the session lists published beside them.

A transcript is a dict whose `segments` are `{start, text}` (guitaripod's `transcript.json`;
Whisper's output has the same shape with an `end`). The sidecars hold what a transcript
does not say about itself (title, description, platforms, topics) in three shapes:
ASCIIwwdc's `sessions.json` ({year: {session: {title, description, url}}}), a `wwdcYYYY.json`
list of session dicts (url `.../play/wwdc2018/236/`, `sessionDetail`, `summaryText`) and
guitaripod's `metadata.json` beside its `transcript.json`. Each sidecar is reduced to one
index {(year, session): facts}, cached by (path, mtime), so that the 149 transcripts under one
600 KB `sessions.json` parse it once.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from chunkers.sources.published.model import FormatError
from chunkers.sources.published.webvtt import Cue, clean_cue_text

SessionKey = tuple[int, str]
SessionFacts = dict[str, Any]

_SESSION_URL = re.compile(r"/wwdc(\d{4})/(\w+)/?(?:[?#].*)?$")
_YEAR = re.compile(r"^\d{4}$")
_LIST_NAME = re.compile(r"^wwdc\d{4}\.json$", re.IGNORECASE)
_DETAIL = re.compile(r"Session\s+\w+\s+-\s+(.+)$")


def is_timed_transcript(data: object) -> bool:
    """Whether `data` claims to be a timed transcript: `segments` whose first item has a
    `start` and a `text` (the rest are checked when cues are read)."""
    if not isinstance(data, dict):
        return False
    segments = data.get("segments")
    return (
        isinstance(segments, list)
        and bool(segments)
        and isinstance(segments[0], dict)
        and {"start", "text"} <= segments[0].keys()
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def transcript_cues(data: dict[str, Any]) -> list[Cue]:
    """The cues of a timed transcript; a segment without a numeric start or a text string
    is a FormatError naming its field. A segment without `end` lasts until the next one."""
    segments = data["segments"]
    for index, segment in enumerate(segments):
        where = f"segments[{index}]"
        if not isinstance(segment, dict):
            raise FormatError("a transcript segment is not an object", field=where)
        if not _number(segment.get("start")):
            raise FormatError("a transcript segment has no numeric start", field=f"{where}.start")
        if not isinstance(segment.get("text"), str):
            raise FormatError("a transcript segment has no text", field=f"{where}.text")
    cues = []
    for index, segment in enumerate(segments):
        start = float(segment["start"])
        following = segments[index + 1]["start"] if index + 1 < len(segments) else start
        end = segment.get("end") if _number(segment.get("end")) else following
        cues.append(Cue(start, max(start, float(end)), clean_cue_text(segment["text"])))
    return cues


def _is_session_dict(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("title"), str)


def is_sessions_by_year(data: object) -> bool:
    """ASCIIwwdc's `sessions.json`: {"2019": {"204": {"title": ...}}}."""
    if not isinstance(data, dict) or not data:
        return False
    return all(
        isinstance(year, str)
        and _YEAR.match(year)
        and isinstance(sessions, dict)
        and all(_is_session_dict(facts) for facts in sessions.values())
        for year, sessions in data.items()
    )


def is_session_list(data: object) -> bool:
    """A `wwdcYYYY.json` list: session dicts whose `url` names `/wwdc<year>/<session>/`."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(
            _is_session_dict(item) and _SESSION_URL.search(str(item.get("url", "")))
            for item in data
        )
    )


def is_session_metadata(path: Path, data: object) -> bool:
    """guitaripod's `metadata.json`: a session's facts, beside its `transcript.json`."""
    return (
        path.name == "metadata.json"
        and (path.parent / "transcript.json").is_file()
        and _is_session_dict(data)
        and isinstance(data, dict)
        and ("eventContentId" in data or "event" in data)
    )


def is_sidecar(path: Path, data: object) -> bool:
    """Whether a JSON file is one of the session lists kept beside transcripts."""
    return (
        is_sessions_by_year(data)
        or (is_session_list(data) and bool(_LIST_NAME.match(path.name)))
        or is_session_metadata(path, data)
    )


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _strings(value: object) -> list[str] | None:
    if isinstance(value, list):
        kept = [item.strip() for item in value if isinstance(item, str) and item.strip()]
        return kept or None
    return None


def _facts(**given: object) -> SessionFacts:
    return {key: value for key, value in given.items() if value is not None}


def _by_year_index(data: dict[str, Any]) -> dict[SessionKey, SessionFacts]:
    return {
        (int(year), str(session)): _facts(
            title=_text(facts.get("title")),
            description=_text(facts.get("description")),
            session_url=_text(facts.get("url")),
        )
        for year, sessions in data.items()
        for session, facts in sessions.items()
    }


def _list_index(data: list[dict[str, Any]]) -> dict[SessionKey, SessionFacts]:
    index: dict[SessionKey, SessionFacts] = {}
    for item in data:
        match = _SESSION_URL.search(str(item["url"]))
        if not match:
            continue
        detail = _DETAIL.search(str(item.get("sessionDetail", "")))
        platforms = [p.strip() for p in detail.group(1).split(",")] if detail else None
        genre = _text(item.get("genre"))
        index[(int(match.group(1)), match.group(2))] = _facts(
            title=_text(item.get("title")),
            description=_text(item.get("summaryText")) or _text(item.get("description")),
            session_url=_text(item.get("url")),
            platforms=platforms or None,
            topics=[genre] if genre else None,
        )
    return index


def metadata_facts(data: dict[str, Any]) -> tuple[SessionKey | None, SessionFacts]:
    """A `metadata.json`'s session key (year, eventContentId) and its facts."""
    year, session = data.get("year"), data.get("eventContentId")
    key = (int(year), str(session)) if isinstance(year, int) and session is not None else None
    facts = _facts(
        title=_text(data.get("title")),
        description=_text(data.get("description")),
        session_url=_text(data.get("url")),
        event=_text(data.get("event")),
        platforms=_strings(data.get("platforms")),
        topics=_strings(data.get("topics")),
        keywords=_strings(data.get("keywords")),
    )
    return key, facts


@lru_cache(maxsize=64)
def _load(path: Path, mtime_ns: int) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None  # a broken sidecar is no sidecar: the transcript still reads


def load_json(path: Path) -> object:
    """A JSON file's content, parsed once per (path, mtime); None when it cannot be read."""
    try:
        mtime_ns = path.stat().st_mtime_ns
    except OSError:
        return None
    return _load(path, mtime_ns)


@lru_cache(maxsize=64)
def _index(path: Path, mtime_ns: int) -> dict[SessionKey, SessionFacts]:
    data = _load(path, mtime_ns)
    if is_sessions_by_year(data):
        assert isinstance(data, dict)
        return _by_year_index(data)
    if is_session_list(data):
        assert isinstance(data, list)
        return _list_index(data)
    return {}


def sidecar_index(path: Path) -> dict[SessionKey, SessionFacts]:
    """The sessions a `sessions.json` or `wwdcYYYY.json` describes, by (year, session);
    empty when the file is not such a list. Shared and cached: do not mutate."""
    try:
        mtime_ns = path.stat().st_mtime_ns
    except OSError:
        return {}
    return _index(path, mtime_ns)
