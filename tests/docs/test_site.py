"""The documentation site builds in strict mode, its navigation is whole, its CLI
reference lists every option `--help` shows (subcommands included), the table of
contents of the generated references lists every command and endpoint (/mcp
included), and the README stays short (the details live in docs/)."""

from __future__ import annotations

import functools
import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from .conftest import needs_mkdocs
from .examples import REPO

README_MAX_LINES = 160


def _nav_pages(nav: Any) -> list[str]:
    """Every page path the mkdocs.yml nav names, however deeply nested."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def _mkdocs_config() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml", reason="PyYAML (a dependency of mkdocs) is not installed")

    class _Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may use tags such as !ENV or !!python/name; none matters for the nav.
    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config: dict[str, Any] = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=_Loader)
    return config


def test_every_nav_page_exists() -> None:
    config = _mkdocs_config()
    docs = REPO / config.get("docs_dir", "docs")
    pages = _nav_pages(config["nav"])
    assert pages, "mkdocs.yml has no nav"
    missing = [page for page in pages if not (docs / page).is_file()]
    assert not missing, f"pages in mkdocs.yml's nav that do not exist: {missing}"


def test_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; keep it under {README_MAX_LINES} and move "
        "details into docs/")


def test_readme_keeps_the_test_command() -> None:
    # .ci/run runs the test command "exactly as README.md gives it".
    assert "python -m pytest -q" in (REPO / "README.md").read_text()


@needs_mkdocs
def test_site_builds_in_strict_mode(site: Path) -> None:
    assert (site / "index.html").is_file()
    # The generated references were filled in, not left as markers.
    cli = (site / "reference" / "cli.html").read_text()
    assert "embedsearch-serve" in cli and "embedsearch:cli" not in cli
    http = (site / "reference" / "http-api.html").read_text()
    assert "/papers/{paper_id}/similar" in http and "embedsearch:http-api" not in http


@functools.cache
def _help(*command: str) -> str:
    result = subprocess.run([sys.executable, "-m", "embedsearch.cli", *command, "--help"],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def _options(help_text: str) -> set[str]:
    """The option strings a --help lists (`-k`, `--index`): on the lines indented by two
    spaces that start with a dash, before the help text's two spaces."""
    return {option for line in help_text.splitlines() if line.startswith("  -")
            for option in re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", line.strip().split("  ")[0])}


def _every_command(*parents: str) -> list[tuple[str, ...]]:
    """Every command and subcommand, however deep (`("watch", "add")`), as the --help
    of each lists them: its COMMAND or ACTION's choices, indented by four spaces."""
    found: list[tuple[str, ...]] = []
    for name in re.findall(r"^    (\w[\w-]*)(?:  |$)", _help(*parents), re.M):
        found += [(*parents, name), *_every_command(*parents, name)]
    return found


def _section(page: str, command: tuple[str, ...]) -> str:
    """The built page's section of `command`: from its heading to the next heading of
    any level (a group's subcommands, a level deeper, have sections of their own)."""
    start = page.index(f'id="{"-".join(("embedsearch", *command))}"')
    ends = [end for end in (page.find(f"<h{level}", start) for level in (2, 3, 4, 5))
            if end != -1]
    return page[start:min(ends, default=len(page))]


@needs_mkdocs
def test_the_cli_reference_lists_every_option_of_every_help(site: Path) -> None:
    page = html.unescape((site / "reference" / "cli.html").read_text())
    commands = _every_command()
    assert {("build",), ("bench",), ("watch",), ("watch", "add"), ("watch", "list"),
            ("watch", "remove")} <= set(commands)
    missing = {}
    for command in commands:
        section = _section(page, command)
        options = _options(_help(*command)) - {"-h", "--help"}
        assert options, f"no options read from {' '.join(command)} --help"
        absent = sorted(option for option in options if f"<code>{option}" not in section)
        if absent:
            missing[" ".join(command)] = absent
    assert not missing, f"options --help shows that docs/reference/cli.md lacks: {missing}"


class _TableOfContents(HTMLParser):
    """The links of a built page's table of contents, the nav in Material's right-hand
    sidebar (`div.md-sidebar--secondary`), as (target, text); and every id on the page."""

    #: Elements without an end tag: they open nothing for the depth count.
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
            "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self._depth = 0               # elements open inside the sidebar; 0 outside it
        self._link: str | None = None  # the target of the TOC link being read
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(str(attributes["id"]))
        classes = (attributes.get("class") or "").split()
        if self._depth == 0 and "md-sidebar--secondary" in classes:
            self._depth = 1
        elif self._depth:
            self._depth += tag not in self.VOID
            if tag == "a" and "md-nav__link" in classes:
                self._link, self._text = attributes.get("href") or "", []

    def handle_endtag(self, tag: str) -> None:
        if not self._depth:
            return
        if tag == "a" and self._link is not None:
            self.links.append((self._link, " ".join("".join(self._text).split())))
            self._link = None
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._text.append(data)


def _table_of_contents(page: Path) -> tuple[dict[str, str], set[str]]:
    """{text: target} of the page's TOC entries, and the ids the page has."""
    reader = _TableOfContents()
    reader.feed(page.read_text(encoding="utf-8"))
    reader.close()
    assert reader.links, f"{page}: no table of contents in the right-hand sidebar"
    return {text: target for target, text in reader.links}, reader.ids


def _broken(toc: dict[str, str], ids: set[str], expected: list[str]) -> dict[str, str]:
    """The expected entries that the TOC lacks, or whose link leads to no heading."""
    broken = {}
    for entry in expected:
        if entry not in toc:
            broken[entry] = "not in the table of contents"
        elif toc[entry].removeprefix("#") not in ids:
            broken[entry] = f"links to {toc[entry]}, which the page lacks"
    return broken


@needs_mkdocs
def test_the_cli_reference_table_of_contents_lists_every_command(site: Path) -> None:
    from embedsearch.cli.parser import build_parser

    # Every command the parser knows, not a list kept here: a new one is checked too.
    commands = list(build_parser().get_default("commands"))
    assert {"build", "search", "serve", "bench", "eval", "check"} <= set(commands)
    # And every subcommand, which only each group's --help lists.
    nested = [command for command in _every_command() if len(command) > 1]
    assert {("watch", "add"), ("watch", "list"), ("watch", "remove")} <= set(nested)
    toc, ids = _table_of_contents(site / "reference" / "cli.html")
    expected = ["embedsearch", *(f"embedsearch {name}" for name in commands),
                *(" ".join(("embedsearch", *command)) for command in nested)]
    broken = _broken(toc, ids, expected)
    assert not broken, f"commands the CLI reference's table of contents misses: {broken}"


@needs_mkdocs
def test_the_http_reference_table_of_contents_lists_every_endpoint(site: Path) -> None:
    pytest.importorskip("mcp")
    from embedsearch.integrations.mcp import TOOLS
    from embedsearch.server import create_app
    from embedsearch.server.assistant import assistant

    # As the build hook makes it: the routes call the engine only per request.
    schema = create_app(object(), compute_map=False).openapi()  # type: ignore[arg-type]
    methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
    expected = [f"{method.upper()} {path}" for path, operations in schema["paths"].items()
                for method in operations if method in methods]
    assert {"GET /search", "POST /papers", "GET /papers/{paper_id}/similar"} <= set(expected)
    # /mcp is the MCP SDK's app, not a FastAPI route: OpenAPI does not list it.
    mcp = [f"{method} {route.path}" for route in assistant(object()).routes  # type: ignore[arg-type]
           for method in sorted(getattr(route, "methods", ()))]
    assert mcp == ["POST /mcp"]
    toc, ids = _table_of_contents(site / "reference" / "http-api.html")
    broken = _broken(toc, ids, [*expected, *mcp])
    assert not broken, f"endpoints the HTTP reference's table of contents misses: {broken}"
    page = html.unescape((site / "reference" / "http-api.html").read_text())
    mcp_section = page[page.index('id="post-mcp"'):page.index('id="schemas"')]
    absent = [name for name in TOOLS if f"<code>{name}</code>" not in mcp_section]
    assert not absent, f"MCP tools the HTTP reference's POST /mcp lacks: {absent}"
