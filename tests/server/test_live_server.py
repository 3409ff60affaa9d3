"""A real server on 127.0.0.1: concurrent clients get the same answers as one client,
the command line starts it, and headless Chromium (Debian's) uses the page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from embedsearch import SearchEngine
from embedsearch.search.retrieval import MAX_QUERY_CHARS
from embedsearch.server import create_app

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
QUERIES = ["low-rank visual prompting", "offline reinforcement learning from preferences",
           "language model agents on the web", "audio representation learning",
           "diffusion models for images", "bandits", "3D object grounding", "graph networks"]


class LiveServer:
    """uvicorn serving an app in a thread, on a free loopback port; `options` are
    uvicorn's (as `serve` passes them)."""

    def __init__(self, app: Any, **options: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def listening_url(process: subprocess.Popen[str], wait: float) -> str:
    """Where an `embedsearch serve` subprocess (stderr piped, as text) says it listens,
    read from its log within `wait` seconds."""
    assert process.stderr is not None
    url, deadline = "", time.monotonic() + wait
    while not url and time.monotonic() < deadline:
        line = process.stderr.readline()
        found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", line)
        url = found.group(1) if found else ""
        assert line or process.poll() is None, "the server exited"
    assert url, "the server did not say where it listens"
    return url


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def map_engine(seed_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        SearchEngine]:
    """A copy of the seed index, for a server that computes and stores its map."""
    import shutil

    target = tmp_path_factory.mktemp("live") / "index"
    shutil.copytree(seed_index, target)
    engine = SearchEngine.open(target)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def live(map_engine: SearchEngine) -> Iterator[str]:
    app = create_app(map_engine)
    with LiveServer(app) as url:
        app.state.maps.wait(60)
        yield url


def search_url(base: str, query: str, k: int = 5) -> str:
    return f"{base}/search?{urllib.parse.urlencode({'q': query, 'k': k})}"


def test_concurrent_clients_get_the_answers_of_one(live: str) -> None:
    expected = {query: get(search_url(live, query)) for query in QUERIES}
    paper = expected[QUERIES[0]]["hits"][0]["id"]
    similar = get(f"{live}/papers/{urllib.parse.quote(paper)}/similar?k=5")
    jobs = [search_url(live, QUERIES[i % len(QUERIES)]) for i in range(96)]
    jobs += [f"{live}/papers/{urllib.parse.quote(paper)}/similar?k=5"] * 16
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(get, jobs))
    for url, answer in zip(jobs, answers):
        if "/similar" in url:
            assert answer == similar
            continue
        # Batched encoding pads queries together: scores agree to float precision.
        alone = expected[answer["query"]]
        assert [h["id"] for h in answer["hits"]] == [h["id"] for h in alone["hits"]]
        assert [h["score"] for h in answer["hits"]] == pytest.approx(
            [h["score"] for h in alone["hits"]], abs=1e-4)


