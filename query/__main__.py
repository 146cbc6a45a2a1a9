"""`python -m query`: the command line (query/cli/main.py)."""

import sys

from query.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
