"""`python -m query.eval`: the command line of cli.py."""

import sys

from query.eval.cli import main

sys.exit(main())
