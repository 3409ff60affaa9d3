"""The corpus that ships with embedsearch and where its default index lives.

The sample is 38 ICLR 2025 abstracts (no titles) in the seed text layout; searching
without `--index` builds its index on first use, of `sample_papers`: ids `iclr2025:1`
to `iclr2025:38`, which `embedsearch sample FILE` writes too, so the documentation's
examples name papers every reader has.
"""

from __future__ import annotations

from pathlib import Path

from .papers import Paper, derive_title

__all__ = ["DEFAULT_INDEX", "SAMPLE_PREFIX", "corpus_files", "sample_abstracts",
           "sample_papers"]

#: Where `embedsearch search` without --index keeps the default index (relative to the
#: working directory, like the project's own indexes/ folder).
DEFAULT_INDEX = Path("indexes") / "iclr2025"
_CORPUS = Path(__file__).resolve().parent / "data" / "iclr2025"
#: The sample papers' ids: iclr2025:1 ... iclr2025:38, in the order of `sample_abstracts`.
SAMPLE_PREFIX = "iclr2025"


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
