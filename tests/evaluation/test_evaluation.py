"""`embedsearch eval` without labelled queries: the corpus's own titles as queries, one
model or several side by side; and with labelled ones."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import read_papers
from embedsearch.evaluation.evaluate import evaluate, self_supervised
from tests.conftest import DEV_PAPERS, CliResult, model_copy, needs_dev_data, needs_fast

Cli = Callable[..., CliResult]


def test_self_supervised_queries_are_titles_looking_for_their_own_paper(
        seed_files: list[Path]) -> None:
    papers = read_papers(seed_files)
    indexed, queries = self_supervised(papers, sample=10)
    assert len(queries) == 10 and len(indexed) == len(papers)
    assert self_supervised(papers, sample=10)[1] == queries  # seeded: the same every run
    by_id = {paper.id: paper for paper in indexed}
    for query in queries:
        (wanted,) = query.relevant
        original = next(p for p in papers if p.id == wanted)
        # The bundled sample's titles are its first sentences: asked for by that sentence,
        # which its indexed abstract no longer holds.
        assert original.title_derived and original.abstract.startswith(query.text[:40])
        assert query.text not in by_id[wanted].abstract
        assert by_id[wanted].abstract and by_id[wanted].abstract in original.abstract
    untouched = {p.id for p in papers} - {next(iter(q.relevant)) for q in queries}
    assert all(by_id[i] == next(p for p in papers if p.id == i) for i in untouched)


@needs_fast  # it names the onnx backend
def test_eval_of_the_seed_corpus_compares_two_models_side_by_side(
        cli: Cli, seed_files: list[Path], tmp_path: Path) -> None:
    # A second model: the bundled one reading 64 tokens, a model that sees less of each
    # abstract, so it must score differently. The backend is named: with `auto` the one
    # chosen depends on what earlier tests measured, and onnx-int8's rounding happens to
    # give both models the same 38 rankings (MRR 0.873 each; torch: 0.867 and 0.873).
    short = model_copy(tmp_path / "short-model", sentence_bert_config={"max_seq_length": 64})
    result = cli("eval", "--corpus", *seed_files, "--model", "all-MiniLM-L6-v2", "--model",
                 short, "--work", tmp_path / "work", "--backend", "onnx", "--json")
    assert result.code == 0, result.err
    rows = {(row["model"], row["system"]): row for row in result.json_lines()}
    models = {model for model, _ in rows}
    assert models == {"all-MiniLM-L6-v2", str(short)}
    for model in models:
        for system in ("dense", "hybrid"):
            row = rows[model, system]
            assert row["task"] == "title" and row["queries"] == 38
            assert 0.5 < row["MRR@10"] <= row["Recall@10"] <= 1
            assert row["abstracts/s"] > 0 and row["index bytes"] > 10_000
    assert rows["all-MiniLM-L6-v2", "dense"]["MRR@10"] != rows[str(short), "dense"]["MRR@10"]
    table = cli("eval", "--corpus", *seed_files, "--work", tmp_path / "work")
    assert "self-supervised title queries" in table.out
    assert "abstracts/s" in table.out and "index MB" in table.out


@needs_dev_data
@pytest.mark.data
@pytest.mark.slow
def test_self_supervised_eval_on_3000_dev_papers(tmp_path: Path) -> None:
    rows = {row["system"]: row for row in evaluate(DEV_PAPERS, None, limit=3000, sample=300,
                                                   work=tmp_path)}
    assert rows["dense"]["queries"] == 300
    # Titles find their own abstracts well, and hybrid ranking beats either mode alone
    # here as it does on the labelled title queries.
    assert rows["dense"]["MRR@10"] > 0.7 and rows["lexical"]["MRR@10"] > 0.6
    assert rows["hybrid"]["MRR@10"] >= max(rows["dense"]["MRR@10"], rows["lexical"]["MRR@10"])
