"""Prose chunkers: markdown and DocC by heading sections, transcripts by topic, chat windows.

Layout: `front_matter` (YAML-style header), `docc` (directives, DocC links, fences),
`markdown_scan` (lines -> sections of blocks), `markdown` (sections -> pieces), `sentences`
(sentence spans), `transcript` (topic segmentation), `chat` (message windows)."""
