"""/mcp on a running `embedsearch serve`: the SDK's client over streamable HTTP gets
the tools stdio serves, behind the server's token and Host rules, and no file is read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from embedsearch import SearchEngine
from embedsearch.integrations.mcp import TOOLS, create_server
from tests.assistant import calls, child_env, listing, over_http, text
from tests.conftest import write_jsonl
from tests.server.test_live_server import listening_url

TOKEN = "read-token-for-the-mcp-tests-0123"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


@pytest.fixture(scope="module")
def served(seed_index: Path) -> Iterator[str]:
    """`embedsearch serve` whose reads need TOKEN; yields its /mcp URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "embedsearch.cli", "serve", "--index", str(seed_index),
         "--port", "0", "--no-map"], stderr=subprocess.PIPE, text=True,
        env={**os.environ, **child_env(), "EMBEDSEARCH_READ_TOKEN": TOKEN})
    try:
        yield f"{listening_url(process, 120)}/mcp"
    finally:
        process.terminate()
        process.wait(20)


def post(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, json.dumps(INITIALIZE).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Accept": "application/json, text/event-stream",
                                              **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_the_tools_answer_over_http(served: str, seed_engine: SearchEngine) -> None:
    requests = [("search", {"query": "low-rank visual prompting"}),
                ("similar", {"ids": ["no-such-paper"]})]
    assert tuple(tool.name for tool in listing(over_http(served, TOKEN))) == TOOLS
    found, unknown = calls(over_http(served, TOKEN), *requests)
    expected = calls(create_server(seed_engine), *requests)
    assert text(found) == text(expected[0]) and not found.is_error
    # As the HTTP API says it: the server's index folder is not named to its clients.
    assert unknown.is_error and text(unknown) == "no paper with id 'no-such-paper'"


def test_a_file_path_is_refused_over_http(served: str, tmp_path: Path) -> None:
    library = write_jsonl(tmp_path / "library.jsonl", [{"id": "a", "abstract": "Bandits."}])
    [refused] = calls(over_http(served, TOKEN), ("recommend", {"file": str(library)}))
    assert refused.is_error
    assert text(refused) == ("file: this server reads no files (its paths are not yours); "
                             "pass the papers' ids or titles")


def test_the_servers_token_and_host_rules_hold(served: str) -> None:
    assert post(served, {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    status, body = post(served, {})
    assert status == 401 and "needs a token" in body
    status, body = post(served, {"Authorization": "Bearer wrong-token-0123456789"})
    assert status == 401
    status, body = post(served, {"Authorization": f"Bearer {TOKEN}",
                                 "Host": "attacker.example"})
    assert status == 400 and "Host header 'attacker.example'" in body
