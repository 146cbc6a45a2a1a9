"""What we tag equals what Apple's real pages state, in every published form (skipped where
../shared/data/apple-docs is absent): bench/apple_tagging.py's figures held to 98 %."""

from __future__ import annotations

import pytest

from bench.apple_tagging import DEFAULT_ROOT, measure

pytestmark = pytest.mark.skipif(not DEFAULT_ROOT.is_dir(), reason="no shared apple-docs data")


@pytest.fixture(scope="module")
def figures():
    return measure(DEFAULT_ROOT)


@pytest.mark.parametrize("form", ["render_json", "apple_md", "scraped", "xcode_guide", "wwdc"])
def test_every_form_is_read_and_tagged_as_its_pages_state(figures, form):
    below = {
        fact: f"{v['agree']}/{v['of']}"
        for fact, v in figures[form].items()
        if v["of"] and v["agree"] / v["of"] < 0.98
    }
    assert not below, below


def test_every_stated_fact_was_measured(figures):
    assert figures["render_json"]["platform_bounds"]["of"] > 50
    assert figures["scraped"]["ios_min"]["of"] > 1000
    assert figures["wwdc"]["title"]["of"] == 153
