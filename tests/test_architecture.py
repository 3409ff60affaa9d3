"""The shape of the house, held by the suite: no module touches another's private names,
no module is over 400 lines, no two modules import each other in a
circle, and no arrow points back up (the vocabulary imports only the vocabulary, and
only the faces import the engine), a lazy import inside a function included."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "embedsearch"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of ours (among `modules`) that `path` imports, at any depth of its code
    (a lazy import inside a function is a dependency too). `from package import name`
    imports the module `package.name` when there is one, else a name `package`'s face
    hands on: an import of that face."""
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
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.add(submodule if submodule in modules else module)
    return found & modules


def test_no_module_touches_another_modules_private_names() -> None:
    done = subprocess.run([sys.executable, "scripts/check_private_names.py", "embedsearch",
                           "scripts", "tests"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_no_module_is_over_400_lines() -> None:
    """Every line counts, docstrings too: a module a reader opens is read whole."""
    long = {str(path.relative_to(REPO)): lines for path in PACKAGE.rglob("*.py")
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_two_modules_import_each_other_in_a_circle() -> None:
    """Package faces included: a module that imports its own package's `__init__`
    while that `__init__` imports it (readers/pdf's worker did) is a circle too, which
    only import order keeps working."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    circles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(" -> ".join([*trail, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    assert circles == []


#: The shared vocabulary (/work/shared/DESIGN.md's first room): what every part may
#: import, so it imports nothing of ours but itself.
VOCABULARY = ("embedsearch.papers", "embedsearch.errors", "embedsearch.text",
              "embedsearch.filters")
#: The faces over the engine (and the package's own face, which hands their names on).
FACES = ("embedsearch.cli", "embedsearch.server", "embedsearch.integrations",
         "embedsearch.evaluation", "embedsearch.benchmark")


def _within(name: str, rooms: tuple[str, ...]) -> bool:
    return any(name == room or name.startswith(room + ".") for room in rooms)


def _our_modules() -> dict[str, set[str]]:
    """Each module of the package and the modules of ours it imports (a name imported
    from a module stands for that module)."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}


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


ARCHITECTURE_PAGE = REPO / "docs" / "explanation" / "architecture.md"


def _page_rooms() -> dict[str, set[str]]:
    """Each room of the architecture page's module table (its folder under the package,
    '' for the root) and the modules its row names."""
    text = ARCHITECTURE_PAGE.read_text(encoding="utf-8")
    table = text[text.index("| room | owns |"):].split("\n\n", 1)[0]
    rows = table.splitlines()[2:]
    rooms: dict[str, set[str]] = {}
    for row in rows:
        head, owns = row.strip("|").split("|", 1)
        folders = re.findall(r"`([a-z_/]+)/`", head)
        folder = folders[0] if folders and folders[0] != "embedsearch" else ""
        rooms[folder] = set(re.findall(r"`([a-z_]+\.py)`", owns))
    return rooms


def _package_rooms() -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        folder = str(path.parent.relative_to(PACKAGE)).replace(".", "")
        rooms.setdefault(folder, set()).add(path.name)
    return rooms


def test_the_architecture_page_names_every_module() -> None:
    """The page's map is the tree: every folder of the package is a row, and each row
    names every module of its folder (a package's `__init__.py` only where it owns
    something), so a moved or new module fails here until the page says where it is."""
    page, package = _page_rooms(), _package_rooms()
    assert sorted(page) == sorted(package)
    differences = {folder: (sorted(page[folder] - package[folder]),
                            sorted(package[folder] - page[folder] - {"__init__.py"}))
                   for folder in package if page[folder] - package[folder]
                   or package[folder] - page[folder] - {"__init__.py"}}
    assert differences == {}


#: String-key access to a manifest record (`manifest.model["dim"]`, `.get("kind")`),
#: and where each kind of record may be read by key: nowhere for the typed records
#: (storage/records.py and manifest.py read and write their JSON), a storage kind's
#: settings only by that kind, a vector index's parameters only by its implementation.
_RECORD_KEYS = {
    r"\.(model|text|index|storage|local|prompts|rules)": (),
    r"\.settings": ("storage/milvus/",),
    r"\.params": ("storage/local/vectors/", "storage/milvus/"),
    r"\b(segment|record)\[[\"'](name|count|deleted|index)[\"']\]|\.segments\[\d+\]": (),
}
_RECORD_OWNERS = ("storage/records.py", "storage/manifest.py")


def keyed_record_reads(package: Path) -> list[str]:
    """Each place in `package` that reads a manifest record by string key outside the
    modules that own the key ("path:line: text")."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where in _RECORD_OWNERS:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern, owners in _RECORD_KEYS.items():
            if owners and where.startswith(owners):
                continue
            keyed = re.compile(pattern if pattern.startswith(r"\b") else
                               rf"({pattern})(\[[\"']|\.get\([\"']|\[\d+\]\[[\"'])")
            found += [f"{where}:{text.count(chr(10), 0, hit.start()) + 1}: {hit.group(0)}"
                      for hit in keyed.finditer(text)]
    return found


def test_no_module_reads_a_manifest_record_by_string_key_outside_its_owner() -> None:
    """The manifest's records are typed (storage/records.py); read as dicts, they had
    gathered some 38 string-key lookups in 10 files, and 41 of segments' records."""
    assert keyed_record_reads(PACKAGE) == []
