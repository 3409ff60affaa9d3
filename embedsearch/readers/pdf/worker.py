"""One worker process that reads PDFs for this one, so a hostile file costs little.

PDFium is C++: a file built to make it loop, exhaust memory or crash would otherwise
take the whole build with it, and a Python thread cannot stop C code. The worker is a
plain `python -m embedsearch.readers.pdf.worker` (not multiprocessing, whose spawn
would re-run a caller's script that lacks an `if __name__ == "__main__"` guard) that
reads one request per line on stdin (a path, and whether to read the full text) and
answers with JSON lines: the first pages' fields, then, for the full text, the same
with the body's passages; the last answer of a file says it is the last. It starts on
the first PDF and serves every later one, so a folder of hundreds pays its start (about
0.15 s) once. A file whose first pages outlast their time limit gets the worker killed,
the file skipped as damaged, and a fresh worker for the next one; a body that outlasts
its own limit (`body_limit`) or crashes the worker costs only the passages: the fields
already answered are kept, with the reason in `body_skipped`.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from .body import MAX_BODY_PAGES
from .extraction import PdfExtraction, extract_here, extract_stages

__all__ = ["BODY_SECONDS_PER_PAGE", "BODY_TIMEOUT_S", "PdfWorker", "body_limit",
           "shared_worker"]

#: The worker's address space: PDFium reading three pages needs well under 200 MB, and
#: an allocation past this fails (the worker dies, the file is skipped, or keeps its
#: first pages' fields) instead of making the machine swap. A body holds every page's
#: lines at once: the worker's peak resident memory was 29 MiB reading the largest real
#: PDF in full (39 pages) and 96 MiB for a 600-page one (scripts/pdf_body_cost.py).
MEMORY_LIMIT = 2 << 30
#: Seconds a body may take beyond its pages' allowance: opening, the passages' split.
BODY_TIMEOUT_S = 20.0
#: Seconds a body may take for each page read: a body took 15 ms a page on average
#: over the real PDFs of tests/data/pdfs/real on an idle 2-core EPYC, 28 ms on a loaded
#: one, and 33 to 82 ms on the slowest (rcpp-introduction.pdf; scripts/pdf_body_cost.py);
#: three times the slowest seen leaves room for denser pages and a busier machine, and
#: still stops a 600-page file that hangs within three minutes.
BODY_SECONDS_PER_PAGE = 0.25
_START_S = 30.0  # first answer allowance on top of a file's own limit: imports, a cold disk


class PdfWorker:
    """A worker process, started on first use and restarted after a failure."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._fresh = True

    @property
    def process(self) -> subprocess.Popen[str] | None:
        """The worker process while one runs (None before the first file)."""
        return self._process

    def extract(self, path: Path, timeout: float | None, *, full_text: bool = False,
                body_timeout: float | None = None) -> PdfExtraction:
        """`path` read in the worker; a timeout or a crash on its first pages gives a
        skipped extraction, on its body the first pages' fields with `body_skipped`.
        `body_timeout` is the body's limit (default `body_limit` of its pages; none
        when `timeout` is None)."""
        with self._lock:
            try:
                process = self._running()
            except OSError:  # no way to start a process here: read in this one
                return extract_here(path, full_text)
            assert process.stdin is not None
            request = {"path": str(path.absolute()), "full_text": full_text}
            try:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
            except OSError:
                self._stop()
                return PdfExtraction(path, skipped="damaged: the PDF reader stopped "
                                                   "before reading it")
            limit = None if timeout is None else timeout + (_START_S if self._fresh else 0)
            answer = self._answer(limit)
            if not isinstance(answer, tuple):
                return PdfExtraction(path, skipped=f"damaged: {_failure(answer, timeout)}")
            self._fresh = False
            found, last = answer
            if last:
                return found
            if timeout is not None and body_timeout is None:
                body_timeout = body_limit(found.pages)
            answer = self._answer(body_timeout)
            if not isinstance(answer, tuple):
                return dataclasses.replace(found, body_skipped=f"its body was not read: "
                                                               f"{_failure(answer, body_timeout)}")
            return answer[0]

    def _answer(self, limit: float | None) -> tuple[PdfExtraction, bool] | str:
        """The worker's next answer and whether it is its last for the file; or, when
        none came ("timeout", "crash"), the worker stopped and what happened."""
        try:
            answer = self._answers.get(timeout=limit)
        except queue.Empty:
            self._stop()
            return "timeout"
        if answer is None:
            self._stop()
            return "crash"
        data = json.loads(answer)
        return PdfExtraction.from_dict(data["extraction"]), bool(data["last"])

    def _running(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            package_root = str(Path(__file__).resolve().parents[3])
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root,
                                                              env.get("PYTHONPATH")]))
            self._process = subprocess.Popen(
                [sys.executable, "-m", "embedsearch.readers.pdf.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True, encoding="utf-8", env=env)
            self._answers = queue.Queue()
            self._fresh = True
            threading.Thread(target=_pump, args=(self._process, self._answers),
                             daemon=True).start()
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
        if process is not None:
            process.wait()

    def close(self) -> None:
        """End the worker: it sees the end of its input and exits."""
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            try:
                assert process.stdin is not None
                process.stdin.close()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()


def body_limit(pages: int) -> float:
    """Seconds the body of a PDF of `pages` pages may take to read."""
    return BODY_TIMEOUT_S + BODY_SECONDS_PER_PAGE * min(pages, MAX_BODY_PAGES)


def _failure(what: str, limit: float | None) -> str:
    if what == "timeout":
        return f"reading it took longer than {limit:g} s"
    return "the PDF reader crashed on it (or ran out of memory)"


def _pump(process: subprocess.Popen[str], answers: queue.Queue[str | None]) -> None:
    """Every line the worker writes, then None when its output ends (it exited)."""
    assert process.stdout is not None
    for line in process.stdout:
        answers.put(line)
    answers.put(None)


_SHARED: PdfWorker | None = None
_SHARED_LOCK = threading.Lock()


def shared_worker() -> PdfWorker:
    """The process's one worker, closed when the process exits."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = PdfWorker()
            atexit.register(_SHARED.close)
        return _SHARED


def _limit_memory() -> None:
    try:
        import resource
    except ImportError:  # not on Windows: the time limit still holds
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > MEMORY_LIMIT:
        limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main() -> None:
    """Serve requests on stdin until it closes: one JSON line in, one out."""
    _limit_memory()
    for line in sys.stdin:
        request = json.loads(line)
        _serve(Path(request["path"]), bool(request.get("full_text")))


def _serve(path: Path, full_text: bool) -> None:
    """Answer each stage of `path` as soon as it is read; a failure after the first
    pages is answered as those pages' fields with the reason the body was not read."""
    sent: PdfExtraction | None = None
    stages = extract_stages(path, full_text)
    try:
        for stage in stages:
            # A readable file's first pages are followed by its body when asked for.
            _send(stage, last=not (sent is None and full_text and stage.ok))
            sent = stage
        return
    except MemoryError:
        reason = f"reading it needed more than {MEMORY_LIMIT >> 30} GiB"
    except Exception as exc:  # a bug of ours on one odd file must not stop the rest
        reason = f"{type(exc).__name__}: {exc}"
    finally:
        stages.close()
    if sent is None:
        _send(PdfExtraction(path, skipped=f"damaged: {reason}"), last=True)
    else:
        _send(dataclasses.replace(sent, body_skipped=f"its body was not read: {reason}"),
              last=True)


def _send(extraction: PdfExtraction, *, last: bool) -> None:
    sys.stdout.write(json.dumps({"extraction": extraction.to_dict(), "last": last}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
