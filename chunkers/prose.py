"""Prose chunkers: markdown/DocC articles by heading sections, transcripts by topic.

Layout: `front_matter` (YAML-style header), `docc` (directives, DocC links, fences),
`markdown_scan` (lines → sections of blocks), `markdown` (sections → pieces), `sentences`
(sentence spans), `transcript` (topic segmentation), `spans` (line numbers, hard limit).
"""

from __future__ import annotations

from chunkers.front_matter import split_front_matter
from chunkers.markdown import chunk_markdown
from chunkers.sentences import split_sentences
from chunkers.transcript import chunk_transcript

__all__ = ["chunk_markdown", "chunk_transcript", "split_front_matter", "split_sentences"]
