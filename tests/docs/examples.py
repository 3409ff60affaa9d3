"""The code blocks of README.md and docs/, and a reader who runs them in order.

A page's ```bash and ```python blocks run top to bottom in one folder, the reader's, as
a reader following the page would run them: bash blocks each in a fresh `bash -e`,
python blocks in one interpreter per page, so that a later block sees the names an
earlier one made. The folder holds what the README's quick start left (the bundled
index), and nothing else: a page that needs files makes them in its own blocks. Three
comments steer it, each on a line of its own:

- `<!-- not run: REASON -->` right before a block: it is not run, and REASON says why
  (a GPU, a Milvus server, a Ray cluster, an install). The tests count these.
- `<!-- examples start after: the tutorial -->`: the folder is what the tutorial left
  (its `indexes/mine` and files), for pages that say they build on it.
- `<!-- examples need: your Zotero library -->`: a Zotero library is where Zotero keeps
  it (`~/Zotero`), for the pages about reading one (`world.make_zotero_library`).
- `<!-- examples need: a folder of your PDFs -->`: a folder `papers/` of papers as PDFs
  (`world.make_pdf_folder`), for the page about searching them.
- `<!-- examples need: the ray extra -->` (or another extra of `EXTRAS`): the page's
  examples import what that extra installs; without it (the README's install brings
  `.[dev]` only) the page is skipped, saying which extra it needs.

A block that runs `embedsearch serve` gets the server started in the background on a
free port (curl's requests to 127.0.0.1:8000 later in the block go to the newest one),
goes on once it answers, and stops it when the block ends.

The ```python examples in the docstrings of the public names (`docstring_blocks`) run
the same way: the Python reference shows them.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import select
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import free_port

__all__ = ["Block", "PageRunner", "Start", "blocks", "docstring_blocks", "documentation_pages",
           "start"]

REPO = Path(__file__).resolve().parents[2]
RUN_LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python",
                 "py": "python"}
_FENCE = re.compile(r"^(?P<indent> *)```(?P<language>[\w-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)```",
                    re.M | re.S)
_NOT_RUN = re.compile(r"^\s*<!--\s*not run:(?P<reason>.*?)-->\s*$")
_AFTER = re.compile(r"^<!--\s*examples start after:\s*the tutorial\s*-->\s*$", re.M)
_ZOTERO = re.compile(r"^<!--\s*examples need:\s*your Zotero library\s*-->\s*$", re.M)
_PDFS = re.compile(r"^<!--\s*examples need:\s*a folder of your PDFs\s*-->\s*$", re.M)
_EXTRA = re.compile(r"^<!--\s*examples need:\s*the (?P<extra>[\w-]+) extra\s*-->\s*$", re.M)
#: The optional extras a page may need, by the module that tells whether it is installed.
EXTRAS = {"ray": "ray", "milvus": "pymilvus"}
BLOCK_TIMEOUT_S = 300


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its code, why it is not run."""

    page: Path
    line: int
    language: str
    code: str
    not_run: str | None

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line} ({self.language})"


def documentation_pages() -> list[Path]:
    """README.md and every markdown page under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(page: Path, text: str | None = None, first_line: int = 1) -> list[Block]:
    """The page's shell and Python blocks, in order (of `text` if given: a docstring of
    `page` starting at its line `first_line`)."""
    text = page.read_text(encoding="utf-8") if text is None else text
    found = []
    for match in _FENCE.finditer(text):
        language = RUN_LANGUAGES.get(match["language"].lower())
        if language is None:
            continue
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _NOT_RUN.search(before)
        indent = len(match["indent"])
        code = "\n".join(line[indent:] for line in match["code"].splitlines())
        found.append(Block(page, text.count("\n", 0, match.start()) + first_line, language,
                           code, marker["reason"].strip() if marker else None))
    return found


def docstring_blocks() -> list[Block]:
    """The examples in the docstrings of `embedsearch.__all__` and their public members:
    the Python reference shows them."""
    import embedsearch

    found: list[Block] = []
    seen: set[int] = set()
    for name in embedsearch.__all__:
        owner = getattr(embedsearch, name)
        members = [owner]
        if inspect.isclass(owner):
            members += [member for attribute, member in vars(owner).items()
                        if not attribute.startswith("_")]
        for member in members:
            member = getattr(member, "__func__", member)  # classmethods
            doc = inspect.getdoc(member)
            if not doc or "```" not in doc or id(member) in seen:
                continue
            seen.add(id(member))
            source = Path(inspect.getsourcefile(member) or "")
            found += blocks(source, doc, inspect.getsourcelines(member)[1])
    return found


@dataclass(frozen=True)
class Start:
    """Where a page's examples start: after the tutorial or the quick start, with or
    without the reader's Zotero library, and the optional extras they need."""

    after_tutorial: bool
    zotero: bool
    extras: tuple[str, ...] = ()
    pdfs: bool = False

    def missing_extra(self) -> str | None:
        """Why the page cannot run in this environment (an extra it needs is not
        installed), or None."""
        for extra in self.extras:
            if extra not in EXTRAS:
                raise ValueError(f"unknown extra {extra!r} in an 'examples need' comment; "
                                 f"known: {', '.join(EXTRAS)}")
            if importlib.util.find_spec(EXTRAS[extra]) is None:
                return f"needs the {extra} extra: pip install -e '.[dev,{extra}]'"
        return None


