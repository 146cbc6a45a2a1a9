"""What the embedding model reads for a chunk: one definition for ingestion, which embeds
every chunk, and the query side's calibration, which embeds chunk texts it has stripped."""

from __future__ import annotations

from chunkers.model import CODE_LANGUAGES
from core.store.analyzer import CASE_CHANGE


def embedding_text(context: str | None, content: str, language: str | None = None) -> str:
    """What the model embeds: the heading path or type signature, then the chunk. In code,
    camelCase identifiers are embedded as their words: the model's uncased WordPiece
    vocabulary cuts `refreshAuthToken` into `ref ##resh ##au ##th ##tok ##en`, none of
    them a word a question uses, while `refresh Auth Token` reads as the words it is made
    of. Prose (and the code blocks in it) is embedded as written."""
    text = f"{context}\n{content}" if context else content
    return CASE_CHANGE.sub(" ", text) if language in CODE_LANGUAGES else text
