"""The shape of the house, held by the suite: no module touches another's private names,
no module is over 400 lines of code and comments, no two modules import each other in a
circle, and no arrow points back up (the vocabulary imports only the vocabulary, and
only the faces import the engine), a lazy import inside a function included."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "embedsearch"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The embedsearch modules `path` imports, at any depth of its code (a lazy import
    inside a function is a dependency too)."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("embedsearch")}


def test_no_module_touches_another_modules_private_names() -> None:
    done = subprocess.run([sys.executable, "scripts/check_private_names.py", "embedsearch",
                           "scripts", "tests"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def _lines_without_docstrings(path: Path) -> int:
    """Lines of `path`, less those of its docstrings: the size a reader of the code
    weighs. Docstrings are the generated reference's text (parameters, errors,
    examples) and are not held to the module limit, so documenting a name never
    forces a split."""
    text = path.read_text(encoding="utf-8")
    docstrings = 0
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str) and first.end_lineno is not None):
                docstrings += first.end_lineno - first.lineno + 1
    return len(text.splitlines()) - docstrings


def test_no_module_is_over_400_lines() -> None:
    long = {str(path.relative_to(REPO)): lines for path in PACKAGE.rglob("*.py")
            if (lines := _lines_without_docstrings(path)) > MAX_LINES}
    assert long == {}


def test_no_two_modules_import_each_other_in_a_circle() -> None:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: {imported for imported in _imports(path) if imported in modules
                    and imported != name and not name.startswith(imported + ".")}
             for name, path in modules.items()}
    # A package's face (__init__) hands its modules' names on; an import of a module's
    # own package is not a circle through that module.
    circles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start and len(trail) > 1 and not any(
                        other.startswith(start + ".") or start.startswith(other + ".")
                        for other in trail[1:]):
                    circles.append(" -> ".join([*trail, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    assert circles == []


#: The shared vocabulary (/work/shared/DESIGN.md's first room): what every part may
#: import, so it imports nothing of ours but itself.
VOCABULARY = ("embedsearch.papers", "embedsearch.errors", "embedsearch.text")
#: The faces over the engine (and the package's own face, which hands their names on).
FACES = ("embedsearch.cli", "embedsearch.server", "embedsearch.integrations",
         "embedsearch.evaluation", "embedsearch.benchmark")


def _within(name: str, rooms: tuple[str, ...]) -> bool:
    return any(name == room or name.startswith(room + ".") for room in rooms)


def _our_modules() -> dict[str, set[str]]:
    """Each module of the package and the modules of ours it imports (a name imported
    from a module stands for that module)."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {imported for imported in _imports(path) if imported in modules
                   and imported != name} for name, path in modules.items()}


def test_the_vocabulary_imports_nothing_above_it() -> None:
    """papers.py read LaTeX through readers.latex, lazily: an arrow from the vocabulary
    up to a part that reads into Papers."""
    upward = {name: sorted(imported for imported in imports
                           if not _within(imported, VOCABULARY))
              for name, imports in _our_modules().items() if _within(name, VOCABULARY)}
    assert {name: found for name, found in upward.items() if found} == {}


def test_only_the_faces_import_the_engine_or_a_face() -> None:
    upward = {name: sorted(imported for imported in imports
                           if imported == "embedsearch.engine" or _within(imported, FACES))
              for name, imports in _our_modules().items()
              if name != "embedsearch" and not _within(name, FACES)}
    assert {name: found for name, found in upward.items() if found} == {}


def test_every_face_offers_every_recommendation_method() -> None:
    """The CLI and the HTTP schema spell the methods out (the CLI so as not to import
    numpy to parse its arguments); they must stay those `recommending` has."""
    from typing import get_args

    from embedsearch.cli.searching import METHOD_CHOICES
    from embedsearch.server.schemas import Method
    from embedsearch.similar.recommending import DEFAULT_METHOD, METHODS

    assert set(METHOD_CHOICES) == set(get_args(Method)) == set(METHODS)
    assert METHOD_CHOICES[0] == DEFAULT_METHOD
