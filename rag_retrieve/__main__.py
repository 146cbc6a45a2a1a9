"""`python -m rag_retrieve`: the same as the `rag-retrieve` command."""

import sys

from rag_retrieve.cli import main

if __name__ == "__main__":
    sys.exit(main())
