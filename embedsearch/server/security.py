"""Who may talk to the server and what the browser may do with its answers.

Three ASGI layers wrap the app, outermost first: `SecurityHeaders` (CSP, nosniff and
framing rules on every response, refusals included), `HostCheck` (a Host header this
server does not answer to is refused, which defeats DNS rebinding), then CORS when
origins are configured (so that preflights, which carry no token, are answered), then
`BearerAuth`, then `BodyLimit`. Authentication is a layer rather than a route dependency
so that a client without the token gets 401 before its body is read or validated.

`check_options` is what `embedsearch serve` runs before it opens anything: the
combinations that would expose the index are refused there, with the option to fix.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import ConfigurationError

__all__ = [
    "CSP",
    "LOOPBACK_NAMES",
    "Access",
    "BearerAuth",
    "BodyLimit",
    "HostCheck",
    "SecurityHeaders",
    "check_options",
    "check_origin",
    "check_token",
    "is_loopback",
    "is_wildcard",
]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"", "0.0.0.0", "::", "*"})
MIN_TOKEN_CHARS = 16
_TOKEN = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII: what a header carries unchanged
# Inline styles are allowed (ECharts and Swagger UI set them; they cannot run code);
# scripts come only from this server, and no other site may frame the page.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer")]
# A paper's PDF (GET /papers/ID/file) is shown by the browser's PDF viewer, which a
# document policy of object-src 'none' would refuse to load: it keeps only the framing
# rule (no other site may frame it); a PDF runs no script of this origin's.
_PDF_HEADERS = [(b"content-security-policy", b"frame-ancestors 'none'"), *_HEADERS[1:]]
# The page shell, its assets and the API's description: no data, so no token.
_PUBLIC = frozenset({"/", "/docs", "/openapi.json"})
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
Need = Literal["none", "read", "write"]


def is_wildcard(host: str) -> bool:
    """Whether `host` listens on every interface (0.0.0.0, ::)."""
    return host.strip("[]") in WILDCARDS


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_token(option: str, token: str) -> str:
    """`token` if it is usable as a bearer token; else a ConfigurationError naming `option`."""
    if len(token) < MIN_TOKEN_CHARS or not _TOKEN.match(token):
        raise ConfigurationError(
            f"{option}: a token needs at least {MIN_TOKEN_CHARS} characters, letters, digits "
            "or punctuation without spaces; make one with: python -c \"import secrets; "
            "print(secrets.token_urlsafe(32))\"")
    return token


def check_origin(origin: str) -> str:
    """`origin` (scheme://host[:port]) as CORS compares it; else a ConfigurationError."""
    parts = urllib.parse.urlsplit(origin)
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in
            ("", "/") or parts.query or parts.fragment or parts.username):
        raise ConfigurationError(f"--cors-origin: '{origin}' is not an origin; give the "
                                 "page's scheme, host and port, e.g. https://example.org:8443")
    return f"{parts.scheme}://{parts.netloc}".lower()


def check_options(host: str, *, allow_writes: bool, token: str | None,
                  read_token: str | None, cors_origins: Iterable[str] = ()) -> None:
    """Refuse option combinations that would expose the index; says which option to add."""
    for origin in cors_origins:
        check_origin(origin)
    if token is not None:
        check_token("--token", token)
    if read_token is not None:
        check_token("--read-token", read_token)
        if token is not None and hmac.compare_digest(token, read_token):
            raise ConfigurationError("--read-token: must differ from --token (the write "
                                     "token grants reads already)")
    if allow_writes and token is None and not is_loopback(host):
        raise ConfigurationError(
            f"--allow-writes on --host {host} would let anyone who can reach it change the "
            "index: pass --token (or set EMBEDSEARCH_TOKEN), or serve on 127.0.0.1")


