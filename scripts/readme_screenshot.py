#!/usr/bin/env python3
"""Draw README's picture of the search page (docs/images/page.png) from what the page
shows today, so the picture cannot keep a score or a button the page has dropped.

It builds the bundled sample's index in a temporary folder, serves it with `embedsearch
serve` on a free port, and has Debian's Chromium (through Playwright) search the quick
start's query and take a 1280x860 screenshot of the page.

    python scripts/readme_screenshot.py            # writes docs/images/page.png
    python scripts/readme_screenshot.py --out /tmp/page.png
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from embedsearch import SearchEngine  # noqa: E402
from embedsearch.bundled import corpus_files  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
QUERY = "low-rank visual prompting"  # README's quick start searches this
WAIT_S = 180


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(url: str, server: subprocess.Popen[bytes]) -> None:
    """Return once `url` answers; fail if the server exits or WAIT_S pass first."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"embedsearch serve exited with {server.returncode}")
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"embedsearch serve did not answer at {url} in {WAIT_S} s")


def shoot(url: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(url)
        page.fill("#q", QUERY)
        page.keyboard.press("Enter")
        page.wait_for_selector("li.result", timeout=WAIT_S * 1000)
        page.locator("#q").blur()  # no focus ring in the picture
        page.wait_for_timeout(500)  # the facets' chart draws after the hits
        page.screenshot(path=str(out))
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "page.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        index = Path(folder) / "iclr2025"
        SearchEngine.build_from_files(index, corpus_files()).close()
        command = [sys.executable, "-m", "embedsearch.cli"]
        port = free_port()
        server = subprocess.Popen([*command, "serve", "--index", str(index), "--port",
                                   str(port), "--no-map"])
        try:
            wait_for(f"http://127.0.0.1:{port}/health", server)
            shoot(f"http://127.0.0.1:{port}/", args.out)
        finally:
            server.terminate()
            server.wait()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
