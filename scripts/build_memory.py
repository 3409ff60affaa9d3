#!/usr/bin/env python3
"""How much memory building a folder of PDFs takes, as the folder grows: a build in
buffers (the default, `index.writing.buffer_full`) against one that holds every paper
until the end (one buffer), side by side.

A folder of N PDFs is made by copying the PDFs of `--source` (default: the full-text
dev set's `pdfs/`, see scripts/fulltext_devset.py) into subfolders 0/, 1/, ... as
needed, so that each copy is a paper of its own ("3/smith"). Each build runs in a fresh
process, which prints its own peak resident memory (VmHWM: the build, not the PDF
reading worker, whose memory is bounded per file by its own limits) and its seconds.
The embedding cache is used, so the copies after the first cost reading and writing but
no encoding: what is measured is what a build holds, not the encoder's speed.

    python scripts/build_memory.py --source /tmp/ftdev/pdfs --sizes 100,250,500,1000
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fulltext_cost import cpu_name  # noqa: E402


def make_folder(source: Path, folder: Path, count: int) -> None:
    """`count` PDFs in `folder`, copies of `source`'s in subfolders."""
    pdfs = sorted(source.glob("*.pdf"))
    if not pdfs:
        raise SystemExit(f"no PDFs in {source}")
    for number in range(count):
        target = folder / str(number // len(pdfs)) / pdfs[number % len(pdfs)].name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdfs[number % len(pdfs)], target)


def child(folder: Path, out: Path, whole: bool) -> None:
    """Build `folder` into `out` in this process and print its peak memory."""
    from embedsearch.encoding import Encoder
    from embedsearch.index.writing import buffer_full, build_index
    from embedsearch.readers import stream_papers
    from embedsearch.storage.directory import IndexDirectory

    flush = partial(buffer_full, max_papers=10**12, max_passages=10**12) if whole else buffer_full
    start = time.perf_counter()
    manifest = build_index(IndexDirectory(out), stream_papers([folder]), Encoder(), flush=flush)
    seconds = time.perf_counter() - start
    status = Path("/proc/self/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines()
                if line.startswith("VmHWM:"))
    passages = sum(record.full_text.count for record in manifest.local.segments
                   if record.full_text is not None)
    print(json.dumps({"peak_mb": peak / 1024, "seconds": seconds, "papers": manifest.count,
                      "passages": passages, "segments": len(manifest.local.segments)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=Path("/tmp/ftdev/pdfs"))
    parser.add_argument("--sizes", default="100,250,500,1000")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), args.child[2] == "whole")
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"{cpu_name()}; PDFs copied from {args.source}; peak RSS of the building process")
    print("| PDFs | passages | in buffers: peak MB | segments | s | "
          "one buffer: peak MB | s |\n|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for size in sizes:
            folder = Path(work, f"pdfs-{size}")
            make_folder(args.source, folder, size)
            found = {}
            for mode in ("buffers", "whole"):
                out = Path(work, f"index-{size}-{mode}")
                done = subprocess.run([sys.executable, __file__, "--child", str(folder),
                                       str(out), mode], check=True, capture_output=True,
                                      text=True)
                found[mode] = json.loads(done.stdout.strip().splitlines()[-1])
                shutil.rmtree(out)
            shutil.rmtree(folder)
            ours, whole = found["buffers"], found["whole"]
            print(f"| {size} | {ours['passages']} | {ours['peak_mb']:.0f} | {ours['segments']} "
                  f"| {ours['seconds']:.0f} | {whole['peak_mb']:.0f} | {whole['seconds']:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
