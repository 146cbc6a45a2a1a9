"""Readers of the forms in which Apple (and DocC) publish documentation and talks."""
