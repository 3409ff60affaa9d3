"""Printing benchmark results: one aligned table per section, same-run ratios included."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO, Any

__all__ = ["Table"]


class Table:
    """Rows of named cells, printed aligned under a title."""

    def __init__(self, title: str, columns: Sequence[str], note: str = "") -> None:
        self.title, self.columns, self.note = title, list(columns), note
        self.rows: list[dict[str, Any]] = []

    def add(self, **cells: Any) -> None:
        self.rows.append(cells)

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "note": self.note, "rows": self.rows}

    def print(self, out: IO[str] | None = None) -> None:
        out = out or sys.stdout
        text = [[_cell(row.get(column, "")) for column in self.columns] for row in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in text]) for i, c in enumerate(self.columns)]
        out.write(f"\n## {self.title}\n")
        if self.note:
            out.write(f"{self.note}\n")
        out.write("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip() + "\n")
        out.write("  ".join("-" * w for w in widths) + "\n")
        for row in text:
            out.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
        out.flush()


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.3f}" if abs(value) >= 0.01 or value == 0 else f"{value:.2e}"
    return str(value)
