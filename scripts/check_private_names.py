"""Fail when a module touches another module's private names.

A name that starts with one underscore is its module's own business: another module
that reads `engine._view`, calls `view._lexical_scores()` or imports `_truncate` ties
itself to internals that may change without notice. This walks every Python file under
the given folders (default: embedsearch) and reports, one line each:

- `from module import _name`;
- `something._name`, where `_name` is not defined (as a function, class, method,
  attribute or assignment) in the file that reads it: the name belongs to another
  module's object.

Dunder names (`__init__`) and IPython's `_repr_html_` are public by convention and
ignored. Usage:

    python scripts/check_private_names.py [FOLDER ...]   (default: embedsearch)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["private_uses"]


def _private(name: str) -> bool:
    # Dunders, and IPython's display protocol (`_repr_html_`), are public by convention.
    public = (name.startswith("__") and name.endswith("__")) or \
        (name.startswith("_repr_") and name.endswith("_"))
    return name.startswith("_") and not public


def _defined(tree: ast.AST) -> set[str]:
    """Every private name the file itself defines."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if _private(name)}


def private_uses(path: Path) -> Iterator[str]:
    """'file:line: what' for each private name of another module that `path` touches."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = _defined(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name):
                    yield f"{path}:{node.lineno}: imports {alias.name} from {node.module}"
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            yield f"{path}:{node.lineno}: reads .{node.attr} of another module's object"


def main(argv: list[str]) -> int:
    folders = [Path(arg) for arg in argv] or [Path("embedsearch")]
    found = [line for folder in folders for path in sorted(folder.rglob("*.py"))
             for line in private_uses(path)]
    print("\n".join(found) if found else "no private name of another module is touched")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
