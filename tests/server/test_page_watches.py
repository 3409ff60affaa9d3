"""The page's "New since your last visit", in headless Chromium: the saved searches of
the index (made on the command line's side, here through `engine.watches`), what each
lists on a first visit, on a reload, and on the next visit after more papers arrive."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

from embedsearch import SearchEngine  # noqa: E402
from embedsearch.server import create_app  # noqa: E402
from embedsearch.watches.saved import Watch  # noqa: E402
from tests.server.test_live_server import CHROMIUM, CHROMIUM_FLAGS, LiveServer  # noqa: E402
from tests.server.test_page import WAIT_MS, shot  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at "
                       "/usr/bin/chromium (apt-get install chromium)"),
]

FIRST = {"id": "new:patches", "title": "Visual prompting with learned pixel patches",
         "abstract": "Visual prompting learns pixel patches added to images so that a frozen "
                     "pre-trained model solves a new task with few trainable parameters."}
SECOND = {"id": "new:frames", "title": "Visual prompts as learned image frames",
          "abstract": "We learn a frame of pixels around each image, a visual prompt that "
                      "adapts a frozen pre-trained vision model to a new task."}


@pytest.fixture
def served(seed_index: Path, tmp_path: Path) -> Iterator[tuple[SearchEngine, str]]:
    target = tmp_path / "index"
    shutil.copytree(seed_index, target)
    engine = SearchEngine.open(target)
    engine.watches.add(Watch(name="prompts", query="visual prompting"))
    engine.add([FIRST])
    try:
        with LiveServer(create_app(engine, compute_map=False)) as url:
            yield engine, url
    finally:
        engine.close()


def new_ids(tab: Any) -> list[str]:
    return list(tab.eval_on_selector_all("#new-since .result",
                                         "els => els.map(e => e.dataset.id)"))


def test_new_papers_of_the_saved_searches_since_the_last_visit(
        served: tuple[SearchEngine, str]) -> None:
    from playwright.sync_api import sync_playwright

    engine, url = served
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        first = context.new_page()
        first.on("pageerror", lambda exc: errors.append(str(exc)))
        first.goto(f"{url}/")
        heading = first.locator("#new-since h2")
        expect(heading).to_have_text("New in the last week", timeout=WAIT_MS)
        assert FIRST["id"] in new_ids(first)  # the watch's hits, the newest paper among them
        feed = first.locator("#new-since h3 a")
        assert feed.get_attribute("href") == "/feeds/prompts.atom"
        shot(first, "new-since")
        first.reload()  # the same visit: still what was new when it began
        expect(heading).to_have_text("New in the last week", timeout=WAIT_MS)
        assert FIRST["id"] in new_ids(first)

        second = context.new_page()  # the next visit: nothing has arrived since the last
        second.goto(f"{url}/")
        expect(second.locator("#new-since")).to_contain_text(
            "Nothing new for your 1 saved searches since your last visit", timeout=WAIT_MS)
        engine.add([SECOND])
        third = context.new_page()
        third.goto(f"{url}/")
        expect(third.locator("#new-since h2")).to_have_text("New since your last visit",
                                                            timeout=WAIT_MS)
        assert new_ids(third) == [SECOND["id"]]
        browser.close()
    assert not errors, errors
