"""HLS subtitle playlists: a session as Apple streams its captions.

Apple cuts a talk's subtitles into one-minute WebVTT segments listed by `prog_index.m3u8`;
the playlist is the session, each segment only a piece of it. A cue that is on screen across
a minute boundary is written into both segments, so the segments' cues are merged with
duplicates dropped. The master playlist (`hls_vod_mvp.m3u8`) lists playlists, not segments.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

from chunkers.sources.published.model import FormatError
from chunkers.sources.published.webvtt import Cue, merge_cues, read_webvtt

SUBTITLE_SUFFIXES = (".webvtt", ".vtt")
_MASTER_TAGS = re.compile(r"^#EXT-X-(?:STREAM-INF|MEDIA|I-FRAME-STREAM-INF):", re.MULTILINE)


def is_playlist(text: str) -> bool:
    """Whether `text` is an HLS playlist at all (it must open with `#EXTM3U`)."""
    return text.removeprefix("\ufeff").lstrip().startswith("#EXTM3U")


def is_master_playlist(text: str) -> bool:
    """Whether a playlist lists other playlists (renditions) rather than media segments."""
    return bool(_MASTER_TAGS.search(text))


def segment_uris(text: str) -> list[tuple[int, str]]:
    """The segment URIs of a media playlist in play order, each with its 1-based line."""
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def subtitle_segments(text: str) -> list[tuple[int, str]]:
    """The WebVTT segments a playlist lists (a video playlist lists none)."""
    return [
        (number, uri)
        for number, uri in segment_uris(text)
        if urlsplit(uri).path.lower().endswith(SUBTITLE_SUFFIXES)
    ]


def _local_segment(folder: Path, uri: str, number: int) -> Path:
    parts = urlsplit(uri)
    if parts.scheme or parts.netloc:
        raise FormatError(f"segment {uri!r} is not a file beside the playlist", line=number)
    path = (folder / unquote(parts.path)).resolve()
    # A playlist is data from the repository being read: it must not lead reading to a
    # file outside its own folder ("../../secrets.vtt" or a link out).
    if not path.is_relative_to(folder.resolve()):
        raise FormatError(f"segment {uri!r} lies outside the playlist's folder", line=number)
    return path


def read_playlist(path: Path, text: str) -> list[Cue]:
    """The cues of a subtitle playlist's segments, read from the playlist's folder, merged in
    time order with each cue once. A segment that is missing, unreadable or broken WebVTT is
    a FormatError at the playlist line that lists it."""
    cue_lists: list[list[Cue]] = []
    for number, uri in subtitle_segments(text):
        segment = _local_segment(path.parent, uri, number)
        try:
            segment_text = segment.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FormatError(f"segment {uri!r} is missing", line=number) from None
        except (OSError, UnicodeDecodeError) as error:
            raise FormatError(f"segment {uri!r} cannot be read: {error}", line=number) from None
        try:
            cue_lists.append(read_webvtt(segment_text))
        except FormatError as error:
            where = f", line {error.line}" if error.line else ""
            raise FormatError(f"segment {uri!r}{where}: {error.reason}", line=number) from None
    return merge_cues(*cue_lists)


@lru_cache(maxsize=256)
def _listed_names(playlist: Path, mtime_ns: int) -> frozenset[str]:
    try:
        text = playlist.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    if not is_playlist(text):
        return frozenset()
    return frozenset(Path(unquote(urlsplit(uri).path)).name for _, uri in segment_uris(text))


@lru_cache(maxsize=256)
def _playlists_in(folder: Path, mtime_ns: int) -> tuple[Path, ...]:
    # Listed once per folder (and again only when it changes): a folder of a thousand
    # subtitle files would otherwise be listed a thousand times.
    return tuple(sorted(p for p in folder.iterdir() if p.suffix.lower() == ".m3u8"))


def is_segment(path: Path) -> bool:
    """Whether a WebVTT file is a segment listed by a playlist in its own folder (then it is
    read with that playlist, never alone). Parsed playlists are cached by (path, mtime), so
    the forty segments of one session read their playlist once."""
    try:
        playlists = _playlists_in(path.parent, path.parent.stat().st_mtime_ns)
    except OSError:
        return False
    for playlist in playlists:
        try:
            mtime_ns = playlist.stat().st_mtime_ns
        except OSError:
            continue
        if path.name in _listed_names(playlist, mtime_ns):
            return True
    return False
