"""What the tests share: fakes of external services, fixtures built once per session, the
store contract suite, and the paths of the repository, its fixtures and ../shared/data."""
