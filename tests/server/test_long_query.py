"""A query as long as an abstract in every face: the command line, the HTTP API (GET and
POST) and the page in Chromium answer a 10,000-character query alike, and refuse one
over the limit with its length and the limit, never cutting it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedsearch import SearchEngine
from embedsearch.search.retrieval import MAX_QUERY_CHARS
from embedsearch.server import create_app
from embedsearch.server.serving import MAX_REQUEST_HEAD_BYTES
from embedsearch.text.words import FUNCTION_WORDS
from tests.conftest import CliResult
from tests.search.test_retrieval import long_query
from tests.server.test_live_server import CHROMIUM, CHROMIUM_FLAGS, LiveServer, get, search_url

LONG = 10_000
K = 20  # the page's default
OVER = f"{MAX_QUERY_CHARS + 1:,} characters long; the limit is {MAX_QUERY_CHARS:,}: shorten it"


@pytest.fixture(scope="module")
def query(seed_engine: SearchEngine) -> str:
    return long_query(seed_engine, LONG)


@pytest.fixture(scope="module")
def site(seed_engine: SearchEngine) -> Iterator[str]:
    app = create_app(seed_engine, compute_map=False)
    with LiveServer(app, h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES) as url:
        yield url


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(f"{url}/search", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


def refused_get(url: str) -> tuple[int, Any]:
    try:
        return 200, get(url)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


def cli_ids(cli: Callable[..., CliResult], index: Path, query: str) -> list[object]:
    result = cli("search", query, "--index", index, "-k", str(K), "--format", "jsonl")
    assert result.code == 0, result.err
    return [hit["id"] for hit in result.json_lines()]


def test_the_cli_and_the_api_answer_a_long_query_alike(
        site: str, query: str, seed_index: Path, cli: Callable[..., CliResult]) -> None:
    expected = cli_ids(cli, seed_index, query)
    assert len(expected) == K
    by_get = get(search_url(site, query, K))
    assert by_get["query"] == query  # whole, never cut
    assert [hit["id"] for hit in by_get["hits"]] == expected
    status, by_post = post(site, {"queries": [query], "k": K})
    assert status == 200 and [hit["id"] for hit in by_post["results"][0]["hits"]] == expected
    assert get(f"{site}/info")["limits"]["query_chars"] == MAX_QUERY_CHARS


def test_over_the_limit_each_face_says_by_how_much(
        site: str, seed_index: Path, cli: Callable[..., CliResult]) -> None:
    over = "x" * (MAX_QUERY_CHARS + 1)
    result = cli("search", over, "--index", seed_index)
    assert result.code == 1 and result.err == f"embedsearch: error: the query is {OVER}\n"
    assert refused_get(search_url(site, over)) == (422, {"detail": f"q: {OVER}",
                                                         "parameter": "q"})
    assert post(site, {"queries": ["bandits", over]}) == (
        422, {"detail": f"queries.1: {OVER}", "parameter": "queries.1"})


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at "
                    "/usr/bin/chromium (apt-get install chromium)")
def test_the_page_takes_a_pasted_long_query_folds_it_and_refuses_one_too_long(
        site: str, query: str, seed_index: Path, cli: Callable[..., CliResult],
        tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    from playwright.sync_api import expect, sync_playwright

    from tests.server.test_page import shot

    expected = cli_ids(cli, seed_index, query)
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900},
                                      permissions=["clipboard-read", "clipboard-write"])
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        searches: list[str] = []
        page.on("request", lambda request: searches.append(request.method)
                if "/search" in request.url else None)
        page.goto(f"{site}/")
        expect(page.locator("#index-info")).to_contain_text("38 papers")  # /info read
        # Pasted as a reader would, whole: the box has no maxlength to cut it.
        page.evaluate("(text) => navigator.clipboard.writeText(text)", query)
        page.click("#q")
        page.keyboard.press("Control+V")
        assert page.input_value("#q") == query
        page.keyboard.press("Enter")
        expect(page.locator("#status")).to_have_text(f"{K} papers closest to your query",
                                                      timeout=30_000)
        shown = page.eval_on_selector_all(".result", "els => els.map(e => e.dataset.id)")
        assert shown == expected
        assert searches == ["POST"]  # too long for a URL a proxy passes
        # Echoed folded to one line, opened from the keyboard to the whole text.
        echo = page.locator("details.query-echo")
        assert echo.get_attribute("open") is None
        expect(echo.locator("summary")).to_contain_text(f"Your query, {LONG:,} characters")
        assert echo.locator("summary").bounding_box()["height"] < 50  # type: ignore[index]
        echo.locator("summary").focus()
        page.keyboard.press("Enter")
        assert echo.get_attribute("open") == ""
        # All of it, typeset as abstracts are (its math and **bold**): first to last word.
        full = " ".join(echo.locator(".query-full").inner_text().split())
        assert full.startswith(query[:200]) and full.endswith(query[-60:])
        marks = {word.lower() for word in page.locator(".evidence mark").all_inner_texts()}
        assert marks and not marks & FUNCTION_WORDS
        shot(page, "long-query")
        # One character over the limit: said beside the box, and nothing is sent.
        page.fill("#q", "x" * (MAX_QUERY_CHARS + 1))
        expect(page.locator("#q-message")).to_have_text(
            f"The query is {MAX_QUERY_CHARS + 1:,} characters long; the limit is "
            f"{MAX_QUERY_CHARS:,}. Shorten it to search.")
        assert page.get_attribute("#q", "aria-invalid") == "true"
        page.keyboard.press("Enter")
        page.wait_for_timeout(300)
        assert searches == ["POST"]
        page.fill("#q", "bandits")
        expect(page.locator("#q-message")).to_be_hidden()
        context.close()
        browser.close()
    assert not errors, errors
