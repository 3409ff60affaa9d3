"""`--ray auto` on a cluster started the way a real one is (`ray start --head`), from a
process of its own: the same index as a local build.

A module of its own: `ray stop` at the end stops every Ray process of this machine, so
no other test may hold a Ray instance meanwhile (test_ray.py's is gone by then).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from embedsearch import SearchEngine
from tests.conftest import contents, free_port

try:
    import ray
except ImportError:
    ray = None

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(ray is None, reason='Ray is not installed: pip install -e '
                                                     '".[ray]" (CI installs it)')]
RAY = str(Path(sys.executable).parent / "ray")


@pytest.fixture(scope="module")
def ray_head() -> Iterator[None]:
    """A one-node cluster; `auto` finds it through the file Ray keeps of the newest one."""
    port = free_port()
    started = subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=2",
                              "--include-dashboard=false", "--disable-usage-stats"],
                             capture_output=True, text=True, timeout=180)
    if started.returncode != 0:
        pytest.fail(f"ray start --head failed: {started.stderr[-2000:]}")
    yield
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)


def _by_id(index: Path) -> dict[str, np.ndarray]:
    with SearchEngine.open(index) as engine:
        keys, vectors, papers = contents(engine)
        return {papers[int(k)].id: v for k, v in zip(keys, vectors)}


def test_a_build_on_a_started_cluster_is_the_local_build(
        ray_head: None, seed_index: Path, seed_files: list[Path], tmp_path: Path) -> None:
    # The seed index's backend by name: auto may choose another once an earlier test has
    # prepared the fast backends.
    backend = json.loads((seed_index / "manifest.json").read_text())["model"]["backend"]
    done = subprocess.run([sys.executable, "-m", "embedsearch.cli", "build",
                           *map(str, seed_files), "--out", str(tmp_path / "index"),
                           "--ray", "auto", "--no-cache", "--backend", backend],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Ray: 38 texts encoded by" in done.stderr
    got, want = _by_id(tmp_path / "index"), _by_id(seed_index)
    assert sorted(got) == sorted(want)
    assert min(float(got[i] @ want[i]) for i in want) >= 0.9999
    manifests = [json.loads((folder / "manifest.json").read_text())
                 for folder in (tmp_path / "index", seed_index)]
    for manifest in manifests:
        for volatile in ("created", "updated", "files"):
            manifest.pop(volatile)
        # When each write added its papers differs; which keys it added does not.
        manifest["additions"] = [first for first, _ in manifest["additions"]]
    assert manifests[0] == manifests[1]
