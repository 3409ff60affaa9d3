"""Papers read in full over HTTP: the passage in /search hits, GET /papers/{id}/passages,
and GET /papers/{id}/file, which serves the PDF the index recorded and nothing else,
behind the token like every route.

The index is test_full_text's: abstracts, plus a "host" paper whose passages are other
seed papers' abstracts, one section a page, read from a real PDF typeset here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from embedsearch import Paper, SearchEngine
from embedsearch.bundled import corpus_files
from embedsearch.readers import read_papers
from embedsearch.server import create_app
from tests.fulltext import DONOR, fulltext_papers

LOCAL = "http://localhost"
READ = "read-token-0123456789abcdef"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Paper]]:
    folder = tmp_path_factory.mktemp("served")
    papers, donors = fulltext_papers(folder)
    SearchEngine.build(folder / "index", papers).close()
    return folder / "index", folder / "host.pdf", donors


@pytest.fixture(scope="module")
def engine(built: tuple[Path, Path, list[Paper]]) -> Iterator[SearchEngine]:
    opened = SearchEngine.open(built[0])
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def client(engine: SearchEngine) -> Iterator[TestClient]:
    with TestClient(create_app(engine, compute_map=False), base_url=LOCAL) as client:
        yield client


def test_search_hits_carry_the_passage_with_its_page(client: TestClient,
                                                     built: tuple[Path, Path, list[Paper]]
                                                     ) -> None:
    donor = built[2][DONOR]
    hits = client.get("/search", params={"q": donor.title, "k": 5}).json()["hits"]
    assert hits[0]["id"] == "host"
    passage = hits[0]["passage"]
    assert passage["page"] == 4 and passage["page_label"] == "102"
    assert passage["section"] == "3 Part 3" and passage["text"] in donor.abstract
    assert "file" not in hits[0]  # the server's paths are its own
    assert all("passage" not in hit for hit in hits if hit["id"] not in
               ("host", "lost", "notpdf"))


def test_passages_lists_the_papers_passages_in_order(client: TestClient,
                                                     engine: SearchEngine) -> None:
    listed = client.get("/papers/host/passages")
    assert listed.status_code == 200
    expected = [passage.to_dict() for passage in engine.passages("host")]
    assert listed.json() == expected and len(expected) >= 5
    assert [p["page"] for p in expected] == sorted(p["page"] for p in expected)
    abstract_only = client.get(f"/papers/{read_papers(corpus_files())[0].id}/passages")
    assert abstract_only.status_code == 200 and abstract_only.json() == []


def test_the_file_route_serves_the_recorded_pdf_inline(client: TestClient,
                                                       built: tuple[Path, Path, list[Paper]]
                                                       ) -> None:
    response = client.get("/papers/host/file")
    assert response.status_code == 200
    assert response.content == built[1].read_bytes()
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"].startswith("inline")
    assert "host.pdf" in response.headers["content-disposition"]
    assert response.headers["x-content-type-options"] == "nosniff"
    # The browser's PDF viewer is not refused (object-src), and no site may frame it.
    assert response.headers["content-security-policy"] == "frame-ancestors 'none'"
    assert response.headers["x-frame-options"] == "DENY"
    assert "object-src 'none'" in client.get("/").headers["content-security-policy"]


@pytest.mark.parametrize(("paper_id", "says"), [
    ("no-such-paper", "no paper with id"),
    ("000_ae22c05437d8edef:1", "not read from a file"),  # a seed abstract: no file
    ("lost", "no longer where it was indexed"),
    ("notpdf", "not a PDF"),
    ("../../etc/passwd", "no paper with id"),
])
def test_the_file_route_refuses_what_it_cannot_serve(client: TestClient, paper_id: str,
                                                     says: str) -> None:
    for route in ("file", "passages") if paper_id == "no-such-paper" else ("file",):
        # Quoted as the page sends ids: "../" reaches the route as part of the id.
        response = client.get(f"/papers/{quote(paper_id, safe='')}/{route}")
        assert response.status_code == 404, response.text
        body = response.json()
        assert body["parameter"] == "paper_id" and says in body["detail"]
        assert "/" not in body["detail"].replace(paper_id, "")  # no server path shown


def test_the_file_and_passages_need_the_token_when_one_is_set(engine: SearchEngine) -> None:
    app = create_app(engine, compute_map=False, read_token=READ)
    with TestClient(app, base_url=LOCAL) as guarded:
        for path in ("/papers/host/file", "/papers/host/passages"):
            refused = guarded.get(path)
            assert refused.status_code == 401 and refused.json()["parameter"] == "Authorization"
            assert b"%PDF" not in refused.content
            wrong = guarded.get(path, headers={"Authorization": "Bearer not-the-token-at-all"})
            assert wrong.status_code == 401
            assert guarded.get(path, headers={"Authorization": f"Bearer {READ}"}
                               ).status_code == 200
        stranger = guarded.get("/papers/host/file", headers={
            "Host": "evil.example", "Authorization": f"Bearer {READ}"})
        assert stranger.status_code == 400 and stranger.json()["parameter"] == "Host"
