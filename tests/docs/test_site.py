"""The documentation site builds in strict mode, its navigation is whole, its CLI
reference lists every option `--help` shows, and the README stays short (the details
live in docs/)."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
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


needs_mkdocs = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None
        for name in ("mkdocs", "material", "mkdocstrings_handlers")),
    reason="mkdocs, mkdocs-material or mkdocstrings-python is not installed "
           "(pip install -e \".[docs]\")")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once in strict mode: any warning (a broken link, a missing page,
    an object mkdocstrings cannot find, a hook that fails) fails the build."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    return out


@needs_mkdocs
def test_site_builds_in_strict_mode(site: Path) -> None:
    assert (site / "index.html").is_file()
    # The generated references were filled in, not left as markers.
    cli = (site / "reference" / "cli.html").read_text()
    assert "embedsearch-serve" in cli and "embedsearch:cli" not in cli
    http = (site / "reference" / "http-api.html").read_text()
    assert "/papers/{paper_id}/similar" in http and "embedsearch:http-api" not in http


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


@needs_mkdocs
def test_the_cli_reference_lists_every_option_of_every_help(site: Path) -> None:
    page = html.unescape((site / "reference" / "cli.html").read_text())
    commands = re.findall(r"^    (\w+)  ", _help(), re.M)
    assert {"build", "search", "serve", "bench", "eval", "check"} <= set(commands)
    missing = {}
    for command in commands:
        start = page.index(f'id="embedsearch-{command}"')
        end = page.find("<h2", start)
        section = page[start:end if end != -1 else None]
        options = _options(_help(command)) - {"-h", "--help"}
        assert options, f"no options read from {command} --help"
        absent = sorted(option for option in options if f"<code>{option}" not in section)
        if absent:
            missing[command] = absent
    assert not missing, f"options --help shows that docs/reference/cli.md lacks: {missing}"
