#!/usr/bin/env python3
"""Write the format-3 manifests in tests/fixtures/manifests/ with an earlier commit's code.

The tests read each one and write it again (`Manifest.from_json`, `to_json`): the bytes
must come back unchanged, so that a change to how the code holds a manifest never
changes what it writes. Each manifest is written by the commit's own `SearchEngine`
(torch backend, the bundled model) on six papers of the bundled sample, then changed by
an add and a remove, so that it lists segments with deletions and several additions;
the Milvus one is built into a Milvus Lite file (pymilvus must be installed).

    python scripts/make_manifest_fixtures.py COMMIT

The commit's tree is exported with `git archive` into a temporary folder (no worktree
is registered), and run with the libraries installed now. It needs git history, not
the network.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "manifests"

#: name -> the storage argument of `SearchEngine.build` (a Python expression) and the
#: vector index type.
FIXTURES: dict[str, tuple[str, str]] = {
    "v3-local": ("None", "auto"),
    "v3-local-hnsw": ("None", "hnsw"),
    "v3-milvus": ("Milvus(str(Path(sys.argv[3]) / 'papers.db'), 'papers')", "auto"),
}

_WRITE = """
import json, sys
from pathlib import Path
from embedsearch import SearchEngine
from embedsearch.storage.milvus import Milvus
records = json.load(open(sys.argv[2]))
engine = SearchEngine.build(sys.argv[1], records[:5], backend="torch", storage={storage},
                            index_type={index_type!r})
engine.add(records[5:])
engine.remove([records[0]["id"]])
engine.close()
"""


def papers() -> list[dict[str, object]]:
    """Six papers of the bundled sample."""
    sys.path.insert(0, str(REPO))
    from embedsearch.bundled import corpus_files
    from embedsearch.readers import read_papers

    chosen = read_papers(corpus_files())[:6]
    return [{"id": f"fixture:{number}", "title": paper.title, "abstract": paper.abstract,
             "year": 2025, "venue": "ICLR"} for number, paper in enumerate(chosen)]


def export(commit: str, into: Path) -> None:
    """The tree of `commit`, written into `into`."""
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO,
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def write(name: str, commit: str, tree: Path, records: Path, work: Path) -> None:
    storage, index_type = FIXTURES[name]
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1",
           "EMBEDSEARCH_CACHE_DIR": str(work / "cache")}
    index, side = work / name, work / f"{name}-data"
    side.mkdir()
    script = _WRITE.format(storage=storage, index_type=index_type)
    subprocess.run([sys.executable, "-c", script, str(index), str(records), str(side)],
                   cwd=work, env=env, check=True)
    target = OUT / f"{name}.json"
    target.write_bytes((index / "manifest.json").read_bytes())
    print(f"{name}: written by {commit} to {target.relative_to(REPO)}")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    commit = subprocess.run(["git", "rev-parse", argv[0]], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.strip()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="embedsearch-manifests-") as folder:
        work = Path(folder)
        export(commit, work / "tree")
        records = work / "papers.json"
        records.write_text(json.dumps(papers()))
        for name in FIXTURES:
            write(name, commit, work / "tree", records, work)
    (OUT / "FIXTURE.json").write_text(json.dumps(
        {"commit": commit, "made_by": "scripts/make_manifest_fixtures.py"}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
