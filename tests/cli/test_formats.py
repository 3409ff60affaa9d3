"""`--format` names what a command writes (search's and similar's export, digest's
output); what build and add read is `--input-format`, and their old `--format` still
works, with a one-line deprecation note on stderr (none with --quiet)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch.cli import main
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
NOTE = "--format is deprecated: it is now --input-format"


def _ids(cli: Cli, index: Path) -> list[str]:
    hits = cli("search", "visual prompting", "--index", index, "-k", "3", "--json")
    return sorted(str(hit["id"]) for hit in hits.json_lines())


def test_input_format_and_its_old_spelling(cli: Cli, tmp_path: Path) -> None:
    # JSON lines in a .txt file: by its extension, one plain-text abstract.
    records = cli("sample", "-", "--papers", "1-3").out
    papers = tmp_path / "papers.txt"
    papers.write_text(records, encoding="utf-8")
    chosen = ["iclr2025:1", "iclr2025:2", "iclr2025:3"]

    new = cli("build", papers, "--input-format", "jsonl", "--out", tmp_path / "new")
    assert new.code == 0, new.err
    assert "deprecated" not in new.err and _ids(cli, tmp_path / "new") == chosen
    old = cli("build", papers, "--format", "jsonl", "--out", tmp_path / "old")
    assert old.code == 0, old.err
    assert [line for line in old.err.splitlines() if "deprecated" in line] == [
        f"embedsearch build: {NOTE} (the old spelling will go in a later version)"]
    assert _ids(cli, tmp_path / "old") == chosen
    # Read by extension, the same file is another corpus: the option is not ignored.
    assert cli("build", papers, "--out", tmp_path / "text", "-q").code == 0
    assert _ids(cli, tmp_path / "text") != chosen

    added = cli("add", papers, "--format", "jsonl", "--index", tmp_path / "new")
    assert added.code == 0 and f"embedsearch add: {NOTE}" in added.err
    assert "Added 0 papers (3 before, 3 now)" in added.err
    quiet = cli("add", papers, "--format", "jsonl", "--index", tmp_path / "new", "-q")
    assert quiet.code == 0 and quiet.err == ""


def test_format_is_what_search_writes(cli: Cli, seed_index: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    bib = cli("search", "graph neural networks", "--index", seed_index, "-k", "2",
              "--format", "bibtex")
    assert bib.code == 0 and "deprecated" not in bib.err
    assert sum(line.startswith("@") for line in bib.out.splitlines()) == 2
    # build's help teaches --input-format alone: the old spelling is hidden.
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    shown = capsys.readouterr().out
    assert "--input-format" in shown and "--format" not in shown.replace("--input-format", "")
