"""The corpus that ships with embedsearch and where its default index lives.

The sample is 38 ICLR 2025 abstracts (no titles) in the seed text layout; searching
without `--index` builds its index on first use, of `sample_papers`: ids `iclr2025:1`
to `iclr2025:38`, which `embedsearch sample FILE` writes too, so the documentation's
examples name papers every reader has.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .papers import Paper, derive_title

__all__ = ["SAMPLE_INDEX", "SAMPLE_PREFIX", "corpus_files", "default_index",
           "sample_abstracts", "sample_papers"]

#: The sample's index below the folder that keeps indexes (see `default_index`).
SAMPLE_INDEX = Path("indexes") / "iclr2025"
#: A checkout of embedsearch: its pyproject.toml names the project (read as text: no
#: tomllib before Python 3.11).
_OUR_PROJECT = re.compile(r'^name\s*=\s*"embedsearch"\s*$', re.MULTILINE)
_CORPUS = Path(__file__).resolve().parent / "data" / "iclr2025"
#: The sample papers' ids: iclr2025:1 ... iclr2025:38, in the order of `sample_abstracts`.
SAMPLE_PREFIX = "iclr2025"


def default_index(folder: str | os.PathLike[str] | None = None) -> Path:
    """Where the bundled sample's index lives, which a command without --index builds on
    first use, for a command run in `folder` (default: the working folder).

    Inside a checkout of embedsearch (`folder` or a folder above it holds the project's
    pyproject.toml and its `indexes/`, which git ignores), that checkout's
    `indexes/iclr2025`; elsewhere the user's data folder:
    `$XDG_DATA_HOME/embedsearch/indexes/iclr2025`, by default
    `~/.local/share/embedsearch/indexes/iclr2025`. Never the folder a search happens to
    run in: the first one made `./indexes/iclr2025` wherever the user stood.
    """
    start = Path(folder or Path.cwd()).resolve()
    for candidate in (start, *start.parents):
        project = candidate / "pyproject.toml"
        if ((candidate / "indexes").is_dir() and project.is_file()
                and _OUR_PROJECT.search(project.read_text(encoding="utf-8", errors="replace"))):
            return candidate / SAMPLE_INDEX
    return _data_home() / "embedsearch" / SAMPLE_INDEX


def _data_home() -> Path:
    """$XDG_DATA_HOME, else ~/.local/share (the XDG rule: a relative value is ignored)."""
    given = os.environ.get("XDG_DATA_HOME", "")
    return Path(given) if os.path.isabs(given) else Path.home() / ".local" / "share"


def corpus_files() -> list[Path]:
    """The bundled sample corpus files, in a fixed order."""
    return sorted(_CORPUS.glob("*.txt"))


def sample_abstracts() -> list[str]:
    """The sample's abstracts as plain strings (each file: a header line, then paragraphs).

    Real text the package always has: what `--backend auto` times and int8 calibrates on.
    """
    texts: list[str] = []
    for path in corpus_files():
        paragraphs = path.read_text(encoding="utf-8").split("\n\n")[1:]
        texts.extend(" ".join(p.split()) for p in paragraphs if p.strip())
    return texts


def sample_papers() -> list[Paper]:
    """The sample as papers: ids `iclr2025:1` ... `iclr2025:38` (stable: the order of
    `sample_abstracts`), each titled by its abstract's opening (`title_derived`), ICLR
    2025. What the default index holds and `embedsearch sample` writes."""
    return [Paper(id=f"{SAMPLE_PREFIX}:{number}", abstract=abstract,
                  title=derive_title(abstract), title_derived=True, venue="ICLR", year=2025)
            for number, abstract in enumerate(sample_abstracts(), start=1)]
