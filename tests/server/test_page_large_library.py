"""The page with a large reading list, in headless Chromium: 1,000 starred papers of an
index of dev papers give Library and Recommended, each hit named by the starred papers
it is like, in one POST /similar and no fetch of the starred papers' records.
(`scripts/page_library_timing.py` times the same over the whole dev corpus.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

from embedsearch import SearchEngine  # noqa: E402
from embedsearch.server import create_app  # noqa: E402
from tests.conftest import dev_records, dev_vectors, needs_dev_data  # noqa: E402
from tests.server.test_live_server import CHROMIUM, CHROMIUM_FLAGS, LiveServer  # noqa: E402
from tests.server.test_page import WAIT_MS  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    needs_dev_data,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at "
                       "/usr/bin/chromium (apt-get install chromium)"),
]

PAPERS, STARRED = 3000, 1000


def library(records: list[dict[str, Any]]) -> str:
    """The page's stored library (library.js's shape) with `records` starred."""
    return json.dumps({
        "version": 1, "current": "Reading list",
        "lists": [{"name": "Reading list", "starred": [r["id"] for r in records],
                   "dismissed": []}],
        "papers": {r["id"]: {"title": r["title"], "keywords": r.get("keywords", [])}
                   for r in records}})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Any]]]:
    records = dev_records(PAPERS)
    engine = SearchEngine.build(tmp_path_factory.mktemp("large") / "index", records,
                                vectors=dev_vectors(PAPERS))
    try:
        with LiveServer(create_app(engine, compute_map=False)) as url:
            yield url, records
    finally:
        engine.close()


def test_a_thousand_starred_papers_recommend_in_one_request(
        site: tuple[str, list[Any]]) -> None:
    from playwright.sync_api import sync_playwright

    url, records = site
    starred = records[:PAPERS:PAPERS // STARRED][:STARRED]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_FLAGS)
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto(f"{url}/")
        tab.evaluate("(value) => localStorage.setItem('embedsearch.library', value)",
                     library(starred))
        requests: list[str] = []
        tab.on("request", lambda request: requests.append(f"{request.method} {request.url}"))
        tab.goto(f"{url}/#/recommended")
        tab.reload()
        expect(tab.locator("#status")).to_contain_text(f"papers like the {STARRED} starred",
                                                       timeout=WAIT_MS)
        hits = tab.eval_on_selector_all(".result", "els => els.map(e => e.dataset.id)")
        ids = {record["id"] for record in starred}
        assert len(hits) == 20 and not ids & set(hits)
        notes = tab.locator(".result .note").all_inner_texts()
        assert all(note.startswith("because you have “") for note in notes)
        assert sum("/similar" in r for r in requests) == 1
        assert not any("/papers/" in r for r in requests)  # no record fetched
        tab.click("#tab-library")
        expect(tab.locator("#status")).to_contain_text(f"{STARRED} starred papers",
                                                       timeout=WAIT_MS)
        assert tab.locator("ol.results > .result").count() == STARRED
        browser.close()
    assert not errors, errors
