"""`embedsearch ARGS...` in a process that kills itself with SIGKILL at a named point.

    python tests/crashing_writer.py POINT embedsearch-arguments...

The points are the moments of a write where a crash could leave damage: the test that
runs this checks that the index is still exactly the old one or exactly the new one.
Patching here, in the child, keeps every fault hook out of the package itself.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any


def _die(*args: Any, **kwargs: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _after(calls: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """`real` for the first `calls` calls, then death."""
    count = 0

    def patched(*args: Any, **kwargs: Any) -> Any:
        nonlocal count
        count += 1
        if count > calls:
            _die()
        return real(*args, **kwargs)

    return patched


def _install(point: str) -> None:
    from embedsearch import fs
    from embedsearch.encoding import encoder
    from embedsearch.storage import checksums, directory
    from embedsearch.storage.local import lexical, segment
    from embedsearch.storage.local import storage as local_storage

    if point == "before-staging":  # holding the lock, nothing staged yet
        directory.make_temp_dir = _die  # type: ignore[assignment]
    elif point == "while-encoding":
        encoder.Encoder.encode_documents = _die  # type: ignore[method-assign]
    elif point == "while-writing-segment":  # records and vectors written, postings not
        lexical.Postings.save = _die  # type: ignore[method-assign]
    elif point == "while-writing-passages":  # a segment's papers written, its passages not
        segment.write_full_text = _die  # type: ignore[assignment]
    elif point == "while-linking":  # the new segment written, one old file shared
        directory.os.link = _after(1, directory.os.link)  # type: ignore[attr-defined]
    elif point == "while-deleting":  # a segment's new deletions file half written
        local_storage.write_deletions = _die  # type: ignore[assignment]
    elif point == "while-merging":  # segments being merged into one
        local_storage.merge_segments = _die  # type: ignore[assignment]
    elif point == "while-checksumming":  # staged, not yet renamed into place
        checksums.sha256_file = _after(0, checksums.sha256_file)  # type: ignore[assignment]
    elif point == "after-rename":  # the generation in place, the manifest not yet
        directory.write_atomic = _die  # type: ignore[assignment]
    elif point == "mid-manifest":  # the new manifest written aside, not renamed
        fs.os.replace = _die  # type: ignore[assignment]
    elif point == "before-cleanup":  # published; old generations not yet removed
        commit = directory.IndexDirectory.commit

        def commit_then_die(self: Any, *args: Any) -> Any:
            self.collect_garbage = _die
            return commit(self, *args)

        directory.IndexDirectory.commit = commit_then_die  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown point {point}")


if __name__ == "__main__":
    _install(sys.argv[1])
    from embedsearch.cli import main

    sys.exit(main(sys.argv[2:]))
