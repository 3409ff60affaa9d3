"""The MCP tools against the same calls through the Python API, warm, over the dev corpus.

Each tool is called through the SDK's own client connected in process (so the protocol's
messages, validation and the text of the answer are all counted, but no pipe or socket)
and, beside it on the same input, the engine call it stands for: `search` (k=10) and
`SearchEngine.search`; `similar` from one id and `SearchEngine.similar`; `recommend`
from five ids and `similar_to_papers` on those papers; `get` and `SearchEngine.get`
with `to_bibtex`; `info` and `SearchEngine.info`. Inputs change from call to call (the
dev queries, papers spread over the index); each pair runs in turn after a warm-up and
the medians are compared. Target (issue 32): every tool within 1.5x its Python call;
a default search answer under 4,000 characters (the largest over the queries is shown).
"extra ms" is what the protocol adds: a fixed cost of a few tenths of a millisecond
(validating the request and the answer, a worker thread for the engine call), which
only the calls that take less than a millisecond or two (`get`, `info`) notice.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from ..exporting import to_bibtex
from .report import Table

__all__ = ["assistant_table"]

Case = tuple[str, dict[str, Any], Callable[[], object]]  # tool, arguments, Python call


def _cases(engine: SearchEngine, queries: list[str], ids: list[str], number: int) -> list[Case]:
    """The five tools' calls of round `number`, each with its Python API twin."""
    query, paper = queries[number % len(queries)], ids[number % len(ids)]
    reading = [ids[(number * 5 + step) % len(ids)] for step in range(5)]
    return [
        ("search", {"query": query}, lambda: engine.search(query, 10)),
        ("similar", {"ids": [paper]}, lambda: engine.similar(paper, 10)),
        ("recommend", {"papers": reading}, lambda: engine.similar_to_papers(
            [engine.get(paper_id) for paper_id in reading], 10)),
        ("get", {"id": paper}, lambda: to_bibtex([engine.get(paper)])),
        ("info", {}, engine.info),
    ]


async def _measure(engine: SearchEngine, queries: list[str], ids: list[str],
                   calls: int) -> tuple[dict[str, list[float]], dict[str, list[float]],
                                        list[int]]:
    from mcp import Client

    from ..integrations.mcp import create_server

    python: dict[str, list[float]] = {}
    tools: dict[str, list[float]] = {}
    sizes: list[int] = []
    async with Client(create_server(engine, local=True)) as client:
        for number in range(-3, calls):  # three warm-up rounds, not counted
            for name, arguments, direct in _cases(engine, queries, ids, number):
                start = time.perf_counter()
                direct()
                middle = time.perf_counter()
                answer = await client.call_tool(name, arguments)
                end = time.perf_counter()
                if answer.is_error:
                    raise RuntimeError(f"{name} failed: {answer.content}")
                if number >= 0:
                    python.setdefault(name, []).append(middle - start)
                    tools.setdefault(name, []).append(end - middle)
                    if name == "search":
                        sizes.append(len(getattr(answer.content[0], "text", "")))
    return python, tools, sizes


def assistant_table(devset: DevSet, index_dir: Path, calls: int = 100) -> Table:
    """Median milliseconds of each MCP tool and of its Python API call, side by side."""
    queries = [query.text for query in devset.queries]
    with SearchEngine.open(index_dir) as engine:
        with engine.snapshot() as view:
            keys = view.keys()
            step = max(1, len(keys) // max(calls * 5, 1))
            ids = [paper.id for paper in view.papers(int(key) for key in keys[::step]).values()]
        python, tools, sizes = asyncio.run(_measure(engine, queries, ids, calls))
        table = Table(f"MCP tools against the Python API on {len(engine):,} papers, warm",
                      ["tool", "python ms", "mcp ms", "extra ms", "ratio"],
                      f"medians of {calls} calls each, in process (mcp.Client); default "
                      f"search answer: median {statistics.median(sizes):,.0f}, largest "
                      f"{max(sizes):,} characters")
    for name, seconds in python.items():
        direct, tool = statistics.median(seconds) * 1000, statistics.median(tools[name]) * 1000
        table.add(tool=name, **{"python ms": direct, "mcp ms": tool, "extra ms": tool - direct,
                                "ratio": tool / direct})
    return table
