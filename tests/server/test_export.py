"""POST /export: the page's export buttons get the command line's own files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from fastapi.testclient import TestClient

from embedsearch import SearchEngine, export, read_papers
from embedsearch.exporting import EXPORT_FORMATS, FORMATS
from embedsearch.server import create_app
from embedsearch.server.schemas import ExportIn
from tests.server.test_app import LOCAL, error


@pytest.fixture(scope="module")
def client(seed_engine: SearchEngine) -> Iterator[TestClient]:
    with TestClient(create_app(seed_engine, compute_map=False), base_url=LOCAL) as client:
        yield client


def test_the_endpoint_offers_every_format() -> None:
    assert get_args(ExportIn.model_fields["format"].annotation) == FORMATS


@pytest.mark.parametrize("format", FORMATS)
def test_hits_as_the_api_gave_them_export_as_the_command_line_writes(
        client: TestClient, seed_engine: SearchEngine, format: str) -> None:
    hits = client.get("/search", params={"q": "visual prompting", "k": 3}).json()["hits"]
    response = client.post("/export", json={"format": format, "papers": hits})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(EXPORT_FORMATS[format].media_type)
    papers = [seed_engine.get(hit["id"]) for hit in hits]
    assert response.text == export(papers, format)


def test_a_title_alone_is_filled_in_from_the_index_and_others_kept(
        client: TestClient, seed_engine: SearchEngine, tmp_path: Path) -> None:
    held = seed_engine.search("visual prompting", 1)[0].paper
    outside = {"id": "mine:1", "title": "My own paper on prompts", "authors": ["Ada Lovelace"],
               "year": 2024}
    response = client.post("/export", json={"format": "ris", "papers": [
        {"id": held.id, "title": "whatever the page had"}, outside]})
    assert response.status_code == 200, response.text
    path = tmp_path / "mine.ris"
    path.write_text(response.text, encoding="utf-8")
    back = read_papers([path], title_only=True)
    assert [paper.id for paper in back] == [held.id, "mine:1"]
    assert back[0].abstract == held.abstract and back[0].title == held.title
    assert back[1].title == outside["title"] and list(back[1].authors) == ["Ada Lovelace"]


def test_a_derived_title_is_not_exported_as_a_title(client: TestClient) -> None:
    record = {"id": "mine:2", "title": "We study things…", "title_derived": True,
              "abstract": "We study things. And more."}
    text = client.post("/export", json={"format": "csl-json", "papers": [record]}).text
    assert json.loads(text)[0]["title"] != record["title"]


def test_bad_requests_name_the_field(client: TestClient) -> None:
    paper = {"id": "x", "title": "A title"}
    error(client.post("/export", json={"format": "docx", "papers": [paper]}), 422, "format")
    error(client.post("/export", json={"format": "ris", "papers": []}), 422, "papers")
    no_text = client.post("/export", json={"format": "ris", "papers": [paper, {"id": "y"}]})
    assert "papers.1" in error(no_text, 422, "papers.1.abstract")
