"""The README is a front door, and the configuration reference documents what the code reads:
every setting's environment variable."""

from __future__ import annotations

from core.settings import ENV_VARS
from tests.support.paths import ROOT

README = ROOT / "README.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"
FRONT_DOOR_LINES = 300


def test_every_environment_variable_is_documented():
    text = CONFIGURATION.read_text(encoding="utf-8")
    missing = sorted(var for var in ENV_VARS.values() if f"`{var}`" not in text)
    assert not missing, f"docs/configuration.md does not document {missing}"


def test_the_readme_is_a_front_door_that_links_the_configuration_reference():
    text = README.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= FRONT_DOOR_LINES, (
        f"README.md has {lines} lines; move detail to a page of docs/ (at most {FRONT_DOOR_LINES})"
    )
    assert "(docs/configuration.md)" in text
