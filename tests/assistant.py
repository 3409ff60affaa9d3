"""Talking to the MCP tools as an assistant's client does, with the SDK's own `Client`:
in process, over stdio to a real `embedsearch mcp`, or over HTTP to a real `serve`."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp
from mcp.types import CallToolResult, Tool

REPO = Path(__file__).resolve().parent.parent

__all__ = ["REPO", "child_env", "listing", "calls", "stdio", "text", "over_http"]


def child_env() -> dict[str, str]:
    """What a child embedsearch needs: this worktree's code, and the test run's cache
    (the SDK starts a stdio server with a minimal environment of its own)."""
    return {"PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1",
            "EMBEDSEARCH_CACHE_DIR": os.environ["EMBEDSEARCH_CACHE_DIR"]}


def stdio(index: Path, *options: str) -> mcp.StdioServerParameters:
    return mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "embedsearch.cli", "mcp", "--index", str(index),
                                      *options], env=child_env())


def over_http(url: str, token: str | None = None) -> Any:
    """A transport to the server at `url` (…/mcp), sending `token` as a bearer token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers,
                                                                        timeout=60))


def calls(target: Any, *requests: tuple[str, Mapping[str, Any]]) -> list[CallToolResult]:
    """Each (tool, arguments) called in order over one connection to `target`."""

    async def run() -> list[CallToolResult]:
        async with mcp.Client(target) as client:
            return [await client.call_tool(name, dict(arguments)) for name, arguments in requests]

    return asyncio.run(run())


def listing(target: Any) -> list[Tool]:
    async def run() -> list[Tool]:
        async with mcp.Client(target) as client:
            return (await client.list_tools()).tools

    return asyncio.run(run())


def text(result: CallToolResult) -> str:
    """The one text block every answer of these tools is."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text
