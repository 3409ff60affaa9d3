"""The HTTP API in-process (FastAPI's TestClient) over real seed indexes: every endpoint,
every error path, and hits shaped exactly like `embedsearch search --json` lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from embedsearch import SearchEngine
from embedsearch.server import create_app
from embedsearch.server.schemas import LIMITS
from tests.conftest import CliResult

LOCAL = "http://localhost"  # a Host the server answers to (not TestClient's "testserver")
LORVP = "000_ae22c05437d8edef:1"  # the LoR-VP (low-rank visual prompting) abstract
NEW_PAPER = {"id": "new:qec", "title": "Surface codes on superconducting qubits",
             "abstract": "We study quantum error correction with surface codes on "
                         "superconducting qubits and measure logical error rates.",
             "venue": "QIP", "year": 2024, "keywords": ["quantum error correction"]}


@pytest.fixture(scope="module")
def client(seed_engine: SearchEngine) -> Iterator[TestClient]:
    """Read-only API over the shared seed index (no map computation: tested below)."""
    with TestClient(create_app(seed_engine, compute_map=False), base_url=LOCAL) as client:
        yield client


@pytest.fixture
def writable(seed_copy: Path) -> Iterator[tuple[TestClient, SearchEngine]]:
    engine = SearchEngine.open(seed_copy)
    with TestClient(create_app(engine, allow_writes=True, compute_map=False),
                    base_url=LOCAL) as client:
        yield client, engine
    engine.close()


def error(response: object, status: int, parameter: str | None) -> str:
    """The message of an error response, after checking its status and parameter."""
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["parameter"] == parameter and body["detail"]
    return str(body["detail"])


def test_search_hits_have_the_cli_json_shape(client: TestClient,
                                             cli: Callable[..., CliResult],
                                             seed_index: Path) -> None:
    response = client.get("/search", params={"q": "low-rank visual prompting", "k": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["query"] == "low-rank visual prompting" and body["k"] == 3
    assert body["mode"] == "hybrid" and body["filters"]["venues"] == []
    expected = cli("search", "low-rank visual prompting", "--index", seed_index, "-k", "3",
                   "--json").json_lines()
    assert body["hits"] == expected  # same keys, same order, same values
    assert list(body["hits"][0]) == list(expected[0]) and body["hits"][0]["id"] == LORVP


def test_search_filters(client: TestClient) -> None:
    hits = client.get("/search", params={"q": "agents", "year": "2025", "venue": ["iclr", "X"],
                                         "k": 5}).json()["hits"]
    assert len(hits) == 5 and all(h["venue"] == "ICLR" and h["year"] == 2025 for h in hits)
    assert client.get("/search", params={"q": "agents", "year": "1990-1999"}).json()["hits"] == []
    body = client.get("/search", params={"q": "agents", "keyword": "nothing-such"}).json()
    assert body["hits"] == [] and body["filters"]["keywords"] == ["nothing-such"]


@pytest.mark.parametrize(("params", "parameter"), [
    ({}, "q"),
    ({"q": ""}, "q"),
    ({"q": "   "}, "q"),
    ({"q": "x" * (LIMITS.query_chars + 1)}, "q"),
    ({"q": "x", "k": 0}, "k"),
    ({"q": "x", "k": LIMITS.k + 1}, "k"),
    ({"q": "x", "k": "ten"}, "k"),
    ({"q": "x", "mode": "fuzzy"}, "mode"),
    ({"q": "x", "year": "20x5"}, "year"),
    ({"q": "x", "year": "2025-2020"}, "year"),
    ({"q": "x", "venue": ""}, "venue"),
    ({"q": "x", "keyword": " "}, "keyword"),
    ({"q": "x", "venue": ["v"] * (LIMITS.filter_values + 1)}, "venue"),
])
def test_search_rejects_bad_parameters(client: TestClient, params: dict[str, object],
                                       parameter: str) -> None:
    message = error(client.get("/search", params=params), 422, parameter)
    assert message.startswith(f"{parameter}: ")


@pytest.mark.parametrize(("params", "detail"), [
    ({"year": "20x5"}, "year: expected a year or a range such as 2023-2025, got '20x5'"),
    ({"year": "2025-2020"}, "year: the range 2025-2020 runs backwards; write 2020-2025"),
    ({"venue": " "}, "venue: empty value"),
])
def test_filter_errors_name_the_request_field(client: TestClient, params: dict[str, object],
                                              detail: str) -> None:
    """The engine names the argument at fault; the server words it as its field, never
    as the CLI's flag (--year)."""
    parameter = detail.split(":")[0]
    body = {"queries": ["x"], **{name: value if name == "year" else [value]
                                 for name, value in params.items()}}
    for response in (client.get("/search", params={"q": "x", **params}),
                     client.post("/search", json=body)):
        assert error(response, 422, parameter) == detail


