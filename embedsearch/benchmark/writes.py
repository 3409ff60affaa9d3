"""What a write costs as the index grows: `embedsearch add` of a few new papers and
`embedsearch remove` of one, at several index sizes, side by side in one run.

Each index holds the first N dev papers, built in this process from their stored
embeddings (no encoding). The added papers are the corpus' last ones, held out of every
index, so each size gets the same new papers in the same run; a requested size larger
than the rest of the corpus is cut to it. Their vectors are put in a private embedding
cache beforehand, under the index's encoder, so `add` reads them and loads no model:
what is left is the write itself, plus the interpreter's start.

Every `add` and `remove` is a process of its own that runs the command line's entry
point (`embedsearch.cli.main`, what the `embedsearch` script calls), `runs` times (each
`add` with other new papers, each `remove` of another paper), the sizes taking turns
within each run so that a slow minute on the machine hits them alike. Per process: wall
seconds; bytes written, as /proc/PID/io counts them once the process has exited (read
before it is reaped, so the interpreter's exit and the closing of files are included):
`wchar` (bytes handed to write calls, page cache or not, pipes included) and
`write_bytes` (bytes it sent towards the disk); and its peak resident memory (VmHWM, as
the process reports it when its command returns). The table gives the median of the
runs per size, and the ratio of the largest size to the smallest. The indexes were just
built, so their files are in the page cache. Linux only (/proc).
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..encoding import Encoder
from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from ..papers import DEFAULT_FIELDS, Paper, embedding_text
from ..readers import read_papers
from ..storage import IndexOptions
from .report import Table

__all__ = ["BACKEND", "ProcessCost", "measure_command", "seed_cache", "write_new_papers",
           "writes_table"]

_log = logging.getLogger(__name__)

#: The backend the indexes record. An exported backend knows its vector length from the
#: export's metadata, so a process whose vectors are all cached loads no model; torch's
#: would load the model just to learn that length.
BACKEND = "onnx"
#: Modules that are imported only to run an encoder: in a child after its command, they
#: mean a model was loaded after all, and the write's cost would be the model's.
_MODEL_MODULES = ("torch", "onnxruntime", "openvino")
#: The child: the command line's own entry point (what the `embedsearch` script calls),
#: then one JSON line on stdout: which embedsearch it ran, what it imported, and its peak
#: memory. That peak is VmHWM, its own address space's: ru_maxrss (getrusage, wait4)
#: keeps the forking parent's peak across exec, which made every 0.4 s child as large as
#: the 1.2 GB benchmark.
_CHILD = f"""\
import json, sys
import embedsearch
from embedsearch.cli import main
status = main(sys.argv[1:])
loaded = [name for name in {_MODEL_MODULES!r} if name in sys.modules]
with open("/proc/self/status") as lines:
    peak = next(int(line.split()[1]) for line in lines if line.startswith("VmHWM:"))
print(json.dumps({{"package": embedsearch.__file__, "loaded": loaded, "peak_kib": peak}}))
sys.exit(status)
"""
_MB = 1e6
#: This process' embedsearch package folder, which the children must import too.
_PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ProcessCost:
    """What one command's process cost, from its start to its exit."""

    seconds: float
    #: Bytes handed to write calls (/proc/PID/io wchar).
    written: int
    #: Bytes sent towards the disk (write_bytes): what lands in storage, page by page.
    to_disk: int
    #: Peak resident memory in bytes.
    peak: int