def start(page: Path) -> Start:
    """What the page says its examples start from (its comments, above)."""
    text = page.read_text(encoding="utf-8")
    return Start(bool(_AFTER.search(text)), bool(_ZOTERO.search(text)),
                 tuple(match["extra"] for match in _EXTRA.finditer(text)),
                 bool(_PDFS.search(text)))


# Bash: `embedsearch serve` in the background on $DOCS_PORT until the block ends, and
# curl pointed at it. Everything else is the installed command, as a reader runs it.
_BASH_PRELUDE = r"""
set -eo pipefail
__servers=() __port=$DOCS_PORT
trap '__status=$?; for p in "${__servers[@]}"; do kill "$p"; wait "$p" || true; done 2>/dev/null
      exit $__status' EXIT
embedsearch() {
  if [ "$1" != serve ]; then command embedsearch "$@"; return; fi
  __port=$((DOCS_PORT + ${#__servers[@]}))
  command embedsearch "$@" --port "$__port" & __servers+=($!)
  for _ in $(seq 600); do
    command curl -s -o /dev/null "http://127.0.0.1:$__port/" && return 0
    kill -0 "$!" 2>/dev/null || { echo "embedsearch serve exited" >&2; return 1; }
    sleep 0.2
  done
  echo "embedsearch serve did not answer in 120 s" >&2; return 1
}
curl() {
  local args=(); for a in "$@"; do args+=("${a//127.0.0.1:8000/127.0.0.1:$__port}"); done
  command curl --silent --show-error --fail "${args[@]}"
}
"""

# One interpreter per page: each request is one block, run in the page's namespace.
_PYTHON_WORKER = r"""
import contextlib, io, json, sys, traceback
channel, namespace = sys.stdout, {"__name__": "__main__"}
for request in sys.stdin:
    block, output, error = json.loads(request), io.StringIO(), None
    try:
        code = compile("\n" * (block["line"]) + block["code"], block["page"], "exec")
        with contextlib.redirect_stdout(output):
            exec(code, namespace)
    except BaseException:
        error = traceback.format_exc()
    channel.write(json.dumps({"output": output.getvalue(), "error": error}) + "\n")
    channel.flush()
"""


class PageRunner:
    """Runs one page's blocks in `folder`, keeping its Python namespace between them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        scripts = str(Path(sys.executable).parent)
        if shutil.which("embedsearch", path=scripts) is None:
            raise RuntimeError(f"no embedsearch command next to {sys.executable}: "
                               "pip install -e . in this environment")
        # The reader's own data folder (the bundled index) is in their home, not ours.
        inherited = {key: value for key, value in os.environ.items() if key != "XDG_DATA_HOME"}
        self.env = {**inherited, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}",
                    "HOME": str(folder / "home"), "DOCS_PORT": str(free_port())}
        self._python: subprocess.Popen[str] | None = None

    def run(self, block: Block) -> str:
        """Run one block; its output, or AssertionError with the block and what it said."""
        if block.language == "bash":
            return self._bash(block)
        return self._exec_python(block)

    def _bash(self, block: Block) -> str:
        result = subprocess.run(["bash", "-c", _BASH_PRELUDE + block.code], cwd=self.folder,
                                env=self.env, capture_output=True, text=True,
                                timeout=BLOCK_TIMEOUT_S)
        if result.returncode != 0:
            raise AssertionError(f"{block} exited with {result.returncode}:\n{block.code}\n"
                                 f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}")
        return result.stdout

    def _exec_python(self, block: Block) -> str:
        if self._python is None:
            self._python = subprocess.Popen([sys.executable, "-c", _PYTHON_WORKER],
                                            cwd=self.folder, env=self.env, text=True,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._python.stdin is not None and self._python.stdout is not None
        self._python.stdin.write(json.dumps({"page": str(block.page), "line": block.line,
                                             "code": block.code}) + "\n")
        self._python.stdin.flush()
        # One answer line per block: nothing is left buffered, so select sees it.
        if not select.select([self._python.stdout], [], [], BLOCK_TIMEOUT_S)[0]:
            self._python.kill()
            raise AssertionError(f"{block} did not finish in {BLOCK_TIMEOUT_S} s:\n{block.code}")
        answer = self._python.stdout.readline()
        if not answer:
            raise AssertionError(f"{block}: the interpreter exited:\n{block.code}")
        result = json.loads(answer)
        if result["error"]:
            raise AssertionError(f"{block} raised:\n{block.code}\n--- output\n"
                                 f"{result['output']}\n--- traceback\n{result['error']}")
        return str(result["output"])

    def close(self) -> None:
        if self._python is not None:
            assert self._python.stdin is not None
            self._python.stdin.close()
            self._python.wait(timeout=60)
            self._python = None
