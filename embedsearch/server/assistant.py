"""The MCP tools of `integrations.mcp` at /mcp, over the SDK's streamable HTTP.

Stateless and answered in JSON: each POST is a whole exchange, so there are no
sessions to keep, expire or share between workers, and the tools (read-only, quick)
need no event stream. The SDK's own Host check is off: the server's `HostCheck`, which
knows the `--allowed-host` names, has refused a wrong Host before a request gets here,
and `BearerAuth` a missing token (/mcp is a read, as any search is).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from ..engine import SearchEngine
from ..errors import DependencyError

__all__ = ["PATH", "Assistant", "assistant"]

PATH = "/mcp"


@dataclass(frozen=True)
class Assistant:
    """What the app adds: its route (none without the `mcp` package) and what its
    lifespan runs (the SDK's session manager, which answers every request)."""

    routes: tuple[BaseRoute, ...]
    running: Callable[[], AbstractAsyncContextManager[None]]


class _Endpoint:
    """An ASGI app (not a function, which Starlette would treat as a request handler)
    that hands each request to the session manager of the running lifespan."""

    def __init__(self, server: Any) -> None:
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.server.session_manager.handle_request(scope, receive, send)


def assistant(engine: SearchEngine) -> Assistant:
    """The MCP route over `engine`, or none where the `mcp` package is missing (the
    `server` extra brings it; without it the rest of the server works as before)."""
    try:
        from mcp.server.transport_security import TransportSecuritySettings

        from ..integrations.mcp import create_server
    except (ImportError, DependencyError):
        return Assistant((), _idle)
    server = create_server(engine, local=False)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        # A session manager runs once; an app's lifespan may start again (a test client
        # per test), so each start makes a new one.
        server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        async with server.session_manager.run():
            yield

    # POST only: a stateless server has no stream to open with GET (405 tells the
    # client so, where a GET held open would tie up a connection for nothing) and no
    # session to end with DELETE.
    return Assistant((Route(PATH, _Endpoint(server), methods=["POST"]),), running)


@asynccontextmanager
async def _idle() -> AsyncIterator[None]:
    yield
