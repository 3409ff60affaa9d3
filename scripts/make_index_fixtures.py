#!/usr/bin/env python3
"""Build the small indexes in tests/fixtures/indexes/ with earlier commits of this code.

Every shape of index that some version of embedsearch has written is kept as a
fixture, so that the tests prove this version opens it or upgrades it
(`embedsearch upgrade`). Each fixture is built by checking out its commit into a
temporary git worktree and running that commit's own `SearchEngine.build` (torch
backend, the bundled model) on the same six papers; `FIXTURE.json` beside it says
which commit made it and what it lacks.

    python scripts/make_index_fixtures.py             # every fixture
    python scripts/make_index_fixtures.py v1-lexicalless

Run it from the repository root with the project's environment (the old commits use
the libraries installed now). It needs git history, not the network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "indexes"

#: name -> (commit, what an index of that commit lacks that the current code writes).
FIXTURES: dict[str, tuple[str, str]] = {
    "v1-lexicalless": ("c9cff01", "format version 1: no lexical index (lexical.npz), no "
                                  "reader leases, no storage or prompts in the manifest"),
    "v2-no-storage": ("3290851", "no storage entry in the manifest, no prompts"),
    "v2-no-prompts": ("2d10eaf", "no prompts in the manifest's model record"),
    "v2-no-identifiers": ("6ee76c5", "a paper store without the doi and arxiv_id columns"),
}

_BUILD = """
import json, sys
from embedsearch import SearchEngine
records = json.load(open(sys.argv[2]))
SearchEngine.build(sys.argv[1], records, backend="torch")
"""


def papers() -> list[dict[str, object]]:
    """Six papers of the bundled sample, with the fields every version reads."""
    sys.path.insert(0, str(REPO))
    from embedsearch.bundled import corpus_files
    from embedsearch.readers import read_papers

    chosen = read_papers(corpus_files())[:6]
    return [{"id": f"fixture:{number}", "title": paper.title, "abstract": paper.abstract,
             "year": 2025, "venue": "ICLR"} for number, paper in enumerate(chosen)]


def build(name: str, commit: str, lacks: str, records: Path) -> None:
    target = OUT / name
    with tempfile.TemporaryDirectory(prefix="embedsearch-fixture-") as work:
        tree = Path(work) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit],
                       cwd=REPO, check=True, capture_output=True)
        try:
            env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1",
                   "EMBEDSEARCH_CACHE_DIR": str(Path(work) / "cache")}
            built = Path(work) / "index"
            subprocess.run([sys.executable, "-c", _BUILD, str(built), str(records)],
                           cwd=work, env=env, check=True)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(built, target, ignore=shutil.ignore_patterns(".lock"))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO,
                           check=False, capture_output=True)
    full = subprocess.run(["git", "rev-parse", commit], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout.strip()
    (target / "FIXTURE.json").write_text(json.dumps(
        {"commit": full, "made_by": "scripts/make_index_fixtures.py", "lacks": lacks,
         "papers": 6}, indent=2) + "\n")
    print(f"{name}: built by {commit} in {target.relative_to(REPO)}")


def main(argv: list[str]) -> int:
    wanted = argv or list(FIXTURES)
    unknown = [name for name in wanted if name not in FIXTURES]
    if unknown:
        print(f"unknown fixture(s) {unknown}; known: {', '.join(FIXTURES)}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        records = Path(folder) / "papers.json"
        records.write_text(json.dumps(papers()))
        for name in wanted:
            build(name, *FIXTURES[name], records)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
