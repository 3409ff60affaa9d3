"""Saved searches and digests, end to end on a copy of the seed index: the watches file,
what a digest lists (only papers received since, only those alike enough), the command
line (watch add/list/remove, digest in every format, --since-last), the HTTP API and
its Atom feeds, checked against RFC 4287's schema with a RELAX NG validator."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from lxml import etree
from rnc2rng import parser as rnc_parser
from rnc2rng import serializer as rnc_serializer

from embedsearch import Filters, Paper, QueryError, SearchEngine
from embedsearch.cli import main
from embedsearch.cli import watches as cli_watches
from embedsearch.errors import IndexCorruptError
from embedsearch.server import create_app
from embedsearch.text.dates import now, span_in_words
from embedsearch.watches.digests import LIBRARY_FLOOR, QUERY_FLOOR, digest
from embedsearch.watches.feeds import atom_feed, floor_text, index_name
from embedsearch.watches.mails import digest_html
from embedsearch.watches.saved import WATCH_K, WATCHES_FILE, Watch, WatchList
from tests.conftest import REPO, CliResult

ATOM_SCHEMA = REPO / "tests" / "data" / "schemas" / "atom.rnc"
ATOM = "{http://www.w3.org/2005/Atom}"
#: This week's papers: three on graph neural networks, two on nothing the watch wants.
GRAPHS = [
    {"id": "week:gnn-1", "title": "Message passing graph neural networks for molecules",
     "authors": ["Ada Lovelace"], "url": "https://example.org/gnn-1",
     "abstract": "Graph neural networks learn node representations by message passing "
                 "between neighbouring nodes; we apply them to molecular property "
                 "prediction and outperform fingerprint baselines."},
    {"id": "week:gnn-2", "title": "Oversmoothing in deep graph neural networks",
     "abstract": "Deep graph neural networks suffer from oversmoothing: node features "
                 "become indistinguishable as layers are stacked. We analyse message "
                 "passing on graphs and propose a residual fix."},
    {"id": "week:gnn-3", "title": "Graph transformers versus message passing",
     "doi": "10.1234/gt.2026",
     "abstract": "We compare graph transformers with message passing graph neural networks "
                 "on node classification and graph regression benchmarks."},
]
OTHERS = [
    {"id": "week:soil", "title": "Soil moisture in alpine meadows",
     "abstract": "We measure soil moisture across alpine meadows over three summers and "
                 "relate it to snowmelt timing and plant cover."},
    {"id": "week:opera", "title": "Baroque opera staging",
     "abstract": "A history of stage machinery in baroque opera houses of northern Italy."},
]
GNN_IDS = {paper["id"] for paper in GRAPHS}


def listed_right(ids: set[str]) -> bool:
    """What the "graph neural networks" watch lists of this week: graph papers only, and
    at least the two clearest (the third, which shares the watch's words with the other
    two, ranks below both; in a week of five its score is under the floor)."""
    return ids <= GNN_IDS and len(ids) >= 2


def atom_schema() -> etree.RelaxNG:
    """RFC 4287's grammar, compiled from its compact syntax. (rnc2rng declares the
    empty "local" namespace prefix, which XML forbids; the nsName it writes is right.)"""
    grammar = rnc_serializer.XMLSerializer().toxml(
        rnc_parser.parse(ATOM_SCHEMA.read_text(encoding="utf-8")))
    return etree.RelaxNG(etree.fromstring(grammar.replace('xmlns:local=""', "").encode()))


def assert_valid_atom(body: bytes) -> Any:
    feed = etree.fromstring(body)
    schema = atom_schema()
    assert schema.validate(feed), schema.error_log
    # The schema's Schematron rules, by hand: every entry has an author (its own or the
    # feed's) and an alternate link or content.
    has_author = feed.find(f"{ATOM}author") is not None
    for entry in feed.iter(f"{ATOM}entry"):
        assert has_author or entry.find(f"{ATOM}author") is not None
        assert entry.find(f"{ATOM}content") is not None or any(
            link.get("rel", "alternate") == "alternate" for link in entry.iter(f"{ATOM}link"))
    return feed


@pytest.fixture
def watched(seed_copy: Path) -> tuple[SearchEngine, str]:
    """The seed index with a watch on graph neural networks, then this week's papers
    added; and the instant between the two."""
    engine = SearchEngine.open(seed_copy)
    engine.watches.add(Watch(name="gnn", query="graph neural networks"))
    before = now()
    engine.add(GRAPHS + OTHERS)
    return engine, before


def test_the_watch_list_keeps_checks_and_forgets(tmp_path: Path) -> None:
    watches = WatchList(tmp_path)
    assert watches.all() == [] and not (tmp_path / WATCHES_FILE).exists()
    kept = watches.add(Watch(name="gnn", query="graph neural networks",
                             filters=Filters.parse(year="2024-", venues=["ICLR"]), k=5))
    assert kept.created and kept.kind == "query"
    assert WatchList(tmp_path).get("gnn") == kept  # read back from the file as written
    with pytest.raises(QueryError, match="exists") as taken:
        watches.add(Watch(name="gnn", query="other"))
    assert taken.value.parameter == "name"
    watches.add(Watch(name="gnn", query="graphs", k=5), replace_existing=True)
    assert [watch.query for watch in watches.all()] == ["graphs"]
    for bad, field in [(Watch(name="a b", query="x"), "name"),
                       (Watch(name="x", query=""), "query"),
                       (Watch(name="x", query="q", k=0), "k"),
                       (Watch(name="x", query="q", min_similarity=2.0), "min_similarity")]:
        with pytest.raises(QueryError) as refused:
            watches.add(bad)
        assert refused.value.parameter == field
    # A pasted abstract may be a watch's query, up to the search's limit; its line in a
    # digest or a feed quotes its opening.
    abstract = "graph neural networks for molecules " * 50
    long = watches.add(Watch(name="abstract", query=abstract))
    assert long.describe().startswith('"graph neural networks for molecules graph')
    assert long.describe().endswith('…"') and len(long.describe()) <= 82
    with pytest.raises(QueryError, match="characters long; the limit is 20,000"):
        watches.add(Watch(name="huge", query="x" * 20_001))
    watches.remove("abstract")
    watches.mark_read(["gnn"], "2026-12-06T00:00:00.000000Z")
    assert watches.get("gnn").last_digest == "2026-12-06T00:00:00.000000Z"
    assert watches.remove("gnn").name == "gnn" and watches.all() == []
    with pytest.raises(QueryError, match="no watch called 'gnn'"):
        watches.get("gnn")
    (tmp_path / WATCHES_FILE).write_text("{not json")
    with pytest.raises(IndexCorruptError, match="remove the file"):
        watches.all()


def test_a_digest_lists_what_arrived_since_and_is_alike(
        watched: tuple[SearchEngine, str]) -> None:
    engine, before = watched
    found = digest(engine, engine.watches.all())  # from the watch's creation
    section = found.sections[0]
    assert section.arrived == len(GRAPHS) + len(OTHERS)
    assert listed_right({hit.paper.id for hit in section.hits})  # the seeds are older
    assert all(hit.score >= QUERY_FLOOR for hit in section.hits)
    assert [hit.rank for hit in section.hits] == list(range(1, len(section.hits) + 1))
    assert set(section.added) == {hit.paper.id for hit in section.hits}
    assert all(before < when <= found.until for when in section.added.values())
    # A watch of its own floor lists more, and one after the papers lists nothing.
    loose = Watch(name="loose", query="graph neural networks", min_similarity=-1.0)
    assert len(digest(engine, [loose], since=before).sections[0].hits) == 5
    assert digest(engine, [loose], since=now()).sections[0].hits == []


def test_a_library_watch_finds_the_papers_like_its_own(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    library = (Paper(id="lab:1", abstract="", title="Graph neural networks for node "
                                                      "classification"),
               Paper(id="lab:2", title="Message passing neural networks for quantum chemistry",
                     abstract="Message passing neural networks operate on molecular graphs "
                              "and predict quantum chemical properties."))
    engine.watches.add(Watch(name="lab", papers=library, source="lab.bib"))
    start = now()
    engine.add(GRAPHS + OTHERS)
    section = digest(engine, [engine.watches.get("lab")], since=start).sections[0]
    found = {hit.paper.id for hit in section.hits}
    assert found and found <= GNN_IDS
    assert all(hit.because and hit.because[0].similarity >= section.floor
               for hit in section.hits)


def test_the_command_line_saves_lists_digests_and_marks_read(
        watched: tuple[SearchEngine, str], cli: Callable[..., CliResult],
        tmp_path: Path) -> None:
    engine, before = watched
    index = str(engine.path)
    bib = tmp_path / "lab.bib"
    bib.write_text("@article{a, title={Oversmoothing of deep graph networks}}\n"
                   "@article{b, title={Message passing on molecular graphs}}\n")
    assert cli("watch", "add", "lab", "--from", bib, "--index", index).code == 0
    listed = cli("watch", "list", "--index", index, "--json")
    assert [json.loads(line)["name"] for line in listed.out.splitlines()] == ["gnn", "lab"]
    refused = cli("watch", "add", "x", "--index", index)
    assert refused.code == 1 and "QUERY or --from" in refused.err
    shown = cli("digest", "--index", index, "--since", before, "--format", "json")
    data = json.loads(shown.out)
    gnn = data["watches"][0]
    assert listed_right({hit["id"] for hit in gnn["hits"]})
    assert all(hit["score"] >= QUERY_FLOOR and hit["added"] > before
               for hit in gnn["hits"])
    assert engine.watches.get("gnn").last_digest == ""  # --since marks nothing read
    text = cli("digest", "--index", index, "--watch", "gnn").out  # --since-last
    assert "week:gnn-1" in text and "week:soil" not in text
    assert engine.watches.get("gnn").last_digest > before
    again = cli("digest", "--index", index, "--watch", "gnn")
    assert "nothing new" in again.out and "week:gnn-1" not in again.out
    atom = cli("digest", "--index", index, "--since", before, "--format", "atom",
               "--watch", "gnn")
    feed = assert_valid_atom(atom.out.encode())
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == len(gnn["hits"])
    assert all(entry.find(f"{ATOM}category").get("term") == "gnn" for entry in entries)
    page = cli("digest", "--index", index, "--since", "1d", "--format", "html").out
    assert page.startswith("<!doctype html>") and "Oversmoothing" in page
    assert cli("watch", "remove", "lab", "--index", index).code == 0
    missing = cli("digest", "--index", index, "--watch", "lab")
    assert missing.code == 1 and "no watch called 'lab'" in missing.err


def test_feed_entries_keep_their_ids_and_escape_what_they_quote(
        watched: tuple[SearchEngine, str]) -> None:
    engine, before = watched
    engine.add([{"id": "week:xss", "title": "Graph <b>neural</b> networks & <script>",
                 "abstract": "Graph neural networks <img src=x onerror=alert(1)> pass "
                             "messages between nodes of graphs."}])
    found = digest(engine, engine.watches.all(), since=before)
    first, second = (atom_feed(found, index=index_name(engine.info())) for _ in range(2))
    assert first == second
    feed = assert_valid_atom(first)
    titles = [entry.findtext(f"{ATOM}title") for entry in feed.iter(f"{ATOM}entry")]
    assert "Graph <b>neural</b> networks & <script>" in titles  # text, parsed back
    page = digest_html(found)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_http_api_serves_watches_digests_and_feeds(
        watched: tuple[SearchEngine, str]) -> None:
    engine, before = watched
    client = TestClient(create_app(engine, compute_map=False), base_url="http://localhost")
    with client:
        watches = client.get("/watches").json()
        assert [(w["name"], w["kind"], w["papers"], w["floor"]) for w in watches] == [
            ("gnn", "query", 0, QUERY_FLOOR)]
        data = client.get("/digest", params={"since": before}).json()
        hits = data["watches"][0]["hits"]
        assert listed_right({hit["id"] for hit in hits})
        assert all("query_index" not in hit and hit["added"] > before for hit in hits)
        feed = client.get("/feeds/gnn.atom")
        assert feed.headers["content-type"].startswith("application/atom+xml")
        parsed = assert_valid_atom(feed.content)
        assert parsed.find(f"{ATOM}link[@rel='self']").get("href") == \
            "http://localhost/feeds/gnn.atom"
        titles = {entry.findtext(f"{ATOM}title") for entry in parsed.iter(f"{ATOM}entry")}
        assert {hit["title"] for hit in hits} <= titles  # the last 30 days
        week = assert_valid_atom(client.get("/feeds/gnn.atom", params={"since": before}).content)
        assert len(week.findall(f"{ATOM}entry")) == len(hits)
        missing = client.get("/feeds/nope.atom")
        assert missing.status_code == 404 and missing.json()["parameter"] == "name"
        bad: Any = client.get("/digest", params={"since": "next week"})
        assert bad.status_code == 422 and bad.json()["parameter"] == "since"
    assert engine.watches.get("gnn").last_digest == ""  # the server marks nothing read


def test_backups_and_restores_carry_the_saved_searches(
        watched: tuple[SearchEngine, str], cli: Callable[..., CliResult],
        tmp_path: Path) -> None:
    engine, _ = watched
    saved = tmp_path / "saved"
    assert cli("backup", saved, "--index", engine.path).code == 0
    assert [watch.name for watch in WatchList(saved).all()] == ["gnn"]
    engine.watches.remove("gnn")
    assert cli("restore", saved, "--index", engine.path).code == 0
    assert engine.watches.get("gnn").query == "graph neural networks"
    assert cli("check", "--index", engine.path).code == 0  # a side file is no stray


#: Each "score X or more" a face prints about a floor.
FLOOR_WORDS = re.compile(r"score (-?\d+\.\d+) or more")


def test_watch_list_shows_each_watchs_k_floor_and_filters(
        seed_copy: Path, cli: Callable[..., CliResult]) -> None:
    index = str(seed_copy)
    assert cli("watch", "add", "rl", "reinforcement learning", "--year", "2024-", "-k", "7",
               "--venue", "ICLR", "--venue", "NeurIPS", "--keyword", "bandits",
               "--index", index).code == 0
    assert cli("watch", "add", "all", "graph neural networks", "--index", index).code == 0
    text = cli("watch", "list", "--index", index).out
    rl, everything = text.split("\nall")
    assert "up to 7 papers" in rl and "years from 2024" in rl
    assert "venues ICLR or NeurIPS" in rl and "keyword bandits" in rl
    assert f"up to {WATCH_K} papers" in everything and "venue" not in everything
    assert set(FLOOR_WORDS.findall(text)) == {floor_text(QUERY_FLOOR)}
    listed = cli("watch", "list", "--index", index, "--json").json_lines()
    assert [(row["name"], row["k"], row["floor"], row["papers"]) for row in listed] == [
        ("rl", 7, QUERY_FLOOR, 0), ("all", WATCH_K, QUERY_FLOOR, 0)]
    assert listed[0]["filters"] == {"year_min": 2024, "year_max": None,
                                    "venues": ["ICLR", "NeurIPS"], "keywords": ["bandits"],
                                    "collections": [], "added_after": None}


def test_every_face_prints_the_floor_with_one_rounding(
        watched: tuple[SearchEngine, str], cli: Callable[..., CliResult]) -> None:
    engine, before = watched
    index = str(engine.path)
    faces = {"watch list": cli("watch", "list", "--index", index).out}
    for shape in ("text", "html", "atom"):
        faces[shape] = cli("digest", "--index", index, "--since", before, "--format",
                           shape).out
    printed = {face: set(FLOOR_WORDS.findall(out)) for face, out in faces.items()}
    assert printed == {face: {floor_text(QUERY_FLOOR)} for face in faces}
    assert floor_text(QUERY_FLOOR) == f"{QUERY_FLOOR:.3f}"


def test_the_defaults_the_help_and_the_docs_state_are_the_codes(
        capsys: pytest.CaptureFixture[str]) -> None:
    # One k: the command line's (spelled out, for its start-up time), the Watch's, and
    # what a watches file without one reads as.
    assert cli_watches.WATCH_K == WATCH_K == Watch(name="x", query="q").k
    assert Watch.from_dict({"name": "x", "query": "q"}).k == WATCH_K
    with pytest.raises(SystemExit) as done:
        main(["watch", "add", "--help"])
    shown = capsys.readouterr().out
    assert done.value.code == 0
    assert re.search(rf"-k K\s+how many papers \(default {WATCH_K}\)", shown), shown
    page = (REPO / "docs" / "how-to" / "digest.md").read_text()
    assert f"default {WATCH_K})" in page
    for floor in (QUERY_FLOOR, LIBRARY_FLOOR):
        assert f"(default **{floor_text(floor)}**)" in page


def test_the_html_digest_reads_as_a_mail(watched: tuple[SearchEngine, str]) -> None:
    engine, before = watched
    # Floor-free and k 3, so the week's three graph papers are listed whatever the
    # floor (the score's floor admits two of them): one with a URL, one with a DOI,
    # one with neither.
    (watch,) = engine.watches.all()
    found = digest(engine, [replace(watch, min_similarity=-1.0, k=3)], since=before)
    assert {hit.paper.id for hit in found.sections[0].hits} == {g["id"] for g in GRAPHS}
    page = digest_html(found, page_url="http://papers.lab:8000/")
    assert "<style" not in page and "<script" not in page and "src=" not in page
    # A heading in words, the days spelled out, not an instant.
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", page)
    assert heading and heading.group(1) == "New papers for your saved search “gnn”"
    lead = re.search(r"</h1>\s*<p[^>]*>(.*?)</p>", page)
    # The window is the seconds since `before`: its day (two, across a midnight).
    assert lead and re.fullmatch(r"[0-9–\s]+ [A-Z][a-z]+ 20\d\d( – .+)? · 3 papers listed",
                                 lead.group(1)), lead and lead.group(1)
    assert re.search(r"<h2[^>]*>“graph neural networks”", page)
    # Every title a link: its URL, its DOI, else its view on the server's page.
    links = dict(re.findall(r'<a style="[^"]*" href="([^"]+)">([^<]+)</a>', page))
    assert links == {"https://example.org/gnn-1": GRAPHS[0]["title"],
                     "https://doi.org/10.1234/gt.2026": GRAPHS[2]["title"],
                     "http://papers.lab:8000/#/paper/week%3Agnn-2": GRAPHS[1]["title"]}
    # Each element styled where it stands (mail clients drop style sheets).
    assert all('style="' in tag for tag in re.findall(r"<(?:h1|h2|p|ol|li|a)\b[^>]*>", page))
    assert "Ada Lovelace" in page


def test_a_digests_days_in_words_say_what_they_share_once() -> None:
    def days(start: str, end: str) -> str:
        return span_in_words(start and f"{start}T09:00:00.000000Z", f"{end}T07:30:00.000000Z")

    assert days("2026-12-07", "2026-12-07") == "7 December 2026"
    assert days("2026-12-01", "2026-12-07") == "1–7 December 2026"
    assert days("2026-11-28", "2026-12-07") == "28 November – 7 December 2026"
    assert days("2026-12-28", "2027-01-03") == "28 December 2026 – 3 January 2027"
    assert days("", "2026-12-07") == "up to 7 December 2026"
