"""Hostile request bodies for POST /search and POST /papers, from hypothesis.

Bodies are random JSON built around each endpoint's fields, every field drawn from its
valid values, values of every wrong type (nested, huge, NUL bytes, lone surrogates,
absurd numbers) or left out, with ids drawn from a small pool (duplicates, papers
already there); plus raw bytes that are not JSON or not UTF-8. The only outcomes
allowed are a 2xx, or a 4xx whose JSON names the parameter at fault: never a 5xx,
never an exception out of the app. The app allows writes behind a token, on a private
copy of the seed index, and the client sends the token. The default run tries a few
hundred bodies; `-m exhaustive` runs 10,000 per endpoint.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedsearch import SearchEngine
from embedsearch.server import create_app

TOKEN = "fuzz-token-0123456789abcdef"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
DEFAULT_CASES = 80  # per endpoint and generator: 320 bodies, seconds
SLOW_CASES = 5_000  # per endpoint and generator: 10,000 per endpoint
BUDGETS = [pytest.param(DEFAULT_CASES, id="default"),
           pytest.param(SLOW_CASES, id="slow", marks=[pytest.mark.slow, pytest.mark.exhaustive])]
TALLY: Counter[tuple[str, int]] = Counter()

NASTY = st.sampled_from(["", " ", "\x00", "a\x00b", "\ud800", "\udfff", "\ufeff", "\u2028",
                         "论文", "é", "\\", '"', "{", "}", "-", "2024-", "-2024", "0-0"])
TEXT = st.text(max_size=40) | NASTY | st.lists(NASTY, max_size=5).map("".join)
HUGE = st.sampled_from([1_001, 10_000, 100_001, 1_000_000]).map(lambda n: "x" * n)
NUMBER = st.sampled_from([0, -1, 1, 100, 101, 999, 1000, 9999, 10_000, 10**30, -(10**30),
                          2**63, 0.5, 1e308, float("inf"), float("nan"), True, False])
LEAF = st.none() | st.booleans() | NUMBER | st.integers() | st.floats() | TEXT
JSON = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)
# Nesting too deep for json.dumps: a placeholder that `json_bytes` expands.
DEEP = st.sampled_from([2, 100, 1_000, 5_000, 50_000]).map(lambda depth: f"\x01DEEP{depth}\x01")
_DEEP = re.compile(rb'"\\u0001DEEP(\d+)\\u0001"')


WRONG = JSON | HUGE | DEEP


def any_of(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's value: often valid, else of any wrong type or size."""
    return st.one_of(valid, valid, WRONG)


