"""Prefect's temporary API server for a CLI run, started on our terms and never left behind."""
