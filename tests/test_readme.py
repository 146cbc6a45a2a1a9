"""The README documents what the code reads: every setting's environment variable."""

from __future__ import annotations

from core.settings import ENV_VARS
from tests.support.paths import ROOT

README = ROOT / "README.md"


def test_every_environment_variable_is_documented():
    text = README.read_text(encoding="utf-8")
    missing = sorted(var for var in ENV_VARS.values() if f"`{var}`" not in text)
    assert not missing, f"README.md does not document {missing}"