def shaped(required: dict[str, st.SearchStrategy[Any]],
           optional: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies with these fields: all valid, one of them wrong, each of them anything, or
    with a field the endpoint does not know."""
    valid = st.fixed_dictionaries(required, optional=optional)
    names = st.sampled_from(sorted({*required, *optional}))
    one_wrong = st.builds(lambda body, name, value: {**body, name: value}, valid, names, WRONG)
    anything = st.fixed_dictionaries({name: any_of(value) for name, value in required.items()},
                                     optional={name: any_of(value)
                                               for name, value in optional.items()})
    unknown = st.builds(lambda body, name, value: {**body, name: value}, valid, TEXT, JSON)
    return st.one_of(valid, one_wrong, anything, unknown)


WORDS = st.lists(st.sampled_from(["robots", "graph", "diffusion", "bandits", "learning",
                                  "attention", "policy", "quantum"]), min_size=1,
                 max_size=8).map(" ".join)
PLAIN = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)  # NULs included
QUERIES = st.lists(WORDS | PLAIN.map(lambda text: text + " x"), min_size=1, max_size=4)
# No full batches of 64 valid queries: each takes seconds here; 65 are refused.
OVER_BATCH = st.fixed_dictionaries({"queries": st.lists(WORDS, min_size=65, max_size=70)})
SEARCH = shaped({"queries": QUERIES},
                {"k": st.integers(1, 100),
                 "mode": st.sampled_from(["hybrid", "dense", "lexical"]),
                 "year": st.sampled_from(["2024", "2023-2025", "2023-", "-2024"]) | st.none(),
                 "venue": st.lists(st.sampled_from(["ICLR", "iclr", "NeurIPS"]), max_size=3),
                 "keyword": st.lists(st.sampled_from(["diffusion", "bandits"]), max_size=3)})
IDS = st.sampled_from(["fuzz:1", "fuzz:2", "fuzz:\x00", "fuzz:é", "000_ae22c05437d8edef:1"])
PAPER_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "title": PLAIN, "authors": st.lists(PLAIN, max_size=3), "keywords": st.lists(PLAIN, max_size=3),
    "venue": PLAIN, "year": st.integers(1000, 9999) | st.none(), "url": PLAIN, "tldr": PLAIN,
    "primary_area": PLAIN}
PAPER = shaped({"id": IDS, "abstract": WORDS}, PAPER_FIELDS)
VALID_PAPER = st.fixed_dictionaries({"id": IDS, "abstract": WORDS}, optional=PAPER_FIELDS)
PAPERS = shaped({"papers": st.lists(VALID_PAPER, min_size=1, max_size=3,
                                    unique_by=lambda paper: paper["id"])}, {}) | \
    st.fixed_dictionaries({"papers": st.lists(PAPER, max_size=4)})
BODIES = {"/search": SEARCH | OVER_BATCH | JSON, "/papers": PAPERS | JSON}


def json_bytes(value: Any) -> bytes:
    """JSON text as a client would send it (lone surrogates escaped, as JSON allows;
    NaN and Infinity as Python writes them), with DEEP placeholders expanded."""
    return _DEEP.sub(lambda found: b"[" * int(found[1]) + b"]" * int(found[1]),
                     json.dumps(value).encode())


def broken(value: Any) -> st.SearchStrategy[bytes]:
    """Bytes near a body: cut short, with invalid UTF-8 or NUL bytes put in, or random."""
    text = json_bytes(value)
    return st.one_of(
        st.integers(0, len(text)).map(lambda cut: text[:cut]),
        st.tuples(st.integers(0, len(text)), st.sampled_from(
            [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\\u0000"])).map(
            lambda spot: text[:spot[0]] + spot[1] + text[spot[0]:]),
        st.binary(max_size=200))


@pytest.fixture(scope="module")
def client(seed_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    target = tmp_path_factory.mktemp("bodies") / "index"
    shutil.copytree(seed_index, target)
    engine = SearchEngine.open(target)
    app = create_app(engine, allow_writes=True, compute_map=False, token=TOKEN)
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=True) as client:
        yield client
    engine.close()


def check(client: TestClient, path: str, body: bytes) -> None:
    response = client.post(path, content=body, headers=HEADERS)
    TALLY[(path, response.status_code)] += 1
    assert response.status_code < 500, (body[:300], response.text[:300])
    if response.status_code >= 400:
        assert 400 <= response.status_code < 500
        answer = response.json()
        assert isinstance(answer.get("parameter"), str) and answer["parameter"], answer
        assert isinstance(answer.get("detail"), str) and answer["detail"], answer


def fuzz(cases: int) -> Any:
    return settings(max_examples=cases, deadline=None, derandomize=cases == DEFAULT_CASES,
                    database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("path", sorted(BODIES))
@pytest.mark.parametrize("cases", BUDGETS)
def test_random_json_bodies(client: TestClient, path: str, cases: int) -> None:
    @fuzz(cases)
    @given(body=BODIES[path])
    def run(body: Any) -> None:
        check(client, path, json_bytes(body))

    run()
    # The generator reaches the endpoint's work, not only its validation.
    assert TALLY[(path, 200)] > 0 and TALLY[(path, 422)] > 0, TALLY


@pytest.mark.parametrize("path", sorted(BODIES))
@pytest.mark.parametrize("cases", BUDGETS)
def test_bytes_that_are_not_json(client: TestClient, path: str, cases: int) -> None:
    @fuzz(cases)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        body = data.draw(BODIES[path])
        check(client, path, data.draw(broken(body)))

    run()


def test_duplicate_and_present_ids(client: TestClient) -> None:
    """Named cases the generators may miss: one paper twice, a paper already indexed."""
    twice = {"papers": [{"id": "dup:1", "abstract": "robots"},
                        {"id": "dup:1", "abstract": "more robots"}]}
    response = client.post("/papers", content=json_bytes(twice), headers=HEADERS)
    assert response.status_code == 422 and response.json()["parameter"] == "papers"
    present = {"papers": [{"id": "000_ae22c05437d8edef:1", "abstract": "robots"}]}
    response = client.post("/papers", content=json_bytes(present), headers=HEADERS)
    assert response.status_code == 200 and response.json()["skipped"] == 1
    depth = 100_000
    for path in BODIES:
        check(client, path, b"[" * depth + b"]" * depth)
        check(client, path, b'{"a":' * depth + b"1" + b"}" * depth)
