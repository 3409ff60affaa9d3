#!/usr/bin/env python3
"""How long the page takes to show Recommended and Library for a reading list of 1,000
starred papers, over an index of the dev corpus (issue 31: "the page stays responsive
with a library of 1,000 starred papers").

The index is built from the stored embeddings (no encoding), served by `embedsearch
serve` on a free port, and driven by Debian's Chromium through Playwright: the starred
papers (one in every 79 dev papers) are put in the page's stored reading list, then
each view is opened `--runs` times (after one warm-up) and timed from the navigation to
the status line that says it is shown. Medians are printed.

    python scripts/page_library_timing.py --data ../shared/data/papers
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from embedsearch.engine import SearchEngine  # noqa: E402
from embedsearch.evaluation.devset import DevSet  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(index: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "embedsearch.cli", "serve", "--index",
                               str(index), "--port", str(port), "--no-map", "--quiet"])
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{url}/health", timeout=1).close()
            return server, url
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not start")


def timed(tab: object, url: str, view: str, expect_text: str) -> float:
    from playwright.sync_api import expect

    start = time.perf_counter()
    tab.goto(f"{url}/#/{view}")  # type: ignore[attr-defined]
    tab.reload()  # type: ignore[attr-defined]
    expect(tab.locator("#status")).to_contain_text(  # type: ignore[attr-defined]
        expect_text, timeout=120_000)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/papers")
    parser.add_argument("--starred", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    dev = DevSet(args.data)
    vectors = dev.stored_vectors()
    assert vectors is not None, "needs the stored embeddings"
    step = len(dev.papers) // args.starred
    starred = dev.papers[::step][: args.starred]
    library = json.dumps({
        "version": 1, "current": "Reading list",
        "lists": [{"name": "Reading list", "starred": [p.id for p in starred],
                   "dismissed": []}],
        "papers": {p.id: {"title": p.title, "keywords": list(p.keywords)} for p in starred}})
    with tempfile.TemporaryDirectory() as folder:
        SearchEngine.build(Path(folder) / "index", dev.papers, vectors=vectors).close()
        server, url = serve(Path(folder) / "index")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                     args=["--no-sandbox", "--disable-gpu"])
                tab = browser.new_page()
                tab.goto(f"{url}/")
                tab.evaluate("(v) => localStorage.setItem('embedsearch.library', v)", library)
                views = {"recommended": f"papers like the {len(starred)} starred",
                         "library": f"{len(starred)} starred papers"}
                seconds: dict[str, list[float]] = {view: [] for view in views}
                for view, text in views.items():
                    timed(tab, url, view, text)  # warm: the model, FAISS, the browser
                for _ in range(args.runs):
                    for view, text in views.items():
                        seconds[view].append(timed(tab, url, view, text))
                browser.close()
        finally:
            server.terminate()
            server.wait(30)
    print(f"{len(starred)} starred papers over {len(dev.papers):,} dev papers; "
          f"median of {args.runs} runs, navigation to the view shown")
    for view, times in seconds.items():
        print(f"  {view:<12} {statistics.median(times):.2f} s (min {min(times):.2f}, "
              f"max {max(times):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
