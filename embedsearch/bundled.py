"""The corpus that ships with embedsearch and where its default index lives.

The sample is 38 ICLR 2025 abstracts (no titles) in the seed text layout; searching
without `--index` builds its index on first use.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_INDEX", "corpus_files", "sample_abstracts"]

#: Where `embedsearch search` without --index keeps the default index (relative to the
#: working directory, like the project's own indexes/ folder).
DEFAULT_INDEX = Path("indexes") / "iclr2025"
_CORPUS = Path(__file__).resolve().parent / "data" / "iclr2025"


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
