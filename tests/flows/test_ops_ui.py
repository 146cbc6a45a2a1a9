"""The Prefect UI as an operator sees it: headless Chromium (Debian's package, driven by
Playwright) finds the four deployments and the backfill run form, and screenshots both:
into the test's temporary directory, or into docs/ with `pytest --refresh-screenshots`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.backfill import BackfillRequest
from tests.support.ops import ROOT, Served, shared_serve

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 30_000

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install -y chromium)"
    ),
]

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402


@pytest.fixture
def shots(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where screenshots go: docs/ only when asked, so `make test` changes no tracked file."""
    return ROOT / "docs" if request.config.getoption("--refresh-screenshots") else tmp_path


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest) -> Served:
    return shared_serve(request.config)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=FLAGS
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    page.set_default_timeout(WAIT_MS)
    yield page
    page.close()


def open_backfill_form(page: Page, served: Served) -> None:
    """The way an operator gets there: Deployments → backfill → Run → Custom run."""
    page.goto(f"{served.server.ui}/deployments")
    page.locator("a[href*='/deployments/deployment/']", has_text="backfill").first.click()
    page.wait_for_url("**/deployments/deployment/**")
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Custom run", exact=True).click()
    page.wait_for_url("**/run**")


def test_deployments_page_lists_refresh_backfill_reverify_and_embed_pending(
    page: Page, served: Served, shots: Path
) -> None:
    page.goto(f"{served.server.ui}/deployments")
    for name in ("refresh", "backfill", "reverify", "embed-pending"):
        link = page.locator("a[href*='/deployments/deployment/']", has_text=name)
        expect(link.first).to_have_text(name)
    page.screenshot(path=str(shots / "prefect-deployments.png"))
    assert (shots / "prefect-deployments.png").stat().st_size > 0


def test_backfill_form_shows_every_parameter_with_its_description(
    page: Page, served: Served, shots: Path
) -> None:
    open_backfill_form(page, served)
    expect(page.get_by_text("Paths", exact=True)).to_be_visible()
    for label in (
        "Index",
        "Domain",
        "Source",
        "Since",
        "Force",
        "Vectors Later",
        "Embedding Model",
    ):
        expect(page.get_by_text(f"{label} (Optional)", exact=True)).to_be_visible()
    text = page.locator("body").inner_text()
    for name, field in BackfillRequest.model_fields.items():
        # Backticks in a description render as code, without the backticks.
        assert field.description.replace("`", "") in text, name
    page.screenshot(path=str(shots / "prefect-backfill-form.png"))
    assert (shots / "prefect-backfill-form.png").stat().st_size > 0


def test_backfill_form_fills_in_the_default_index(page: Page, served: Served) -> None:
    open_backfill_form(page, served)
    expect(page.get_by_text("Index (Optional)", exact=True)).to_be_visible()
    values = page.locator("textarea, input").evaluate_all("fields => fields.map(f => f.value)")
    assert BackfillRequest.model_fields["index"].default in values