def test_batch_search_matches_single_searches(client: TestClient) -> None:
    queries = ["diffusion models for images", "offline reinforcement learning"]
    response = client.post("/search", json={"queries": queries, "k": 4, "year": "2025"})
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["query_index"] for r in results] == [0, 1]
    for result, query in zip(results, queries):
        single = client.get("/search", params={"q": query, "k": 4}).json()["hits"]
        assert [h["id"] for h in result["hits"]] == [h["id"] for h in single]
        assert all(h["query"] == query and h["query_index"] == result["query_index"]
                   for h in result["hits"])


@pytest.mark.parametrize(("body", "parameter"), [
    ({"queries": []}, "queries"),
    ({"queries": ["ok", " "]}, "queries.1"),
    ({"queries": ["ok"] * (LIMITS.batch + 1)}, "queries"),
    ({"queries": ["ok"], "k": 0}, "k"),
    ({"queries": ["ok"], "year": "soon"}, "year"),
    ({"queries": "just one"}, "queries"),
    ({"queries": ["ok"], "extra": 1}, "extra"),
    ({}, "queries"),
])
def test_batch_search_rejects_bad_bodies(client: TestClient, body: dict[str, object],
                                         parameter: str) -> None:
    error(client.post("/search", json=body), 422, parameter)


def test_batch_search_rejects_broken_json(client: TestClient) -> None:
    response = client.post("/search", content=b'{"queries": [',
                           headers={"content-type": "application/json"})
    error(response, 422, "body")


def test_paper_and_similar(client: TestClient, seed_engine: SearchEngine) -> None:
    paper = client.get(f"/papers/{LORVP}").json()
    assert paper == seed_engine.get(LORVP).to_dict()
    body = client.get(f"/papers/{LORVP}/similar", params={"k": 5}).json()
    assert body["query_id"] == LORVP and len(body["hits"]) == 5
    assert LORVP not in {hit["id"] for hit in body["hits"]}
    assert [h["id"] for h in body["hits"]] == [h.paper.id for h in seed_engine.similar(LORVP, 5)]
    assert all(hit["query_id"] == LORVP for hit in body["hits"])
    error(client.get(f"/papers/{LORVP}/similar", params={"k": 0}), 422, "k")
    error(client.get(f"/papers/{LORVP}/similar", params={"year": "x"}), 422, "year")


@pytest.mark.parametrize("path", ["/papers/nope", "/papers/nope/similar", "/papers/a/b",
                                  "/papers/%2Fslash%2F/similar", "/papers/"])
def test_unknown_papers_are_404(client: TestClient, path: str) -> None:
    assert "no paper with id" in error(client.get(path), 404, "paper_id")


def test_info_health_and_schema(client: TestClient, seed_engine: SearchEngine) -> None:
    info = client.get("/info").json()
    assert info["count"] == len(seed_engine) == client.get("/health").json()["papers"]
    assert info["writable"] is False and info["limits"]["k"] == LIMITS.k
    assert "path" not in info and info["name"] == seed_engine.path.name
    assert info["map"] in ("off", "ready")
    schema = client.get("/openapi.json").json()
    assert {"/search", "/papers/{paper_id}", "/papers/{paper_id}/similar", "/info", "/health",
            "/map", "/papers"} <= set(schema["paths"])
    assert client.get("/docs").status_code == 200


def test_unknown_routes_and_methods(client: TestClient) -> None:
    assert client.get("/nothing").status_code == 404
    assert client.put("/search").status_code == 405


def test_read_only_refuses_writes(client: TestClient) -> None:
    assert "--allow-writes" in error(client.post("/papers", json={"papers": [NEW_PAPER]}),
                                     403, None)
    error(client.delete(f"/papers/{LORVP}"), 403, None)
    assert client.get(f"/papers/{LORVP}").status_code == 200


def test_writes_add_and_remove(writable: tuple[TestClient, SearchEngine]) -> None:
    client, engine = writable
    before = len(engine)
    body = client.post("/papers", json={"papers": [NEW_PAPER]}).json()
    assert body == {"added": 1, "skipped": 0, "removed": 0, "count": before + 1}
    hits = client.get("/search", params={"q": "quantum error correction", "k": 1}).json()
    assert hits["hits"][0]["id"] == NEW_PAPER["id"]
    again = client.post("/papers", json={"papers": [NEW_PAPER]}).json()
    assert again["added"] == 0 and again["skipped"] == 1
    assert SearchEngine.open(engine.path).info().count == before + 1  # published on disk
    assert client.delete(f"/papers/{NEW_PAPER['id']}").json()["count"] == before
    error(client.delete(f"/papers/{NEW_PAPER['id']}"), 404, "paper_id")
    error(client.get(f"/papers/{NEW_PAPER['id']}"), 404, "paper_id")