def test_reads_during_writes_never_fail(seed_index: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(seed_index, tmp_path / "index")
    engine = SearchEngine.open(tmp_path / "index")
    paper = engine.search("low-rank visual prompting", k=1)[0].paper.id
    reads = [search_url("", query) for query in QUERIES] + [
        f"/papers/{urllib.parse.quote(paper)}", f"/papers/{urllib.parse.quote(paper)}/similar"]
    failures: list[str] = []
    with LiveServer(create_app(engine, allow_writes=True, compute_map=False)) as url:
        done = threading.Event()

        def reader(offset: int) -> None:
            count = offset
            while not done.is_set():
                path = reads[count % len(reads)]
                count += 1
                try:
                    get(url + path)
                except Exception as exc:  # any failure of a read is the bug
                    failures.append(f"{path}: {exc}")

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        try:
            for number in range(3):
                body = json.dumps({"papers": [{"id": f"w:{number}", "abstract":
                                               f"Paper number {number} about robots."}]})
                request = urllib.request.Request(f"{url}/papers", data=body.encode(),
                                                 headers={"content-type": "application/json"})
                with urllib.request.urlopen(request, timeout=60) as response:
                    assert json.load(response)["added"] == 1
                delete = urllib.request.Request(f"{url}/papers/w:{number}", method="DELETE")
                with urllib.request.urlopen(delete, timeout=60) as response:
                    assert json.load(response)["removed"] == 1
        finally:
            done.set()
            for thread in threads:
                thread.join(30)
    engine.close()
    assert not failures, failures[:5]


def test_serve_command_binds_loopback_and_serves(seed_index: Path) -> None:
    command = [sys.executable, "-m", "embedsearch.cli", "serve", "--index", str(seed_index),
               "--port", "0", "--no-map"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = listening_url(process, 90)
        assert get(f"{url}/health") == {"status": "ok", "papers": 38}
        assert get(f"{url}/info")["writable"] is False
        assert get(f"{url}/map")["status"] == "off"
        # A GET carries the longest query even at 9 bytes a character percent-encoded
        # (a 180 KB URL, past uvicorn's default 16 KiB).
        longest = ("扩散模型" * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
        assert len(get(search_url(url, longest, 3))["hits"]) == 3
    finally:
        process.terminate()
        process.wait(20)


@pytest.mark.parametrize(("made", "message"), [
    ("file", "broken.bib is a file, not an index folder; build an index of it with "
             "`embedsearch build broken.bib --out DIR` and open DIR"),
    ("folder", "broken.bib holds no embedsearch index (manifest.json is missing)"),
])
def test_serve_of_something_that_is_no_index_says_what_it_is(tmp_path: Path, made: str,
                                                              message: str) -> None:
    # `--index broken.bib` answered "[Errno 20] Not a directory: 'broken.bib/manifest.json'".
    given = tmp_path / "broken.bib"
    if made == "file":
        given.write_text("@article{a, title={A title}}\n", encoding="utf-8")
    else:
        given.mkdir()
    done = subprocess.run([sys.executable, "-m", "embedsearch.cli", "serve", "--index",
                           given.name, "--port", "0", "--no-map"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"embedsearch: error: {message}")
    assert done.stderr.count("\n") == 1


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(),
                    reason="needs Debian's Chromium at /usr/bin/chromium (apt-get install "
                           "chromium)")
def test_the_page_in_headless_chromium(live: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    shots = Path(os.environ.get("EMBEDSEARCH_SCREENSHOTS", tmp_path))
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1280, "height": 900})
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("requestfailed", lambda request: errors.append(request.url))
            page.goto(f"{live}/")
            # From the keyboard: the search box has the focus, Enter searches.
            page.keyboard.type("low-rank visual prompting")
            page.keyboard.press("Enter")
            page.wait_for_selector(".result")
            first = page.locator(".result a.title").first
            assert "Visual prompting" in first.inner_text()
            assert page.locator(".result").count() == 20
            meta = page.locator(".result .meta").first.inner_text()
            assert re.search(r"score \d\.\d\d", meta)
            # The evidence sentence, its matching words marked.
            assert page.locator(".result .evidence mark").count() > 0
            page.screenshot(path=str(shots / "search.png"))
            page.keyboard.press("Escape")  # leave the box; '/' comes back to it
            page.keyboard.press("/")
            assert page.evaluate("document.activeElement.id") == "q"
            # Down from the search box moves to the first result, j and k along them,
            # Enter opens the paper page with its similar papers.
            page.keyboard.press("ArrowDown")
            page.keyboard.press("j")
            page.keyboard.press("k")
            assert page.evaluate("document.activeElement.textContent").startswith("Visual")
            page.keyboard.press("Enter")
            page.wait_for_selector("#similar-heading")
            assert page.locator("h1.page-title").inner_text().startswith("Visual prompting")
            assert page.locator(".result").count() == 10
            page.screenshot(path=str(shots / "paper.png"))
            # "More like this" on a similar paper lists the papers like that one.
            page.locator(".result button.more").first.click()
            # Locator assertions, not wait_for_function: the CSP forbids the eval it polls with.
            expect(page).to_have_url(re.compile(r"#/similar/"))
            # The paper page's results stay until the new list replaces them: wait for it.
            expect(page.locator("#status")).to_contain_text("papers most like")
            assert page.locator(".result").count() == 20  # the page's k, 20 by default
            # The map: every paper drawn, the query's results highlighted, titles on hover.
            page.goto(f"{live}/#/map?q=visual+prompting")
            page.wait_for_selector("#map canvas")
            expect(page.locator("#status")).to_contain_text("results for")
            status = page.locator("#status").inner_text()
            assert "38 papers" in status and "10 results" in status
            assert page.locator(".cluster-list button").count() >= 3
            page.screenshot(path=str(shots / "map.png"))
            page.set_viewport_size({"width": 390, "height": 844})
            page.goto(f"{live}/#/search?q=language+model+agents")
            page.wait_for_selector(".result")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, "the page scrolls sideways on a phone"
            page.screenshot(path=str(shots / "phone.png"))
        finally:
            browser.close()
    assert not errors, errors
    assert all((shots / name).stat().st_size > 10_000 for name in
               ("search.png", "paper.png", "map.png", "phone.png"))
