"""The documentation site, built once per session for the tests that read it: the
reference pages (test_site.py) and the notebook page (test_notebook.py), whose build
runs the notebook."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .examples import REPO

__all__ = ["needs_mkdocs", "site"]

needs_mkdocs = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None
        for name in ("mkdocs", "material", "mkdocstrings_handlers", "nbclient", "ipykernel",
                     "matplotlib", "pandas")),
    reason="mkdocs, mkdocs-material, mkdocstrings-python or what the notebook page runs "
           "the notebook with is not installed (pip install -e \".[docs]\")")


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once in strict mode: any warning (a broken link, a missing page,
    an object mkdocstrings cannot find, a hook that fails, a notebook cell that raises)
    fails the build."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    return out