@dataclass(frozen=True)
class Access:
    """What `create_app` was told: tokens, the Host names answered, the CORS origins,
    and the routes that only read (whatever their method: POST /search is a search)."""

    token: str | None = None
    read_token: str | None = None
    host_names: frozenset[str] = LOOPBACK_NAMES
    cors_origins: tuple[str, ...] = ()
    reads: tuple[BaseRoute, ...] = ()

    @classmethod
    def of(cls, *, token: str | None, read_token: str | None, allowed_hosts: Iterable[str],
           cors_origins: Iterable[str]) -> Access:
        names = {_host_name(name) for name in allowed_hosts if not is_wildcard(name)}
        return cls(token=check_token("token", token) if token is not None else None,
                   read_token=(check_token("read_token", read_token)
                               if read_token is not None else None),
                   host_names=LOOPBACK_NAMES | names,
                   cors_origins=tuple(check_origin(origin) for origin in cors_origins))

    def need(self, scope: Scope) -> Need:
        """The token a request needs: none, one that grants reads, or the write token."""
        if scope["path"] in _PUBLIC or scope["path"].startswith("/static/"):
            return "none"
        # Anything not known to be a read needs the write token: writes fail closed.
        if scope["method"] in _READS or any(route.matches(scope)[0] is Match.FULL
                                            for route in self.reads):
            return "read" if self.read_token else "none"
        return "write" if self.token or self.read_token else "none"

    def grants(self, given: bytes, need: Need) -> bool:
        """Whether the bearer token `given` suffices for `need` (compared in constant time)."""
        tokens = [self.token] if need == "write" and self.token else [self.token,
                                                                       self.read_token]
        # Every configured token is compared, so the time taken says nothing about which.
        matches = [hmac.compare_digest(given, token.encode()) for token in tokens if token]
        return any(matches)


def _host_name(value: str) -> str:
    """The name in a Host header or option: lower case, no port, no brackets, no final dot."""
    name = value.strip().lower()
    if name.startswith("["):
        name = name[1:name.find("]")] if "]" in name else name[1:]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    return name.rstrip(".")


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


def _refusal(status: int, detail: str, parameter: str,
             headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail, "parameter": parameter}, status_code=status,
                        headers=headers)


class SecurityHeaders:
    """Adds the CSP, nosniff, framing and referrer headers to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                pdf = (b"content-type", b"application/pdf") in headers
                message["headers"] = [*headers, *(_PDF_HEADERS if pdf else _HEADERS)]
            await send(message)

        await self.app(scope, receive, with_headers)


class HostCheck:
    """Refuses (400) requests whose Host header names no host this server answers to."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app, self.names = app, access.host_names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw = _header(scope, b"host")
            host = raw.decode("latin-1") if raw is not None else ""
            if _host_name(host) not in self.names:
                shown = host[:100].encode("unicode_escape").decode() or "(none)"
                await _refusal(400, f"Host header '{shown}' is not a name this server answers "
                                    "to; start it with --allowed-host NAME for each name "
                                    "clients use", "Host")(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BearerAuth:
    """Refuses (401) requests without the token their endpoint needs."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app, self.access = app, access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            need = self.access.need(scope)
            if need != "none":
                refusal = self._refusal(_header(scope, b"authorization"), need)
                if refusal is not None:
                    await refusal(scope, receive, send)
                    return
        await self.app(scope, receive, send)

    def _refusal(self, header: bytes | None, need: Need) -> JSONResponse | None:
        scheme, _, given = (header or b"").partition(b" ")
        if header and scheme.lower() == b"bearer" and self.access.grants(given.strip(), need):
            return None
        what = "the write token" if need == "write" and self.access.token else "a token"
        challenge: dict[str, Any] = {"WWW-Authenticate": 'Bearer realm="embedsearch"'}
        if not header:
            return _refusal(401, f"this endpoint needs {what}: send the header "
                                 "'Authorization: Bearer TOKEN'", "Authorization", challenge)
        challenge["WWW-Authenticate"] += ', error="invalid_token"'
        return _refusal(401, f"the Authorization header does not carry {what}",
                        "Authorization", challenge)


class BodyLimit:
    """413 for a request body over `limit` bytes: at once when its Content-Length says so,
    else as soon as the bytes read pass it. (Starlette's own limit answers in plain text;
    this one answers with the API's JSON error, as documented.)"""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        message = f"the request body is over the limit of {self.limit:,} bytes"
        declared = _header(scope, b"content-length") or b""
        if declared.isdigit() and int(declared) > self.limit:
            await _refusal(413, f"body: {message}", "body")(scope, receive, send)
            return
        read = 0

        async def counted() -> Message:
            nonlocal read
            received = await receive()
            read += len(received.get("body", b""))
            if read > self.limit:
                # FastAPI passes an HTTPException from reading the body on to the app's
                # handler, which answers it as JSON naming the body.
                raise HTTPException(413, message)
            return received

        await self.app(scope, counted, send)
