"""The command line: the JSON contract scripts rely on, readable output, one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEV_DATA, REPO, CliResult, needs_dev_data, snapshot

Cli = Callable[..., CliResult]
LORVP = "000_ae22c05437d8edef:1"
HIT_FIELDS = {"rank", "id", "score", "title", "abstract", "year", "venue"}


def assert_ranked(hits: list[dict[str, object]], k: int) -> None:
    assert len(hits) == k
    assert [hit["rank"] for hit in hits] == list(range(1, k + 1))
    # Hits come by score (the mode's ranking, on the cosine scale); similarity is the
    # cosine, in [-1, 1].
    ranked = [float(hit["score"]) for hit in hits]  # type: ignore[arg-type]
    assert ranked == sorted(ranked, reverse=True)
    for hit in hits:
        assert -1 <= float(hit["similarity"]) <= 1  # type: ignore[arg-type]
        assert HIT_FIELDS <= set(hit)
        assert isinstance(hit["id"], str) and isinstance(hit["abstract"], str)
        assert isinstance(hit["year"], int) and hit["venue"] == "ICLR"


def test_search_json_contract(cli: Cli, seed_index: Path) -> None:
    result = cli("search", "low-rank visual prompting", "--index", seed_index, "-k", "4",
                 "--json")
    assert result.code == 0, result.err
    hits = result.json_lines()
    assert_ranked(hits, 4)
    assert hits[0]["id"] == LORVP
    assert "query_index" not in hits[0]


def test_similar_json_contract(cli: Cli, seed_index: Path) -> None:
    result = cli("similar", LORVP, "--index", seed_index, "-k", "5", "--json")
    assert result.code == 0, result.err
    hits = result.json_lines()
    assert_ranked(hits, 5)
    assert LORVP not in {hit["id"] for hit in hits}


def test_batch_queries_json_contract(cli: Cli, seed_index: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("low-rank visual prompting\n\nmeta reinforcement learning\n")
    result = cli("search", "--queries", queries, "--index", seed_index, "-k", "3", "--json")
    assert result.code == 0, result.err
    hits = result.json_lines()
    assert [(h["query_index"], h["rank"]) for h in hits] == [(0, 1), (0, 2), (0, 3),
                                                            (2, 1), (2, 2), (2, 3)]
    assert hits[0]["query"] == "low-rank visual prompting" and hits[0]["id"] == LORVP
    assert_ranked(hits[3:], 3)
    single = cli("search", "meta reinforcement learning", "--index", seed_index, "-k", "3",
                 "--json").json_lines()
    assert [h["id"] for h in hits[3:]] == [h["id"] for h in single]


def test_info_json_contract(cli: Cli, seed_index: Path) -> None:
    result = cli("info", "--index", seed_index, "--json")
    assert result.code == 0
    (info,) = result.json_lines()
    assert info["count"] == 38 and info["dim"] == 384 and info["format_version"] == 3
    assert info["segments"] == 1 and info["deleted"] == 0
    assert info["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert info["index_type"] == "flat"


def test_readable_output(cli: Cli, seed_index: Path) -> None:
    result = cli("search", "low-rank visual prompting", "--index", seed_index, "-k", "2",
                 "--mode", "dense")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith("  1.  0.6") and "Visual prompting has gained" in lines[0]
    assert lines[1].strip() == f"ICLR 2025  ·  {LORVP}"
    assert lines[2].lstrip().startswith("» ")  # the evidence sentence
    assert any(line.lstrip().startswith("2.") for line in lines)
    shown = cli("show", LORVP, "--index", seed_index)
    assert "(untitled: the abstract's opening)" in shown.out and f"id: {LORVP}" in shown.out
    info = cli("info", "--index", seed_index)
    assert "papers: 38" in info.out and "flat" in info.out


def test_a_batch_names_each_query_in_one_line(cli: Cli, seed_index: Path,
                                              tmp_path: Path) -> None:
    """A pasted abstract among the queries would fill a screen above its hits."""
    long = "visual prompting of frozen image models " * 100
    queries = tmp_path / "queries.txt"
    queries.write_text(f"bandits\n{long}\n")
    result = cli("search", "--queries", queries, "--index", seed_index, "-k", "1")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "[0] bandits" in lines
    [named] = [line for line in lines if line.startswith("[1] ")]
    assert named.startswith("[1] visual prompting of frozen") and named.endswith("…")
    assert len(named) <= 110


def test_filters_on_the_command_line(cli: Cli, seed_index: Path) -> None:
    hits = cli("search", "learning", "--index", seed_index, "-k", "10", "--year", "2025",
               "--venue", "ICLR", "--json").json_lines()
    assert len(hits) == 10
    none = cli("search", "learning", "--index", seed_index, "--year", "2019-2021")
    assert none.code == 0 and "No papers match." in none.out
    bad = cli("search", "learning", "--index", seed_index, "--year", "last year")
    # The engine's message names no flag: the CLI names the argument by its flag.
    assert bad.code == 1 and bad.err == ("embedsearch: error: --year: expected a year or a "
                                         "range such as 2023-2025, got 'last year'\n")


def test_build_add_remove_cycle(cli: Cli, seed_files: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "idx"
    assert cli("build", *seed_files, "--out", out, "-q").code == 0
    new = tmp_path / "new.csv"
    new.write_text("id,title,abstract,year,venue\n"
                   "c1,Graph diffusion,Diffusion on graphs for molecule design.,2026,TestConf\n")
    added = cli("add", new, "--index", out)
    assert added.code == 0 and "Added 1 paper (38 before, 39 now)" in added.err
    hits = cli("search", "molecule design with graphs", "--index", out, "-k", "1",
               "--venue", "testconf", "--json").json_lines()
    assert [h["id"] for h in hits] == ["c1"]
    removed = cli("remove", "c1", LORVP, "--index", out)
    assert removed.code == 0 and "37 remain" in removed.err
    assert cli("info", "--index", out, "--json").json_lines()[0]["count"] == 37


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "", "--index", "{index}"], "the query is empty"),
        (["search", "graphs", "-k", "0", "--index", "{index}"], "-k: must be an integer from 1"),
        (["search", "graphs", "--venue", " ", "--index", "{index}"], "error: --venue: empty value"),
        (["similar", "x", "--keyword", "", "--index", "{index}"], "error: --keyword: empty value"),
        (["search", "graphs", "--year", "2025-2020", "--index", "{index}"],
         "error: --year: the range 2025-2020 runs backwards; write 2020-2025"),
        (["similar", "no-such-id", "--index", "{index}"], "no paper with id 'no-such-id'"),
        (["remove", "no-such-id", "--index", "{copy}"], "no paper with id 'no-such-id'"),
        (["search", "graphs", "--index", "{tmp}/missing"], "the directory does not exist"),
        (["info", "--index", "{tmp}/missing"], "the directory does not exist"),
        # A file given where its index was meant: it said "[Errno 20] Not a directory".
        (["search", "graphs", "--index", "{tmp}/ok.jsonl"],
         "ok.jsonl is a file, not an index folder; build an index of it with `embedsearch "
         "build {tmp}/ok.jsonl --out DIR` and open DIR"),
        (["add", "{tmp}/ok.jsonl", "--index", "{tmp}/ok.jsonl"], "is a file, not an index"),
        (["info", "--index", "{tmp}/ok.jsonl"], "is a file, not an index folder"),
        (["show", "x", "--index", "{tmp}"], "holds no embedsearch index (manifest.json is "
                                             "missing); open the folder that `embedsearch"),
        (["search", "--index", "{index}"], "give either a QUERY or --queries FILE"),
        (["search", "--queries", "{tmp}/none.txt", "--index", "{index}"], "no such file"),
        (["build", "{tmp}/none.jsonl", "--out", "{tmp}/out"], "none.jsonl: no such file"),
        (["build", "{tmp}", "--out", "{tmp}/out"], "is a directory"),
        (["build", "{tmp}/bad.jsonl", "--out", "{tmp}/out"], "bad.jsonl:2: malformed JSON"),
        (["build", "{tmp}/ok.jsonl", "--out", "{index}"], "already exists"),
        (["build", "{tmp}/ok.jsonl", "--out", "{tmp}/out", "--index-type", "Bogus9"],
         "--index-type 'Bogus9': FAISS cannot build"),
        (["build", "{tmp}/ok.jsonl", "--out", "{tmp}/out", "--fields", "title,body"],
         "--fields: expected some of"),
        (["add", "{tmp}/bad.jsonl", "--index", "{copy}"], "bad.jsonl:2: malformed JSON"),
    ],
)
def test_errors_are_one_line(cli: Cli, seed_index: Path, seed_copy: Path, tmp_path: Path,
                             args: list[str], message: str) -> None:
    (tmp_path / "bad.jsonl").write_text('{"abstract": "ok"}\n{"abstract": oops}\n')
    (tmp_path / "ok.jsonl").write_text('{"abstract": "ok"}\n')
    before = snapshot(seed_copy)
    filled = [arg.format(index=seed_index, copy=seed_copy, tmp=tmp_path) for arg in args]
    result = cli(*filled)
    assert result.code == 1
    assert result.err.count("\n") == 1 and result.err.startswith("embedsearch: error: ")
    assert message.format(tmp=tmp_path) in result.err
    assert snapshot(seed_copy) == before
    assert not (tmp_path / "out").exists()


def test_real_process_exit_codes_and_no_traceback(seed_index: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "embedsearch.cli"]
    missing = subprocess.run(command + ["similar", "nope", "--index", str(seed_index)],
                             capture_output=True, text=True, env=env)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr == (f"embedsearch: error: no paper with id 'nope' in index "
                              f"{seed_index}; every hit shows its id: embedsearch search "
                              f"WORDS --index {seed_index}\n")
    usage = subprocess.run(command + ["search", "-k", "many"], capture_output=True,
                           text=True, env=env)
    assert usage.returncode == 2 and "invalid int value" in usage.stderr
    # `info` reads the manifest only: no model, no encoder runtime, not even FAISS.
    probe = ("import sys; from embedsearch.cli import main; "
             f"code = main(['info', '--index', {str(seed_index)!r}, '--json']); "
             "print(sorted({'torch', 'openvino', 'onnxruntime', 'faiss'} & set(sys.modules)))")
    info = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env)
    count_line, loaded = info.stdout.splitlines()
    assert json.loads(count_line)["count"] == 38 and loaded == "[]"


@pytest.mark.parametrize("command", [[], ["build"], ["search"]])
def test_help_teaches(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    from embedsearch.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(command + ["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    expected = {(): "examples:", ("build",): ".jsonl, .json (array), .csv",
                ("search",): "--queries FILE"}[tuple(command)]
    assert expected in text


def test_default_index_is_built_on_first_use(cli: Cli, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    result = cli("search", "low-rank visual prompting", "-k", "1", "--json")
    assert result.code == 0, result.err
    # The sample's papers, with the ids `embedsearch sample` writes (the docs' ids).
    assert result.json_lines()[0]["id"] == "iclr2025:1"
    sample = tmp_path / "data" / "embedsearch" / "indexes" / "iclr2025"
    assert f"Building the default index of the bundled ICLR 2025 sample in {sample}" in result.err
    assert (sample / "manifest.json").is_file()
    assert list((tmp_path / "here").iterdir()) == []  # not ./indexes where the user stands
    again = cli("search", "low-rank visual prompting", "-k", "1", "--json")
    assert "Building" not in again.err and again.json_lines()[0]["id"] == "iclr2025:1"


def _info_without_index(folder: Path, home: Path) -> str:
    """`embedsearch info` run in `folder` by a user whose home is `home`: where the
    default index is (`info` reads its manifest only, so a copy of the seed index is
    found there without a build)."""
    env = {key: value for key, value in os.environ.items() if key != "XDG_DATA_HOME"}
    done = subprocess.run([sys.executable, "-m", "embedsearch.cli", "info", "--json"],
                          cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**env, "HOME": str(home), "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and "Building" not in done.stderr, done.stderr
    return str(json.loads(done.stdout)["path"])


def test_default_index_lives_in_the_users_data_folder(seed_index: Path, tmp_path: Path) -> None:
    sample = tmp_path / "home" / ".local" / "share" / "embedsearch" / "indexes" / "iclr2025"
    shutil.copytree(seed_index, sample)
    (tmp_path / "papers").mkdir()
    assert _info_without_index(tmp_path / "papers", tmp_path / "home") == str(sample.resolve())
    assert list((tmp_path / "papers").iterdir()) == []


def test_default_index_inside_a_checkout_is_its_indexes_folder(seed_index: Path,
                                                               tmp_path: Path) -> None:
    # A checkout: the project's pyproject.toml beside indexes/ (the first lines of ours).
    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    project = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("[project.scripts]")[0]
    (checkout / "pyproject.toml").write_text(project, encoding="utf-8")
    shutil.copytree(seed_index, checkout / "indexes" / "iclr2025")
    # From a folder below its root too: one index per checkout, not one per folder.
    for folder in (checkout, checkout / "docs"):
        found = _info_without_index(folder, tmp_path / "home")
        assert found == str((checkout / "indexes" / "iclr2025").resolve())
    assert not (tmp_path / "home").exists()


def bench_tables(tmp_path: Path, *args: str) -> dict[str, dict[str, Any]]:
    """`embedsearch bench --quick ARGS` run on the dev data: its tables by first word."""
    out = tmp_path / "bench.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "embedsearch.cli", "bench", "--quick",
                             "--data", str(DEV_DATA), "--json", str(out), *args],
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    tables = json.loads(out.read_text())
    named: dict[str, dict[str, Any]] = {}
    for table in tables:  # two "Encoding" tables: the backends, then the pipeline
        named.setdefault(table["title"].split()[0], table)
    return named


@needs_dev_data
@pytest.mark.data
@pytest.mark.slow
def test_bench_quick_runs(tmp_path: Path) -> None:
    # A smoke test of the benchmark: a few sections whose code only it runs, at sizes
    # that keep the default suite short; the study below runs every section at --quick's.
    tables = bench_tables(tmp_path, "--sections", "recommendations,digests")
    assert list(tables) == ["Recommendations", "Digests"]
    methods = {row["method"] for row in tables["Recommendations"]["rows"]}
    assert methods == {"clusters", "mean", "classifier", "nearest"}
    digests = tables["Digests"]["rows"]
    assert len(digests) == 6 and all(0 < row["digest s"] < 5 for row in digests)


@needs_dev_data
@pytest.mark.data
@pytest.mark.study
def test_bench_quick_runs_every_section(tmp_path: Path) -> None:
    tables = bench_tables(tmp_path)
    assert list(tables) == ["Encoding", "Updating", "Warm", "Index", "Cold", "First",
                            "Writing", "An", "Recommendations", "Digests"]
    encoding = {row["pipeline"]: row for row in tables["Encoding"]["rows"]}
    assert any(name.endswith("(auto)") for name in encoding)
    assert all(row["mean cos"] >= 0.99 for row in encoding.values())
    plain, first, again = tables["First"]["rows"]
    assert first["x plain (median of pairs)"] > 0 and again["median s"] < first["median s"]
    writes = {(row["operation"], str(row["index papers"])): row
              for row in tables["Writing"]["rows"]}
    assert writes[("add 10", "1200")]["MB written"] < 5  # a segment, not the index
    grown = {row["measure"]: row for row in tables["An"]["rows"]}
    assert grown["segments"]["grown"] > 1 and grown["hybrid query p50 ms"]["grown"] > 0
    methods = {row["method"] for row in tables["Recommendations"]["rows"]}
    assert methods == {"clusters", "mean", "classifier", "nearest"}


def test_no_command_prints_the_overview(capsys: pytest.CaptureFixture[str]) -> None:
    from embedsearch.cli import main

    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2  # an incomplete command line, as argparse's own errors
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    for name, summary in (("search", "Find the papers that best match"),
                          ("similar", "closest to given papers"), ("serve", "HTTP")):
        assert any(line.split()[:1] == [name] and summary in line for line in lines), name
    assert "most used:" in captured.err
    assert sum(line.strip().startswith("embedsearch ") for line in lines) == 3
