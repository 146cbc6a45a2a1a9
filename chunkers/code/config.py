"""Configuration and build files (Podfile, Cartfile, *.xcconfig, *.plist, YAML, TOML, JSON):
token-bounded line windows, each with the file's path as context, because a setting read
alone (`SWIFT_OPTIMIZATION_LEVEL = -O`) means little without knowing which file sets it."""

from __future__ import annotations

from chunkers.config import ChunkConfig
from chunkers.model import Piece
from chunkers.windows import line_windows

CONFIG_KIND = "config"


def chunk_config(text: str, cfg: ChunkConfig, *, path: str) -> list[Piece]:
    return [
        Piece(w.text, context=path, start_line=w.start_line, end_line=w.end_line, kind=CONFIG_KIND)
        for w in line_windows(text, cfg)
    ]