@pytest.mark.parametrize(("paper", "parameter"), [
    ({"abstract": "no id"}, "papers.0.id"),
    ({"id": "x", "abstract": "   "}, "papers.0.abstract"),
    ({"id": "x", "abstract": "ok", "year": 99}, "papers.0.year"),
    ({"id": "x", "abstract": "ok", "authors": "A; B"}, "papers.0.authors"),
    ({"id": "x", "abstract": "ok", "colour": "red"}, "papers.0.colour"),
])
def test_bad_papers_are_refused_and_nothing_changes(
        writable: tuple[TestClient, SearchEngine], paper: dict[str, object],
        parameter: str) -> None:
    client, engine = writable
    before = sorted(p.name for p in engine.path.iterdir())
    batch = [NEW_PAPER, paper]
    parameter = parameter.replace("papers.0", "papers.1")
    error(client.post("/papers", json={"papers": batch}), 422, parameter)
    assert NEW_PAPER["id"] not in engine and sorted(p.name for p in engine.path.iterdir()) == before


def test_request_body_limit(client: TestClient) -> None:
    huge = json.dumps({"queries": ["x" * 1000] * 9000})
    response = client.post("/search", content=huge, headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_page_and_assets_are_served_locally(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for asset in ("/static/app.js", "/static/style.css", "/static/vendor/echarts-6.1.0.min.js"):
        assert client.get(asset).status_code == 200, asset
    for text in (page.text, client.get("/static/app.js").text):
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in text and "//cdn" not in text


def test_batched_searches_answer_each_request_as_alone(seed_engine: SearchEngine) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from embedsearch import Filters, QueryError
    from embedsearch.server.batching import SearchBatcher

    batcher = SearchBatcher(seed_engine)
    asks = [(query, k, Filters.parse(year=year)) for query in
            ("visual prompting", "bandits", "web agents", "audio") for k in (3, 7)
            for year in (None, "2025")] + [("   ", 5, Filters())]
    try:
        with ThreadPoolExecutor(max_workers=len(asks)) as pool:
            futures = [pool.submit(batcher.search, *ask) for ask in asks]
        for (query, k, filters), future in zip(asks[:-1], futures):
            expected = seed_engine.search(query, k, filters=filters)
            assert [h.paper.id for h in future.result()] == [h.paper.id for h in expected]
        with pytest.raises(QueryError):  # only the bad request fails
            futures[-1].result()
    finally:
        batcher.close()


def test_the_map_follows_writes_and_is_never_stale(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    app = create_app(engine, allow_writes=True)
    with TestClient(app, base_url=LOCAL) as client:
        app.state.maps.wait(60)
        ready = client.get("/map").json()
        assert ready["status"] == "ready" and ready["count"] == 38 == len(ready["ids"])
        assert len(ready["x"]) == len(ready["titles"]) == len(ready["cluster"]) == 38
        assert {c["id"] for c in ready["clusters"]} == set(ready["cluster"])
        assert client.get("/info").json()["map"] == "ready"
        client.post("/papers", json={"papers": [NEW_PAPER]})
        after = client.get("/map").json()
        assert after["status"] == "computing" or after["count"] == 39  # never the old map
        app.state.maps.wait(60)
        fresh = client.get("/map").json()
        assert fresh["status"] == "ready" and NEW_PAPER["id"] in fresh["ids"]
    engine.close()


def test_collections_are_kept_and_filter_with_sub_collections(
        writable: tuple[TestClient, SearchEngine]) -> None:
    client, _ = writable
    paper = {**NEW_PAPER, "collections": ["Lab/Quantum"]}
    assert client.post("/papers", json={"papers": [paper]}).json()["added"] == 1
    for name in ("quantum", "Lab", "lab/quantum"):
        body = client.get("/search", params={"q": "surface codes", "collection": name}).json()
        assert [hit["id"] for hit in body["hits"]] == ["new:qec"], name
        assert body["hits"][0]["collections"] == ["Lab/Quantum"]
        assert body["filters"]["collections"] == [name]
    assert client.get("/search", params={"q": "surface codes",
                                         "collection": "Quantum/Lab"}).json()["hits"] == []
    assert client.get(f"/papers/{LORVP}").json()["collections"] == []
    error(client.get("/search", params={"q": "x", "collection": " "}), 422, "collection")


def test_post_similar_takes_the_method(client: TestClient, seed_engine: SearchEngine) -> None:
    papers = [{"id": f"mine:{n}", "abstract": seed_engine.get(paper_id).abstract}
              for n, paper_id in enumerate(("000_ae22c05437d8edef:2",
                                            "000_ae22c05437d8edef:9", LORVP))]
    for method in ("clusters", "mean", "classifier", "nearest"):
        body = client.post("/similar", json={"papers": papers, "k": 5,
                                             "method": method}).json()
        expected = seed_engine.similar_to_papers(papers, k=5, method=method)
        assert [hit["id"] for hit in body["hits"]] == [hit.paper.id for hit in expected]
    default = client.post("/similar", json={"papers": papers, "k": 5}).json()
    assert [hit["id"] for hit in default["hits"]] == [
        hit.paper.id for hit in seed_engine.similar_to_papers(papers, k=5)]
    error(client.post("/similar", json={"papers": papers, "method": "magic"}), 422, "method")
