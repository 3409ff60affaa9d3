"""The commands that measure embedsearch itself: `bench` (performance) and `eval`
(ranking quality), declared (`add_commands`) and run here. Their options are declared
by their packages (`benchmark.options`, `evaluation.options`), beside what they
measure, in modules light enough for every command line to build."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..benchmark import options as benchmark_options
from ..evaluation import options as evaluation_options
from .options import Declare

__all__ = ["add_commands", "bench", "evaluate"]


def add_commands(command: Declare) -> None:
    """Declare bench and eval, without the common options (their runs read none)."""
    benchmarking = command("bench", "Measure performance against the naive pipeline.",
                           common=False)
    benchmark_options.add_arguments(benchmarking)
    benchmarking.set_defaults(run=bench)
    evaluating = command("eval", "Score ranking quality on labelled queries, every mode "
                                 "side by side.", common=False)
    evaluation_options.add_arguments(evaluating)
    evaluating.set_defaults(run=evaluate)


def bench(args: argparse.Namespace) -> None:
    """Every section's table as it comes, and with --json FILE all of them in FILE."""
    from ..benchmark.suite import run

    tables = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps([table.to_dict() for table in tables],
                                              indent=2))


def evaluate(args: argparse.Namespace) -> int:
    from ..evaluation.evaluate import run

    return run(args)
