from __future__ import annotations

import pytest

from chunkers.config import ChunkConfig
from index.settings import default_model_dir
from index.tokens import TokenCounter, counter_for_model


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The real tokenizer of the packaged default embedding model."""
    return counter_for_model(default_model_dir())


@pytest.fixture
def cfg(counter: TokenCounter) -> ChunkConfig:
    return ChunkConfig(counter=counter)


@pytest.fixture
def small_cfg(counter: TokenCounter) -> ChunkConfig:
    """Tight limits so that small fixtures exercise the splitting paths."""
    return ChunkConfig(counter=counter, target_tokens=60, max_tokens=80, overlap_tokens=10)
