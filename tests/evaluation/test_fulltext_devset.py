"""scripts/fulltext_devset.py, the full-text dev set: its answers are where the PDFs print
them, and its statements are nowhere else (skipped without the dev corpus)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests.conftest import DEV_DATA, REPO, needs_dev_data

pytestmark = [needs_dev_data, pytest.mark.data, pytest.mark.slow]


@pytest.fixture(scope="module")
def devset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fulltext-devset")
    subprocess.run([sys.executable, "scripts/fulltext_devset.py", "--data", str(DEV_DATA),
                    "--out", str(out), "--pdfs", "4", "--corpus", "300"],
                   cwd=REPO, check=True, capture_output=True)
    return out


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def words(text: str) -> list[str]:
    """Lower-case words: PDFium's line-end hyphen (U+FFFE) joined, digits (footnote
    marks) and punctuation dropped, as a reader's cleaning would leave them."""
    text = re.sub("\ufffe\\s*", "", text.lower())
    return re.sub(r"[^a-z ]", " ", text).split()


def page_texts(path: Path) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return [" ".join(words(document[i].get_textpage().get_text_range()))
                for i in range(len(document))]
    finally:
        document.close()


def test_each_quoted_sentence_is_on_the_pages_recorded_and_on_no_other(devset: Path) -> None:
    quotes = [q for q in rows(devset / "questions.jsonl") if q["kind"] == "quote"]
    assert len(quotes) == 4 * 4
    for question in quotes:
        pages = page_texts(devset / "pdfs" / str(question["file"]))
        said = words(str(question["query"]))
        runs = [" ".join(said[i:i + 3]) for i in range(len(said) - 2)]
        recorded = [pages[p - 1] for p in question["pages"]]  # type: ignore[attr-defined]
        # A footnote or a column's end may fall inside a sentence in reading order, so
        # its three-word runs, not the whole, are looked for.
        found = sum(any(run in page for page in recorded) for run in runs) / len(runs)
        assert found >= 0.8, question
        for number, page in enumerate(pages, 1):
            if number not in question["pages"]:  # type: ignore[operator]
                assert sum(run in page for run in runs) < len(runs) / 2, (number, question)


def test_questions_come_three_to_a_donor_and_a_pdf_is_in_one_half(devset: Path) -> None:
    questions = rows(devset / "questions.jsonl")
    by_donor: dict[str, list[dict[str, object]]] = {}
    for question in questions:
        by_donor.setdefault(str(question["donor"]), []).append(question)
        assert question["split"] == ("tune" if int(question["id"]) % 2 == 0  # type: ignore[call-overload]
                                     else "report")
    assert len(by_donor) == 16
    for asked in by_donor.values():
        kinds = {str(q["kind"]): str(q["query"]) for q in asked}
        assert sorted(kinds) == ["paraphrase", "partial", "quote"]
        assert kinds["partial"] in kinds["quote"] and kinds["partial"] != kinds["quote"]
        assert len({q["paper"] for q in asked}) == 1
    halves = {(q["paper"], q["split"]) for q in questions}
    assert len(halves) == len({q["paper"] for q in questions}) == 4


def test_no_paper_of_a_pdf_and_no_quoted_sentence_is_in_the_corpus(devset: Path) -> None:
    corpus = rows(devset / "corpus.jsonl")
    assert len(corpus) == 300
    in_pdfs = {str(paper) for truth in rows(devset / "truth.jsonl")
               for paper in (truth["host"], *truth["donors"], *truth["fillers"])}  # type: ignore[misc]
    assert in_pdfs.isdisjoint(str(record["id"]) for record in corpus)
    abstracts = " | ".join(" ".join(words(str(record["abstract"]))) for record in corpus)
    for question in rows(devset / "questions.jsonl"):
        if question["kind"] == "quote":
            assert " ".join(words(str(question["query"]))) not in abstracts
