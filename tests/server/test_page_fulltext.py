"""The page over a paper read in full, in Chromium under the server's CSP: a hit names
its passage's page and section, shows the passage with the evidence terms marked, and
links the PDF at the passage's PDF page; a passage's markup is shown as text, never run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

from embedsearch import Paper, SearchEngine  # noqa: E402
from embedsearch.papers import Passage  # noqa: E402
from embedsearch.server import create_app  # noqa: E402
from embedsearch.text import plain_text  # noqa: E402
from tests.fulltext import DONOR, fulltext_papers, write_pdf  # noqa: E402
from tests.server import test_page  # noqa: E402
from tests.server.test_live_server import CHROMIUM, LiveServer  # noqa: E402
from tests.server.test_page import WAIT_MS, search  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at "
                       "/usr/bin/chromium (apt-get install chromium)"),
]
INJECTED = ("Quantized sparse zebras gallop <img src=x onerror=\"window.__pwned=1\">"
            "<script>window.__pwned=2</script> across the tundra at dawn.")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Paper]]:
    """The full-text index, and "evil", whose passage and section carry markup."""
    folder = tmp_path_factory.mktemp("page-fulltext")
    papers, donors = fulltext_papers(folder)
    evil = Paper(id="evil", title="Field notes <b>bold?</b>", abstract="Notes.",
                 passages=(Passage(INJECTED, page=1, section="<i>2</i> Wildlife"),))
    evil = replace(evil, file=str(write_pdf(folder / "evil.pdf", evil)))
    SearchEngine.build(folder / "index", [*papers, evil]).close()
    return folder / "index", donors


@pytest.fixture(scope="module")
def donors(built: tuple[Path, list[Paper]]) -> list[Paper]:
    return built[1]


@pytest.fixture(scope="module")
def site(built: tuple[Path, list[Paper]]) -> Iterator[str]:
    engine = SearchEngine.open(built[0])
    try:
        with LiveServer(create_app(engine, compute_map=False)) as url:
            yield url
    finally:
        engine.close()


#: The page tests' browser, one Chromium for the module.
browser = test_page.browser


@pytest.fixture
def page(browser: Any, site: str) -> Iterator[Any]:
    """A fresh tab on the page; fails on any page error or refused request."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("response", lambda response: errors.append(f"{response.status}: {response.url}")
           if response.status >= 400 else None)
    tab.goto(f"{site}/")
    yield tab
    context.close()
    assert not errors, errors


def test_a_full_text_hit_shows_its_passage_page_and_pdf_link(page: Any,
                                                             donors: list[Paper]) -> None:
    search(page, donors[DONOR].title)
    first = page.locator(".result").first
    expect(first).to_have_attribute("data-id", "host", timeout=WAIT_MS)
    expect(first.locator(".passage-at")).to_have_text("p. 102 (§3 Part 3)")
    link = first.locator("a.pdf-link")
    expect(link).to_have_text("open PDF at p. 102")
    assert link.get_attribute("href") == "/papers/host/file#page=4"  # the PDF's page
    shown = first.locator(".passage .evidence").inner_text()
    # The page shows LaTeX as it prints ($\textbf{Lo}$w: "Low"), as `plain_text` does.
    printed = " ".join(plain_text(donors[DONOR].abstract).split())
    # Its start: math further on is drawn by KaTeX, whose text reads twice ("Lo Low").
    assert shown and " ".join(shown.split())[:80] in printed
    assert first.locator(".passage .evidence mark").count() > 0  # the terms, marked
    served = page.request.get(page.url.split("#")[0].rstrip("/") + "/papers/host/file")
    assert served.ok and served.headers["content-type"] == "application/pdf"
    assert served.body().startswith(b"%PDF-")


def test_a_passages_markup_is_text(page: Any) -> None:
    search(page, "quantized sparse zebras gallop across the tundra")
    hit = page.locator(".result[data-id='evil']")
    expect(hit.locator(".passage-at")).to_have_text("p. 1 (§<i>2</i> Wildlife)",
                                                    timeout=WAIT_MS)
    page.wait_for_timeout(300)  # an injected onerror would have run by now
    assert page.locator("#view img, #view script, #view .passage i").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert '<img src=x onerror="window.__pwned=1">' in hit.locator(".passage").inner_text()
