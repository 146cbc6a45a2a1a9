"""The question's command line names what it accepts."""

from __future__ import annotations

from query.cli.question_args import build_parser
from query.types import FUSIONS


def test_the_fusion_help_names_every_rule():
    [fusion] = [a for a in build_parser()._actions if "--fusion" in a.option_strings]
    assert all(rule in fusion.help for rule in FUSIONS)
    assert "auto" in FUSIONS
