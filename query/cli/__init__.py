"""The command line: `python -m query` and its subcommands, their flags and readable output."""
