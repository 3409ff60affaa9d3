"""The score agrees with the order in every face: on real queries of the seed index, the
first number shown beside a hit never increases down a list, in Python, the command
line's text and JSON lines, the HTTP API, the MCP tools, a digest's text, HTML and JSON,
and the page (in Chromium). Searches in every mode, a --diverse search, similar papers
and a recommendation from example papers (whose clusters method interleaves topics)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from embedsearch import Paper, SearchEngine
from embedsearch.server import create_app
from embedsearch.watches.digests import digest
from embedsearch.watches.feeds import digest_text
from embedsearch.watches.mails import digest_html
from embedsearch.watches.saved import Watch
from tests.conftest import CliResult, write_jsonl

QUERIES = ["low-rank visual prompting", "offline reinforcement learning from preferences",
           "language model agents on the web", "diffusion models for images",
           "audio representation learning"]
#: Example papers outside the index on two topics, so the clusters method takes turns.
EXAMPLES = [
    {"id": "mine:1", "title": "Prompt tuning for frozen vision transformers",
     "abstract": "We adapt a frozen pre-trained vision transformer to new image "
                 "classification tasks by learning a few visual prompt tokens."},
    {"id": "mine:2", "title": "Reward models from human preferences",
     "abstract": "We learn a reward model from pairwise human preferences and train a "
                 "policy with reinforcement learning against it, offline."},
    {"id": "mine:3", "title": "Soft prompts for image classifiers",
     "abstract": "Learned pixel prompts let a frozen image model solve a new task."},
]
SINCE_EVER = "1970-01-01T00:00:00.000000Z"
#: The number at the start of a hit's line: "  1.  0.653  Title" (CLI), "1. ID | … | score
#: 0.653" (MCP), "  1. Title  [id]" then "     score 0.65" (a digest's text).
CLI_LINE = re.compile(r"^\s*\d+\.\s+(-?\d+\.\d+)\s", re.M)
MCP_LINE = re.compile(r"^\d+\. \S+ \|.*\| score (-?\d+\.\d+)$", re.M)
DIGEST_LINE = re.compile(r"^\s+score (-?\d+\.\d+)", re.M)
HTML_SCORE = re.compile(r"· score (-?\d+\.\d+)")  # a hit's, not the floor's
PAGE_SCORE = re.compile(r"^score (-?\d+\.\d+)$")


def descending(values: Sequence[float], where: str) -> None:
    assert values, f"{where}: no hits"
    assert all(a >= b for a, b in zip(values, values[1:])), f"{where}: {list(values)}"


def test_python_hits_are_shown_best_first_in_every_mode(seed_engine: SearchEngine) -> None:
    reordered = 0
    for query in QUERIES:
        for mode in ("hybrid", "dense", "lexical"):
            hits = seed_engine.search(query, k=10, mode=mode)
            descending([hit.score for hit in hits], f"{mode} {query!r}")
            assert [hit.rank for hit in hits] == list(range(1, len(hits) + 1))
            table = [float(line.split()[1]) for line in repr(hits).splitlines()[1:]]
            descending(table, f"repr {mode} {query!r}")
            cosines = [hit.similarity for hit in hits]
            if mode == "dense":
                assert cosines == [hit.score for hit in hits]
            reordered += cosines != sorted(cosines, reverse=True)  # type: ignore[type-var]
        diverse = seed_engine.search(query, k=8, diverse=True)
        descending([hit.score for hit in diverse], f"diverse {query!r}")
    # Ranked by shared words as well as meaning, the cosines alone are out of order: the
    # score shown is the ranking's, not the cosine.
    assert reordered


def test_recommendations_are_shown_by_their_similarity_to_the_library(
        seed_engine: SearchEngine) -> None:
    for method in ("clusters", "mean", "classifier", "nearest"):
        hits = seed_engine.similar_to_papers(EXAMPLES, k=10, method=method)
        descending([hit.score for hit in hits], method)
        assert all(hit.score == hit.because[0].similarity == hit.similarity for hit in hits)
    ids = [hit.id for hit in seed_engine.search(QUERIES[0], k=2)]
    descending([hit.score for hit in seed_engine.similar(ids, k=10)], "similar")
    descending([hit.score for hit in seed_engine.similar(ids, k=10, diverse=True)],
               "similar --diverse")


def test_the_command_line_shows_scores_best_first(
        cli: Callable[..., CliResult], seed_index: Path, tmp_path: Path) -> None:
    for query in QUERIES[:3]:
        text = cli("search", query, "--index", seed_index).out
        descending([float(v) for v in CLI_LINE.findall(text)], f"text {query!r}")
        lines = cli("search", query, "--index", seed_index, "--format", "jsonl",
                    "--diverse").json_lines()
        descending([float(hit["score"]) for hit in lines],  # type: ignore[arg-type]
                   f"jsonl {query!r}")
    examples = write_jsonl(tmp_path / "examples.jsonl", EXAMPLES)
    text = cli("similar", "--from", examples, "--index", seed_index, "-k", "10").out
    descending([float(v) for v in CLI_LINE.findall(text)], "similar --from")


def test_the_http_api_answers_scores_best_first(seed_engine: SearchEngine) -> None:
    with TestClient(create_app(seed_engine, compute_map=False),
                    base_url="http://localhost") as client:
        for query in QUERIES:
            for mode in ("hybrid", "lexical"):
                hits = client.get("/search", params={"q": query, "mode": mode}).json()["hits"]
                descending([hit["score"] for hit in hits], f"GET /search {mode} {query!r}")
        batch = client.post("/search", json={"queries": QUERIES}).json()["results"]
        for result in batch:
            descending([hit["score"] for hit in result["hits"]], "POST /search")
        for diverse in (False, True):
            hits = client.post("/similar", json={"papers": EXAMPLES, "diverse": diverse}
                               ).json()["hits"]
            descending([hit["score"] for hit in hits], f"POST /similar diverse={diverse}")
        first = batch[0]["hits"][0]["id"]
        hits = client.get(f"/papers/{first}/similar").json()["hits"]
        descending([hit["score"] for hit in hits], "GET /papers/ID/similar")


def test_the_mcp_tools_answer_scores_best_first(seed_engine: SearchEngine) -> None:
    pytest.importorskip("mcp")
    from embedsearch.integrations.mcp import create_server
    from tests.assistant import calls, text

    server = create_server(seed_engine, local=True)
    requests = [("search", {"query": query}) for query in QUERIES]
    requests += [("search", {"query": QUERIES[0], "mode": "lexical"}),
                 ("recommend", {"papers": [example["title"] for example in EXAMPLES]})]
    for (tool, arguments), answer in zip(requests, calls(server, *requests)):
        descending([float(v) for v in MCP_LINE.findall(text(answer))], f"{tool} {arguments}")


def test_a_digest_lists_scores_best_first_in_every_format(seed_copy: Path) -> None:
    with SearchEngine.open(seed_copy) as engine:
        watches = [Watch(name=f"q{number}", query=query, min_similarity=-1.0, k=10)
                   for number, query in enumerate(QUERIES)]
        library = tuple(Paper(**paper) for paper in EXAMPLES)
        watches.append(Watch(name="lab", papers=library, min_similarity=-1.0, k=10))
        found = digest(engine, watches, since=SINCE_EVER)
    for section in found.sections:
        descending([hit.score for hit in section.hits], section.watch.name)
    text = digest_text(found)
    html = digest_html(found)
    # Each format's part per watch, and in it every hit's score: as many as the hits.
    faces = {"text": (text.split("\n== ")[1:], DIGEST_LINE),
             "html": (html.split("<h2")[1:], HTML_SCORE)}
    for face, (parts, pattern) in faces.items():
        assert len(parts) == len(found.sections), face
        for section, body in zip(found.sections, parts):
            shown = [float(value) for value in pattern.findall(body)]
            assert len(shown) == len(section.hits) > 0, (face, section.watch.name)
            descending(shown, f"{face} {section.watch.name}")
    for section in json.loads(json.dumps(found.to_dict()))["watches"]:
        descending([hit["score"] for hit in section["hits"]], f"json {section['watch']}")


# -- the page -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def page_site(seed_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("playwright")
    from tests.server.test_live_server import CHROMIUM, LiveServer

    if not CHROMIUM.exists():
        pytest.skip("needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium)")
    target = tmp_path_factory.mktemp("scores") / "index"
    shutil.copytree(seed_index, target)
    with SearchEngine.open(target) as engine, \
            LiveServer(create_app(engine, compute_map=False)) as url:
        yield url


@pytest.mark.slow
def test_the_page_shows_scores_best_first(page_site: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.server.test_live_server import CHROMIUM, CHROMIUM_FLAGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_FLAGS)
        page: Any = browser.new_page()
        try:
            for query in QUERIES[:3]:
                page.goto(f"{page_site}/#/search?q={query.replace(' ', '+')}")
                expect(page.locator("#status")).to_contain_text("closest", timeout=30_000)
                shown = page.eval_on_selector_all(
                    "ol.results > .result .score", "els => els.map(e => e.textContent)")
                descending([float(PAGE_SCORE.search(v).group(1)) for v in shown],  # type: ignore[union-attr]
                           f"page {query!r}")
        finally:
            browser.close()
