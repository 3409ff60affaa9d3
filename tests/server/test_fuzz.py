"""Schema-driven fuzzing: schemathesis generates requests from the app's own OpenAPI
schema, valid and invalid, and every response must be no 5xx and match the schema.

Runs against a read-only app on the seed index and a writable one on a copy (so that
POST /papers and DELETE /papers/{id} are exercised for real), with schema-valid and
schema-violating requests. Examples per operation and mode are bounded (25) to keep
the run near half a minute.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from embedsearch import SearchEngine
from embedsearch.server import create_app

pytestmark = pytest.mark.slow

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
# The Host header schemathesis sends; the server refuses names it was not given.
HOST = "testserver"
# A bound on a hung request, not a speed check: on a 2-core machine running other jobs
# a batch of five searches took over schemathesis's default 10 s, failing the test.
RESPONSE_TIMEOUT_S = 120
FUZZ = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def read_only_app(seed_engine: SearchEngine) -> Any:
    return create_app(seed_engine, compute_map=False, allowed_hosts=[HOST])


@pytest.fixture(scope="module")
def writable_app(seed_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import shutil

    target = tmp_path_factory.mktemp("fuzz") / "index"
    shutil.copytree(seed_index, target)
    engine = SearchEngine.open(target)
    yield create_app(engine, allow_writes=True, compute_map=False, allowed_hosts=[HOST])
    engine.close()


def fuzz(schema: Any) -> list[str]:
    """Run every operation of `schema` through hypothesis; returns the operations run.

    (schemathesis's pytest fixture integration does not work with pytest 9, so the
    hypothesis test is made here, one per operation.)
    """
    labels = []
    for result in schema.get_all_operations():
        operation = result.ok()
        labels.append(operation.label)
        for mode in GenerationMode:  # valid requests, then invalid ones

            @FUZZ
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: Any) -> None:
                case.call_and_validate(checks=CHECKS, timeout=RESPONSE_TIMEOUT_S)

            try:
                run()
            except Unsatisfiable:
                # No request violates this schema (e.g. any text is a valid paper id).
                if mode is GenerationMode.POSITIVE:
                    raise
    return labels


def test_read_only_api_never_fails(read_only_app: Any) -> None:
    labels = fuzz(schemathesis.openapi.from_asgi("/openapi.json", read_only_app))
    assert {"GET /search", "POST /search", "GET /papers/{paper_id}", "GET /info",
            "GET /papers/{paper_id}/similar", "GET /health", "GET /map"} <= set(labels)


def test_writable_api_never_fails(writable_app: Any) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", writable_app)
    labels = fuzz(schema.include(path_regex="^/papers"))
    assert {"POST /papers", "DELETE /papers/{paper_id}"} <= set(labels)
