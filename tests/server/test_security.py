"""Who may use the server: tokens, the Host allow-list, CORS, the browser's security
headers, refusal to start exposed, the offline /docs page, and a busy index."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from embedsearch import SearchEngine
from embedsearch.cli import main
from embedsearch.errors import ConfigurationError
from embedsearch.server import create_app
from embedsearch.server.security import check_options
from tests.conftest import CliResult
from tests.server.test_live_server import CHROMIUM, CHROMIUM_FLAGS, LiveServer

LOCAL = "http://localhost"
WRITE = "write-token-0123456789abcdef"
READ = "read-token-0123456789abcdef"
ANY_ID = "000_ae22c05437d8edef:1"  # a seed paper
PAPER = {"papers": [{"id": "sec:1", "abstract": "Quantum error correction with surface codes."}]}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def writable(seed_copy: Path) -> Iterator[TestClient]:
    """Writes allowed and guarded by WRITE; reads open."""
    engine = SearchEngine.open(seed_copy)
    app = create_app(engine, allow_writes=True, compute_map=False, token=WRITE)
    with TestClient(app, base_url=LOCAL) as client:
        yield client
    engine.close()


@pytest.fixture(scope="module")
def guarded(seed_engine: SearchEngine) -> Iterator[TestClient]:
    """Read-only, every endpoint guarded by READ (or WRITE); answers box.lan too."""
    app = create_app(seed_engine, compute_map=False, token=WRITE, read_token=READ,
                     allowed_hosts=["box.lan"], cors_origins=["https://partner.example"])
    with TestClient(app, base_url=LOCAL) as client:
        yield client


def refused(response: object, status: int, parameter: str | None) -> str:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["parameter"] == parameter and body["detail"]
    return str(body["detail"])


def test_writes_need_the_token(writable: TestClient) -> None:
    for headers in ({}, bearer("not-the-token-at-all"), bearer(READ), {"Authorization": WRITE},
                    {"Authorization": f"Basic {WRITE}"}):
        for response in (writable.post("/papers", json=PAPER, headers=headers),
                         writable.delete("/papers/sec:1", headers=headers)):
            detail = refused(response, 401, "Authorization")
            challenge = response.headers["WWW-Authenticate"]
            assert challenge.startswith("Bearer")
            assert ("invalid_token" in challenge) == bool(headers)
            assert "the write token" in detail
    assert writable.get("/papers/sec:1").status_code == 404  # nothing was added
    # Refused before the body is read: no hint about what a valid body looks like.
    refused(writable.post("/papers", content=b"{not json"), 401, "Authorization")
    added = writable.post("/papers", json=PAPER, headers=bearer(WRITE))
    assert added.status_code == 200 and added.json()["added"] == 1
    assert writable.get("/papers/sec:1").status_code == 200  # reads need no token here
    assert writable.get("/search", params={"q": "surface codes"}).status_code == 200
    # A POST that only reads needs no token on this server.
    assert writable.post("/search", json={"queries": ["surface codes"]}).status_code == 200
    removed = writable.delete("/papers/sec:1", headers={"authorization": f"bearer {WRITE}"})
    assert removed.status_code == 200 and removed.json()["removed"] == 1


def test_the_read_token_guards_every_endpoint_but_the_shell(guarded: TestClient) -> None:
    reads = [("GET", "/search?q=robots"), ("GET", "/info"), ("GET", "/health"),
             ("GET", "/map"), ("GET", "/papers/x"), ("GET", "/papers/x/similar"),
             ("POST", "/search")]
    for method, path in reads:
        for headers in ({}, bearer("wrong-token-0123456789")):
            refused(guarded.request(method, path, headers=headers), 401, "Authorization")
        for token in (READ, WRITE):  # the write token grants reads
            body = {"queries": ["robots"]} if method == "POST" else None
            response = guarded.request(method, path, headers=bearer(token), json=body)
            assert response.status_code in (200, 404), (method, path, response.text)
    for path in ("/", "/docs", "/openapi.json", "/static/app.js", "/static/docs.js"):
        assert guarded.get(path).status_code == 200, path
    # Writes: the read token is not enough; with the write token this server is read-only.
    refused(guarded.delete("/papers/x", headers=bearer(READ)), 401, "Authorization")
    assert guarded.delete("/papers/x", headers=bearer(WRITE)).status_code == 403


def test_the_schema_tells_docs_to_send_the_token(guarded: TestClient) -> None:
    schema = guarded.get("/openapi.json").json()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert schema["paths"]["/search"]["get"]["security"] == [{"bearer": []}]


def test_foreign_hosts_are_refused(guarded: TestClient) -> None:
    for host in ("evil.example", "evil.example:8000", "localhost.evil.example", "10.0.0.5",
                 ""):
        response = guarded.get("/health", headers={"Host": host, **bearer(READ)})
        assert "Host header" in refused(response, 400, "Host"), host
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    for host in ("localhost", "localhost:8000", "127.0.0.1:9", "[::1]:8000", "LOCALHOST.",
                 "box.lan", "Box.LAN:8443"):
        response = guarded.get("/health", headers={"Host": host, **bearer(READ)})
        assert response.status_code == 200, host
    assert guarded.get("/", headers={"Host": "evil.example"}).status_code == 400


def test_cors_only_for_configured_origins(guarded: TestClient,
                                          seed_engine: SearchEngine) -> None:
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization,content-type"}
    allowed = guarded.options("/search", headers={"Origin": "https://partner.example",
                                                  **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://partner.example"
    assert "authorization" in allowed.headers["Access-Control-Allow-Headers"].lower()
    other = guarded.options("/search", headers={"Origin": "https://evil.example", **preflight})
    assert "Access-Control-Allow-Origin" not in other.headers
    simple = guarded.get("/health", headers={"Origin": "https://evil.example", **bearer(READ)})
    assert simple.status_code == 200 and "Access-Control-Allow-Origin" not in simple.headers
    with TestClient(create_app(seed_engine, compute_map=False), base_url=LOCAL) as plain:
        response = plain.get("/health", headers={"Origin": "https://partner.example"})
        assert "Access-Control-Allow-Origin" not in response.headers
        assert plain.options("/search", headers={"Origin": "https://partner.example",
                                                 **preflight}).status_code == 405


def test_security_headers_on_every_response(guarded: TestClient) -> None:
    for path in ("/", "/docs", "/static/app.js", "/static/docs.js", "/health", "/nowhere"):
        headers = guarded.get(path).headers
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp, path
        assert "unsafe-eval" not in csp and "'unsafe-inline'" not in csp.split(";")[1]
        assert headers["X-Content-Type-Options"] == "nosniff", path
    for page in ("/", "/docs"):  # no inline script for the CSP to block
        html = guarded.get(page).text
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), page
        assert not re.search(r"\son[a-z]+\s*=", html), page


def test_docs_are_served_from_here(guarded: TestClient) -> None:
    html = guarded.get("/docs").text
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) == 3 and all(asset.startswith("/static/") for asset in assets)
    for asset in assets:
        response = guarded.get(asset)
        assert response.status_code == 200 and len(response.content) > 300, asset
    for path in ("/redoc", "/docs/oauth2-redirect"):  # not vendored: off
        assert guarded.get(path, headers=bearer(READ)).status_code == 404, path


def test_oversized_bodies_are_413_naming_the_body(guarded: TestClient) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"queries": ["x"], "pad": "'
        for _ in range(90):
            yield b" " * 100_000
        yield b'"}'

    declared = b'{"queries": ["x"]}' + b" " * 8_100_000
    for body in (declared, chunks()):
        response = guarded.post("/search", content=body, headers={
            "Content-Type": "application/json", **bearer(READ)})
        assert "over the limit" in refused(response, 413, "body")
    # Without the token the body is never read: 401, not 413.
    refused(guarded.post("/search", content=declared), 401, "Authorization")


@pytest.mark.parametrize(("argv", "message"), [
    (["--host", "0.0.0.0", "--allow-writes"], "--allow-writes on --host 0.0.0.0"),
    (["--host", "::", "--allow-writes"], "pass --token"),
    (["--host", "192.168.1.20", "--allow-writes", "--read-token", READ], "pass --token"),
    (["--token", "short"], "--token: a token needs at least 16"),
    (["--token", WRITE, "--read-token", WRITE], "--read-token: must differ"),
    (["--cors-origin", "partner.example"], "--cors-origin: 'partner.example' is not"),
])
def test_serve_refuses_to_start_exposed(cli: Callable[..., CliResult], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                        message: str) -> None:
    monkeypatch.delenv("EMBEDSEARCH_TOKEN", raising=False)
    # No index there: the options are refused before anything is opened or bound.
    result = cli("serve", "--index", tmp_path / "absent", *argv)
    assert result.code == 1 and result.out == ""
    assert len(result.err.strip().splitlines()) == 1 and message in result.err, result.err


def test_tokens_may_come_from_the_environment(cli: Callable[..., CliResult], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDSEARCH_TOKEN", "short")
    result = cli("serve", "--index", tmp_path / "absent", "--host", "0.0.0.0", "--allow-writes")
    assert result.code == 1 and "--token: a token needs at least 16" in result.err
    monkeypatch.setenv("EMBEDSEARCH_TOKEN", WRITE)
    monkeypatch.setenv("EMBEDSEARCH_READ_TOKEN", WRITE)
    result = cli("serve", "--index", tmp_path / "absent", "--host", "0.0.0.0", "--allow-writes")
    assert result.code == 1 and "--read-token: must differ" in result.err
    with pytest.raises(ConfigurationError, match="pass --token"):
        check_options("0.0.0.0", allow_writes=True, token=None, read_token=None)
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):  # loopback: open is fine
        check_options(host, allow_writes=True, token=None, read_token=None)


def test_serve_help_says_what_to_pass_for_all_interfaces(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "With --host 0.0.0.0 pass each name or address clients use" in text
    assert "EMBEDSEARCH_TOKEN" in text and "--cors-origin ORIGIN" in text


def test_a_write_that_waits_too_long_is_503(seed_copy: Path) -> None:
    from embedsearch.storage.directory import IndexDirectory

    held, release = threading.Event(), threading.Event()

    def other_writer() -> None:  # another process's write, holding the index's write lock
        with IndexDirectory(seed_copy).locked(wait=0):
            held.set()
            release.wait(30)

    engine = SearchEngine.open(seed_copy)
    app = create_app(engine, allow_writes=True, compute_map=False, token=WRITE, write_wait=0.5)
    thread = threading.Thread(target=other_writer)
    try:
        with TestClient(app, base_url=LOCAL) as client:
            thread.start()
            assert held.wait(10)
            for response in (client.post("/papers", json=PAPER, headers=bearer(WRITE)),
                             client.delete(f"/papers/{ANY_ID}", headers=bearer(WRITE))):
                assert "busy with another write" in refused(response, 503, None)
                assert int(response.headers["Retry-After"]) > 0
            assert client.get("/search", params={"q": "robots"}).status_code == 200
            release.set()
            thread.join(30)
            assert client.post("/papers", json=PAPER, headers=bearer(WRITE)).json()["added"] == 1
    finally:
        release.set()
        engine.close()


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium")
def test_page_and_docs_in_chromium_offline_under_the_csp(seed_engine: SearchEngine,
                                                          tmp_path: Path) -> None:
    """The page asks for the read token once and searches with it; /docs renders from
    this server alone (every other host blocked) and is authorised with the same token;
    the browser reports no CSP violation and no failed request."""
    from playwright.sync_api import Route, expect, sync_playwright

    app = create_app(seed_engine, compute_map=False, token=WRITE, read_token=READ)
    problems: list[str] = []
    with LiveServer(app) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_FLAGS)

        def only_here(route: Route) -> None:
            if route.request.url.startswith(url + "/") or route.request.url.startswith("data:"):
                route.continue_()
            else:
                problems.append(f"left the server: {route.request.url}")
                route.abort()

        try:
            browser.route("**/*", only_here)
            page = browser.new_page()
            prompts: list[str] = []
            page.on("dialog", lambda dialog: (prompts.append(dialog.message),
                                              dialog.accept(READ)))
            # The page's first requests are refused (401) until it has asked: expected.
            page.on("console", lambda message: message.type in ("error", "warning") and
                    "status of 401" not in message.text and
                    problems.append(f"console: {message.text}"))
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            # A request cut short by the next goto (a font still loading) is aborted, not
            # refused: only other failures (blocked, unreachable) are problems.
            page.on("requestfailed", lambda request: request.failure == "net::ERR_ABORTED" or
                    problems.append(f"failed: {request.url} ({request.failure})"))
            page.goto(f"{url}/#/search?q=low-rank+visual+prompting")
            page.wait_for_selector(".result")
            assert "Visual prompting" in page.locator(".result a.title").first.inner_text()
            assert len(prompts) == 1, prompts  # asked once for all the page's requests
            assert page.evaluate("sessionStorage.getItem('embedsearch-token')") == READ
            page.goto(f"{url}/#/search?q=bandits")
            # (Locators, not wait_for_function: the CSP forbids the eval that one uses.)
            expect(page.locator("#status")).to_contain_text("closest to “bandits”")
            assert len(prompts) == 1  # kept for the tab
            page.goto(f"{url}/docs")
            page.wait_for_selector(".swagger-ui .opblock")
            assert page.locator(".swagger-ui .opblock").count() >= 8
            page.wait_for_selector(".swagger-ui .btn.authorize.locked")  # the page's token
        finally:
            browser.close()
    assert not problems, problems