def measure_command(arguments: Sequence[str], folder: Path) -> ProcessCost:
    """Run `embedsearch ARGUMENTS` as a process of its own and measure it.

    The child imports the same embedsearch as this process (its folder goes first on
    PYTHONPATH and the child runs in `folder`, not in a checkout), which is checked, as
    is that it loaded no encoder model. Its output goes to files in `folder`: a full
    pipe would block a child that nobody reads while it runs.
    """
    env = dict(os.environ)
    paths = [str(_PACKAGE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    out_path, err_path = folder / "child.out", folder / "child.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", _CHILD, *arguments], cwd=folder,
                                 env=env, stdout=out, stderr=err)
        # Wait for the exit without reaping: a zombie's /proc/PID/io still holds its
        # whole life's counts, which a reading from inside would miss (files closed at
        # exit, SQLite's checkpoint of its write-ahead log on close).
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        seconds = time.perf_counter() - start
        counts = _io_counts(child.pid)
        _, status = os.waitpid(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    command = "embedsearch " + " ".join(arguments)
    if child.returncode != 0:
        raise RuntimeError(f"{command} failed (exit status {child.returncode}): "
                           f"{err_path.read_text(errors='replace')[-2000:]}")
    lines = out_path.read_text().splitlines()
    report = json.loads(lines[-1]) if lines else {}
    ran = Path(report.get("package", "?")).resolve().parent
    if ran != _PACKAGE:
        raise RuntimeError(f"{command} ran embedsearch from {ran}, not {_PACKAGE}, which "
                           "this benchmark runs from")
    if report.get("loaded"):
        raise RuntimeError(f"{command} imported {', '.join(report['loaded'])}: it loaded an "
                           "encoder model, whose cost would hide the write's")
    return ProcessCost(seconds, counts["wchar"], counts["write_bytes"],
                       int(report["peak_kib"]) * 1024)


def _io_counts(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/io") as io:
        return {name: int(value) for name, value in
                (line.split(":") for line in io if ":" in line)}


def _sizes(requested: Sequence[int], corpus: int, held_out: int) -> list[int]:
    """The index sizes: as requested, but at most what the held-out papers leave (and
    that for 0), without repeats, smallest first."""
    most = corpus - held_out
    if most < 1:
        raise ValueError(f"the corpus has {corpus} papers: none would be left to index "
                         f"beside the {held_out} added ones")
    return sorted({min(size, most) if size > 0 else most for size in requested})


def write_new_papers(papers: Sequence[Paper], path: Path) -> list[Paper]:
    """Write `papers` as JSON lines; return them as `add` will read them back."""
    with open(path, "w", encoding="utf-8") as out:
        for paper in papers:
            out.write(json.dumps(paper.to_dict()) + "\n")
    return read_papers([path])


def seed_cache(encoder: Encoder, papers: Sequence[Paper], vectors: NDArray[np.float32]) -> None:
    """Cache `vectors` as `encoder` would have made them for `papers`' texts (the cache's
    database is closed after: another process reads it next)."""
    cache = encoder.embedding_cache()
    if cache is None:
        raise RuntimeError("the benchmark's encoder has its embedding cache off")
    texts = [embedding_text(paper, DEFAULT_FIELDS) for paper in papers]
    cache.put(encoder.cache_namespace(), texts, vectors)
    encoder.close()


def _median_row(costs: Sequence[ProcessCost]) -> dict[str, float]:
    return {"median s": statistics.median(c.seconds for c in costs),
            "MB written": statistics.median(c.written for c in costs) / _MB,
            "MB to disk": statistics.median(c.to_disk for c in costs) / _MB,
            "peak MB": statistics.median(c.peak for c in costs) / _MB}


def writes_table(devset: DevSet, sizes: Sequence[int], added: int, runs: int) -> Table:
    """`add` of `added` new papers and `remove` of one, `runs` times each, per index size
    in `sizes` (0: every paper but the added ones), each a process of its own."""
    if added < 1 or runs < 1:
        raise ValueError("added and runs must be at least 1")
    stored = devset.stored_vectors()
    if stored is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    papers = devset.papers
    held_out = added * runs
    counts = _sizes(sizes, len(papers), held_out)
    new_start = len(papers) - held_out
    columns = ["operation", "index papers", "median s", "MB written", "MB to disk", "peak MB"]
    cut = [size for size in sizes if size > counts[-1]]
    table = Table(
        f"Writing to indexes of {', '.join(map(str, counts))} papers, one process a command",
        columns,
        f"Median of {runs} runs, sizes in turns; add: {added} new papers (the corpus' last "
        f"{held_out}, held out of every index) whose vectors the embedding cache holds, so "
        "no model loads; remove: one paper. Each a separate process, interpreter start "
        "included. MB written: /proc io wchar (every write call); MB to disk: write_bytes; "
        "peak MB: VmHWM."
        + (f" Asked for {', '.join(map(str, cut))}: cut to {counts[-1]}, what the held-out "
           "papers leave." if cut else ""))
    with tempfile.TemporaryDirectory(prefix="embedsearch-bench-writes-") as temp:
        folder = Path(temp)
        cache_dir = folder / "cache"
        new_files = [folder / f"new-{run}.jsonl" for run in range(runs)]
        indexes: dict[int, Path] = {}
        for size in counts:
            indexes[size] = folder / f"index-{size}"
            began = time.perf_counter()
            with SearchEngine.build(indexes[size], papers[:size],
                                    IndexOptions(fields=DEFAULT_FIELDS), vectors=stored[:size],
                                    backend=BACKEND, cache_dir=cache_dir) as engine:
                if size == counts[0]:  # one cache serves every index: same encoder
                    written = [paper for run, path in enumerate(new_files)
                               for paper in write_new_papers(
                                   papers[new_start + run * added:
                                          new_start + (run + 1) * added], path)]
                    if len(written) != held_out:  # the rows below would be others'
                        raise RuntimeError(f"{len(written)} of the {held_out} held-out "
                                           "papers read back")
                    seed_cache(engine.encoder, written, stored[new_start:])
            _log.info("writes: built an index of %d papers in %.0f s", size,
                      time.perf_counter() - began)
        adds: dict[int, list[ProcessCost]] = {size: [] for size in counts}
        removes: dict[int, list[ProcessCost]] = {size: [] for size in counts}
        common = ["--cache-dir", str(cache_dir), "--quiet"]
        for run in range(runs):
            for size in counts:
                index = ["--index", str(indexes[size])]
                adds[size].append(measure_command(
                    ["add", str(new_files[run]), *index, *common], folder))
                # papers[run] is in every index and no earlier run removed it.
                removes[size].append(measure_command(
                    ["remove", papers[run].id, *index, *common], folder))
                _log.info("writes: run %d of %d at %d papers: add %.1f s, remove %.1f s",
                          run + 1, runs, size, adds[size][-1].seconds,
                          removes[size][-1].seconds)
        for size in counts:  # a write that did less than asked would look cheap
            with SearchEngine.open(indexes[size], cache_dir=cache_dir) as engine:
                if len(engine) != size + runs * (added - 1):
                    raise RuntimeError(f"the index of {size} papers holds {len(engine)} "
                                       f"after {runs} runs, not {size + runs * (added - 1)}")
    for name, costs in ((f"add {added}", adds), ("remove 1", removes)):
        medians = {size: _median_row(costs[size]) for size in counts}
        for size in counts:
            table.add(operation=name, **{"index papers": size}, **medians[size])
        if len(counts) > 1:
            small, large = medians[counts[0]], medians[counts[-1]]
            table.add(operation=f"{name}: x largest / smallest",
                      **{"index papers": f"{counts[-1]} / {counts[0]}"},
                      **{column: large[column] / small[column] if small[column] else ""
                         for column in columns[2:]})
    return table
