"""The documentation site builds in strict mode, its navigation is whole, and the README
stays short (the details live in docs/)."""

from __future__ import annotations

import importlib.util
import os
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


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (pip install -e \".[docs]\")")
@pytest.mark.skipif(importlib.util.find_spec("material") is None
                    or importlib.util.find_spec("mkdocstrings_handlers") is None,
                    reason="mkdocs-material or mkdocstrings-python is not installed "
                           "(pip install -e \".[docs]\")")
def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    # Strict: any warning (a broken link, a missing page, an object mkdocstrings cannot
    # find, a hook that fails) fails the build.
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
         str(tmp_path / "site")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    # The generated references were filled in, not left as markers.
    cli = (site / "reference" / "cli.html").read_text()
    assert "embedsearch-serve" in cli and "embedsearch:cli" not in cli
    http = (site / "reference" / "http-api.html").read_text()
    assert "/papers/{paper_id}/similar" in http and "embedsearch:http-api" not in http
