"""The commands that operate an index: check, backup, restore, upgrade, compact, and
cache (the embedding cache every index's encoding shares).

Their arguments are declared here too (`add_commands`, called by the parser), so that
everything an operator runs from cron or by hand is read in one place.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .context import index_path, say, storage_options
from .options import Declare, add_index, add_wait
from .output import counted

__all__ = ["add_commands", "backup", "cache", "check", "compact", "restore", "upgrade"]


def add_commands(command: Declare) -> None:
    """Declare check, backup, restore, upgrade, compact and cache."""
    from ..index.checking import DRIFT_SAMPLE, drift_threshold

    checking = command("check", "Check an index is whole; exit 1 listing each problem.")
    add_index(checking)
    add_wait(checking)
    checking.add_argument("--deep", action="store_true",
                          help="also re-encode a sample of stored papers with the model and "
                               "runtime installed now, and report the cosine to their stored "
                               f"vectors (drift: below {drift_threshold()})")
    checking.add_argument("--sample", type=int, default=DRIFT_SAMPLE, metavar="N",
                          help=f"with --deep: papers re-encoded (default {DRIFT_SAMPLE}; 0: "
                               "every paper)")
    checking.add_argument("--repair", action="store_true",
                          help="fix what can be fixed through the writers' lock: remove what "
                               "dead writers left; with --deep, store the re-encoded vectors "
                               "of drifted papers (damaged files need a restore or rebuild)")
    checking.add_argument("--json", action="store_true", help="the report as one JSON object")
    checking.set_defaults(run=check)

    saving = command("backup", "Copy an index to DEST while it serves (verified).")
    add_index(saving)
    saving.add_argument("dest", metavar="DEST",
                        help="a new folder for the copy, or an earlier backup of this index: "
                             "then only the segments it lacks are copied")
    saving.set_defaults(run=backup)

    back = command("restore", "Replace an index with a backup; servers switch to it.")
    back.add_argument("backup", metavar="BACKUP", help="a folder made by `embedsearch backup`")
    back.add_argument("--index", required=True, metavar="DIR",
                      help="the index to replace (created if absent)")
    add_wait(back)
    back.set_defaults(run=restore)

    newer = command("upgrade", "Rewrite an index of an earlier version in this format.")
    add_index(newer)
    add_wait(newer)
    newer.set_defaults(run=upgrade)

    packing = command("compact", "Merge an index's segments into one, dropping removed "
                                 "papers for good.")
    add_index(packing)
    add_wait(packing)
    packing.set_defaults(run=compact)

    caching = command("cache", "Show, prune or clear the embedding cache.")
    caching.add_argument("action", nargs="?", choices=("info", "prune", "clear"),
                         default="info")
    caching.add_argument("--max-mb", type=float, default=1024,
                         help="with prune: keep the most recently used vectors within this "
                              "size")
    caching.set_defaults(run=cache)


def check(args: argparse.Namespace) -> int:
    from ..engine import SearchEngine
    from ..index.checking import CheckReport
    from ..storage.directory import IndexDirectory

    directory = IndexDirectory(index_path(args))
    damaged = directory.file_problems(directory.read_manifest())
    if damaged:  # its files cannot be trusted to load: report them as they are
        report = CheckReport(damaged)
        say(args, "Damaged files are not repaired in place: restore a backup "
                   "(`embedsearch restore`) or rebuild the index.")
    else:
        with SearchEngine.open(directory.path, verify=False, cache_dir=args.cache_dir,
                               secrets=storage_options(args)) as engine:
            report = engine.check(deep=args.deep, sample=args.sample, repair=args.repair,
                                  wait=args.wait)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        for problem in report.problems:
            print(problem)
        if report.drift is not None:
            drift = report.drift
            say(args, f"Re-encoded {drift.sampled} stored papers: mean cosine "
                       f"{drift.mean_cosine:.5f}, lowest {drift.min_cosine:.5f}, "
                       f"{len(drift.drifted)} below {drift.threshold}.")
        for line in report.repaired:
            say(args, f"Repaired: {line}")
        for problem in report.remains or []:
            print(f"still: {problem}")
        say(args, "The index is whole." if report.whole else "The index has problems.")
    return 0 if report.whole else 1


def backup(args: argparse.Namespace) -> None:
    from ..engine import SearchEngine

    with SearchEngine.open(index_path(args), verify=False) as engine:
        copied = engine.backup(args.dest)
    say(args, f"Backed up {counted(copied.count, 'paper')} to {args.dest} (checksums "
               "verified).")


def compact(args: argparse.Namespace) -> None:
    from ..engine import SearchEngine

    with SearchEngine.open(index_path(args), verify=False,
                           secrets=storage_options(args)) as engine:
        before = engine.info()
        if engine.compact(wait=args.wait):
            say(args, f"Merged {before.segments} segments into one "
                       f"({counted(before.deleted, 'removed paper')} dropped); "
                       f"{counted(len(engine), 'paper')}.")
        else:
            say(args, f"{engine.path} is compact already.")


def restore(args: argparse.Namespace) -> None:
    from ..storage.backup import restore_index

    manifest = restore_index(args.backup, args.index, wait=args.wait)
    say(args, f"Restored {counted(manifest.count, 'paper')} into {args.index} as generation "
               f"{manifest.generation}.")


def upgrade(args: argparse.Namespace) -> None:
    from ..storage.upgrade import upgrade_index

    changes = upgrade_index(index_path(args), wait=args.wait, secrets=storage_options(args))
    if not changes:
        say(args, f"{index_path(args)} is already in this version's format.")
    for change in changes:
        say(args, f"Upgraded: {change}")


def cache(args: argparse.Namespace) -> None:
    from ..encoding import EmbeddingCache, default_cache_dir

    root = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    vectors = EmbeddingCache(root)
    if args.action == "clear":
        say(args, f"Removed {counted(vectors.clear(), 'cached vector')} from {vectors.path}.")
    elif args.action == "prune":
        removed = vectors.prune(int(args.max_mb * 1e6))
        say(args, f"Removed {counted(removed, 'vector')} (least recently used) from "
                  f"{vectors.path}.")
    stats = vectors.stats()
    print(f"{stats.vectors} vectors, {stats.bytes / 1e6:.1f} MB in {stats.path}")
