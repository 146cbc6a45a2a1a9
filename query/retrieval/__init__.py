"""The retrieval engine: an opened store with its models (engine), and the stages a question
runs through (expansion, retrieve, fusion, links, corag, rerank, pack), composed by pipeline."""
