"""Embedding: one interface (`base`), one file per runtime (torch, MLX, HTTP), the model
registry (`models`), the content-keyed cache (`cache`) and the runtime choice (`runtimes`)."""
