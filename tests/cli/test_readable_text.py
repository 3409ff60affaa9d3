"""The CLI's text output shows a paper's text as words: LaTeX and Markdown markup as
what it means, a derived title as the abstract's opening; JSON keeps the text as stored."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.bundled import sample_abstracts
from embedsearch.cli import output
from embedsearch.text import plain_text
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
# What a reader must never see raw: escapes, text macros, math delimiters, emphasis marks.
RAW_MARKUP = re.compile(r"\\%|\\text|\\href|\\emph|\$|\*\*|\*\w[^*]*\*|\\times")


@pytest.mark.parametrize(("written", "shown"), [
    (r"achieving over 80\% retention \& more", "achieving over 80% retention & more"),
    ("we propose *PruneNet*, **Lo**w-**R**ank and __bold__ or _it_", "we propose PruneNet, "
     "Low-Rank and bold or it"),
    (r"GQT (\textbf{G}raph \textbf{Q}uantized), \emph{holistic} \textit{reasoning}",
     "GQT (Graph Quantized), holistic reasoning"),
    (r"up to $6\times$ faster, $\texttt{SELECT}$ with $N$ agents and $\alpha$-divergence",
     "up to 6× faster, SELECT with N agents and α-divergence"),
    # A bare % is a percent sign, not a comment that swallows the rest.
    (r"accuracy by $\textbf{16.32}$%$\uparrow$, achieving more", "accuracy by 16.32%↑, "
     "achieving more"),
    (r"at \href{https://github.com/a/b_c}{https://github.com/a/b_c}.",
     "at https://github.com/a/b_c."),
    # Ordinary text keeps its stars, underscores and tildes.
    ("2*3*4 = 24 in snake_case_name at https://x.org/~me/a_b", "2*3*4 = 24 in "
     "snake_case_name at https://x.org/~me/a_b"),
    ("plain words, no markup", "plain words, no markup"),
])
def test_plain_text_shows_markup_as_words(written: str, shown: str) -> None:
    assert plain_text(written) == shown


def test_no_sample_abstract_shows_markup() -> None:
    for abstract in sample_abstracts():
        shown = plain_text(abstract)
        assert not RAW_MARKUP.search(shown), shown
        # Every word survives: the text is as long as it was, give or take the markup.
        assert len(shown) > 0.9 * len(" ".join(abstract.split()))


def _sample_id(seed_index: Path, words: str) -> str:
    with SearchEngine.open(seed_index) as engine, engine.snapshot() as view:
        papers = view.papers(view.keys()).values()
        (found,) = [paper.id for paper in papers if words in paper.abstract]
    return found


def test_show_prints_the_abstract_as_words_and_json_as_stored(cli: Cli,
                                                              seed_index: Path) -> None:
    pruning = _sample_id(seed_index, "*PruneNet*")
    shown = cli("show", pruning, "--index", seed_index)
    assert shown.code == 0, shown.err
    assert "we propose PruneNet, a novel" in shown.out
    assert "over 80% retention" in " ".join(shown.out.split())
    assert not RAW_MARKUP.search(shown.out)
    # The title is the abstract's opening, said so, not a title.
    first = shown.out.splitlines()[0]
    assert first.startswith("The ever-increasing size of large language models")
    assert first.endswith("…  (untitled: the abstract's opening)")
    (stored,) = cli("show", pruning, "--index", seed_index, "--json").json_lines()
    assert r"over 80\% retention" in str(stored["abstract"]) and stored["title_derived"]


def test_search_lists_every_sample_paper_without_markup(cli: Cli, seed_index: Path) -> None:
    for mode in ("dense", "hybrid"):  # the abstract's start, and evidence sentences
        result = cli("search", "low-rank adaptation of sparse language models", "--index",
                     seed_index, "-k", "38", "--mode", mode)
        assert result.code == 0, result.err
        assert not RAW_MARKUP.search(result.out), RAW_MARKUP.findall(result.out)
    losa = cli("search", "dynamic low-rank sparse adaptation integrated into sparsity",
               "--index", seed_index, "-k", "1", "--mode", "dense")
    assert "dynamic Low-rank Sparse Adaptation (LoSA), a novel" in " ".join(losa.out.split())
    # Every derived title reads as an opening: an ellipsis ends each hit's first line.
    heads = [line for line in result.out.splitlines() if re.match(r"\s*\d+\. ", line)]
    assert len(heads) == 38 and all(head.endswith("…") for head in heads)


def test_a_derived_title_is_muted_on_a_terminal_and_a_real_one_is_not(
        seed_engine: SearchEngine) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    hit = seed_engine.search("low-rank visual prompting", k=1)[0]
    assert hit.paper.title_derived
    shown = Terminal()
    output.hits([hit], json_lines=False, out=shown)
    assert "\033[2;3mVisual prompting has gained" in shown.getvalue()
    titled = Terminal()
    output.paper(type(hit.paper)(id="x", abstract="An abstract.", title=r"Costs 5\% less"),
                 json_lines=False, out=titled)
    assert titled.getvalue().startswith("Costs 5% less\nid: x\n")
