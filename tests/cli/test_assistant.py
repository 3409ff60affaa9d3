"""`embedsearch mcp`: a real subprocess speaking MCP on stdio to the SDK's client, with
nothing but the protocol on stdout; without the SDK, one line saying what to install."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from embedsearch import SearchEngine
from embedsearch.integrations.mcp import TOOLS, create_server
from tests.assistant import calls, child_env, listing, stdio, text
from tests.conftest import CliResult


def test_the_command_serves_the_tools_over_stdio(seed_index: Path,
                                                 seed_engine: SearchEngine) -> None:
    requests = [("search", {"query": "low-rank visual prompting"}),
                ("get", {"id": "no-such-paper"})]
    assert tuple(tool.name for tool in listing(stdio(seed_index))) == TOOLS
    found, unknown = calls(stdio(seed_index), *requests)
    expected = calls(create_server(seed_engine, local=True), *requests)
    assert text(found) == text(expected[0]) and not found.is_error
    assert unknown.is_error and text(unknown) == text(expected[1])


def test_stdout_carries_only_the_protocol(seed_index: Path) -> None:
    ping = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    done = subprocess.run([sys.executable, "-m", "embedsearch.cli", "mcp", "--index",
                           str(seed_index)], input=ping, capture_output=True, text=True,
                          timeout=120, env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_without_the_sdk_it_says_which_extra(seed_index: Path,
                                             cli: Callable[..., CliResult],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "embedsearch.integrations.mcp", raising=False)
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)  # as if not installed
    done = cli("mcp", "--index", seed_index)
    assert done.code == 1 and done.out == ""
    assert done.err == ("embedsearch: error: the MCP server needs the mcp package, which is "
                        "not installed: pip install 'embedsearch[mcp]'\n")
