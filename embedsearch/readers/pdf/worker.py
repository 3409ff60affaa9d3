"""One worker process that reads PDFs for this one, so a hostile file costs little.

PDFium is C++: a file built to make it loop, exhaust memory or crash would otherwise
take the whole build with it, and a Python thread cannot stop C code. The worker is a
plain `python -m embedsearch.readers.pdf.worker` (not multiprocessing, whose spawn
would re-run a caller's script that lacks an `if __name__ == "__main__"` guard) that
reads one path per line on stdin and answers one JSON line per file. It starts on the
first PDF and serves every later one, so a folder of hundreds pays its start (about
0.15 s) once; a file that outlasts its time limit gets the worker killed, the file
skipped as damaged, and a fresh worker for the next one.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from .extraction import PdfExtraction, extract_here

__all__ = ["PdfWorker", "shared_worker"]

#: The worker's address space: PDFium reading three pages needs well under 200 MB, and
#: an allocation past this fails (the worker dies, the file is skipped) instead of
#: making the machine swap.
MEMORY_LIMIT = 2 << 30
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

    def extract(self, path: Path, timeout: float | None) -> PdfExtraction:
        """`path` read in the worker; a timeout or a crash gives a skipped extraction."""
        with self._lock:
            try:
                process = self._running()
            except OSError:  # no way to start a process here: read in this one
                return extract_here(path)
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps({"path": str(path.absolute())}) + "\n")
                process.stdin.flush()
            except OSError:
                self._stop()
                return PdfExtraction(path, skipped="damaged: the PDF reader stopped "
                                                   "before reading it")
            limit = None if timeout is None else timeout + (_START_S if self._fresh else 0)
            try:
                answer = self._answers.get(timeout=limit)
            except queue.Empty:
                self._stop()
                return PdfExtraction(path, skipped=f"damaged: reading it took longer "
                                                   f"than {timeout:g} s")
            self._fresh = False
            if answer is None:
                self._stop()
                return PdfExtraction(path, skipped="damaged: the PDF reader crashed on it "
                                                   "(or ran out of memory)")
            return PdfExtraction.from_dict(json.loads(answer))

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
    for request in sys.stdin:
        path = Path(json.loads(request)["path"])
        try:
            extraction = extract_here(path)
        except MemoryError:
            extraction = PdfExtraction(path, skipped="damaged: reading it needed more "
                                                     f"than {MEMORY_LIMIT >> 30} GiB")
        except Exception as exc:  # a bug of ours on one odd file must not stop the rest
            extraction = PdfExtraction(path, skipped=f"damaged: {type(exc).__name__}: {exc}")
        sys.stdout.write(json.dumps(extraction.to_dict()) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
