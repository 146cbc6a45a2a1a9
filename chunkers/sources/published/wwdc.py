"""A WWDC session, in whichever form it was published, as one `Published` talk.

Discovery names a file's kind by its suffix ("webvtt", "hls", "json"); this module decides
whether the file is a session (WebVTT, an HLS subtitle playlist, a timed JSON transcript), a
part of one that is read elsewhere (an HLS segment, a session list beside the transcripts:
`NotADocument`), or not a WWDC form at all (None, so that plain reading takes it).

The text is what was said, one cue per line with each line's start second beside it, so a
chunk can deep-link into the video. The title, description, platforms and topics come from a
sidecar when one is found in the file's folder or up to four folders above it, else the year
and session number are read from the path (`2019/204.vtt`, `wwdc2018/401/...`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from chunkers.sources.published import hls
from chunkers.sources.published.model import FormatError, NotADocument, Published
from chunkers.sources.published.webvtt import Cue, merge_cues, read_webvtt
from chunkers.sources.published.wwdc_json import (
    SessionFacts,
    is_session_metadata,
    is_sidecar,
    is_timed_transcript,
    load_json,
    metadata_facts,
    sidecar_index,
    transcript_cues,
)

SEGMENT = "HLS subtitle segment (read with its playlist)"
SIDECAR = "WWDC session metadata (sidecar)"
MASTER_PLAYLIST = "HLS master playlist (its subtitle playlists are read)"
NO_SUBTITLES = "HLS playlist without subtitles"

SIDECAR_DEPTH = 4  # folders above the file's own that may hold its session list
_YEAR_PART = re.compile(r"^(?:wwdc)?((?:19|20)\d\d)$", re.IGNORECASE)
_SESSION_PART = re.compile(r"^\d{2,6}$")
_SESSION_URL = re.compile(r"/wwdc(\d{4})/(\d+)/?(?:[?#].*)?$")
# ASCIIwwdc's list of every year, or one year's list.
_SESSION_LIST = re.compile(r"^(?:sessions|wwdc\d{4})\.json$", re.IGNORECASE)


def session_url(year: int, session: str) -> str:
    """Apple's canonical page of a session."""
    return f"https://developer.apple.com/videos/play/wwdc{year}/{session}/"


def session_from_path(path: Path) -> tuple[int | None, str | None]:
    """Year and session number from the nearest folder pair that names them: `2019/204.vtt`,
    `wwdc2018/401/subtitles/eng/prog_index.m3u8`, `wwdc2023/10187/transcript.json`."""
    parts = [*path.parent.parts, path.stem]
    for index in range(len(parts) - 2, -1, -1):
        year = _YEAR_PART.match(parts[index])
        if year and _SESSION_PART.match(parts[index + 1]):
            return int(year.group(1)), parts[index + 1]
    return None, None


def _beside_metadata(folder: Path) -> tuple[tuple[int, str] | None, SessionFacts] | None:
    candidate = folder / "metadata.json"
    if not candidate.is_file():
        return None
    data = load_json(candidate)
    if not is_session_metadata(candidate, data):
        return None
    assert isinstance(data, dict)
    return metadata_facts(data)


@lru_cache(maxsize=256)
def _session_lists_in(folder: Path, mtime_ns: int) -> tuple[Path, ...]:
    # Listed once per folder (and again only when it changes), not once per transcript.
    names = sorted(p.name for p in folder.iterdir() if _SESSION_LIST.match(p.name))
    return tuple(folder / name for name in names)


def _sidecar_facts(folder: Path, year: int, session: str) -> SessionFacts | None:
    try:
        lists = _session_lists_in(folder, folder.stat().st_mtime_ns)
    except OSError:
        return None
    for candidate in lists:
        if candidate.is_file():
            facts = sidecar_index(candidate).get((year, session))
            if facts is not None:
                return facts
    return None


def find_session(
    path: Path, year: int | None, session: str | None
) -> tuple[int | None, str | None, SessionFacts]:
    """The session's year, number and facts from the nearest sidecar that knows it: the
    `metadata.json` beside a `transcript.json`, else a `sessions.json` or `wwdcYYYY.json` in
    the file's folder or the four above it; no facts when none does."""
    beside = _beside_metadata(path.parent)
    if beside is not None:
        key, facts = beside
        return (key[0], key[1], facts) if key else (year, session, facts)
    if year is not None and session is not None:
        for folder in [path.parent, *path.parent.parents][: SIDECAR_DEPTH + 1]:
            found = _sidecar_facts(folder, year, session)
            if found is not None:
                return year, session, found
    return year, session, {}


def _published(
    path: Path, cues: list[Cue], format: str, hint: tuple[int | None, str | None]
) -> Published:
    spoken = [cue for cue in cues if cue.text]
    year, session = session_from_path(path)
    if year is None or session is None:
        year, session = hint
    year, session, facts = find_session(path, year, session)
    known = year is not None and session is not None
    metadata: dict[str, Any] = {"year": year, "session": session}
    if year is not None:
        metadata["event"] = facts.get("event", f"wwdc{year}")
    metadata.update({k: v for k, v in facts.items() if k not in ("title", "event")})
    title = facts.get("title") or (f"WWDC {year} session {session}" if known else None)
    return Published(
        text="\n".join(cue.text for cue in spoken),
        language="text",
        # Subtitles with no session to name (a user's own video) are not WWDC's.
        source="wwdc" if known or facts else "user_codebase",
        format=format,
        title=title,
        url=session_url(year, session) if year is not None and session is not None else None,
        metadata={k: v for k, v in metadata.items() if v is not None},
        line_times=[cue.start for cue in spoken],
    )


def _read_json(path: Path, text: str) -> Published | NotADocument | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None  # not JSON at all: plain reading decides what it is
    if is_sidecar(path, data):
        return NotADocument(SIDECAR)
    if not is_timed_transcript(data):
        return None
    assert isinstance(data, dict)
    source = _SESSION_URL.search(str(data.get("source", "")))
    hint = (int(source.group(1)), source.group(2)) if source else (None, None)
    return _published(path, merge_cues(transcript_cues(data)), "wwdc_json", hint)


def _read_playlist(path: Path, text: str) -> Published | NotADocument:
    if not hls.is_playlist(text):
        raise FormatError("not an HLS playlist: no '#EXTM3U' at its start", line=1)
    if hls.is_master_playlist(text):
        return NotADocument(MASTER_PLAYLIST)
    if not hls.subtitle_segments(text):
        return NotADocument(NO_SUBTITLES)
    return _published(path, hls.read_playlist(path, text), "hls", (None, None))


def read_session(path: Path, text: str, kind: str) -> Published | NotADocument | None:
    """One file read as a WWDC session: `kind` is discovery's name for it ("webvtt" for
    `.vtt`/`.webvtt`, "hls" for `.m3u8`, "json"). A file of the kind that breaks its format
    raises FormatError; a JSON file that is neither a transcript nor a sidecar gives None."""
    if kind == "webvtt":
        if hls.is_segment(path):
            return NotADocument(SEGMENT)
        return _published(path, merge_cues(read_webvtt(text)), "webvtt", (None, None))
    if kind == "hls":
        return _read_playlist(path, text)
    if kind == "json":
        return _read_json(path, text)
    return None
