"""Retrieval quality on BEIR-format data, through the real query pipeline:
`python -m query.eval DATASET_DIR ...` (the command and what it measures: cli.py).

beir.py reads the data, index.py builds the throwaway index, runner.py asks and scores each
mode's queries, cli.py is the command line.
"""
