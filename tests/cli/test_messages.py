"""The CLI's messages on stderr: counts in good English, arguments named as the usage
line names them, a refusal before any warning, a word before a slow first model load,
and a warning when `serve` lets the network read the index without a token."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO, CliResult

Cli = Callable[..., CliResult]


def test_counts_of_one_are_singular(cli: Cli, seed_copy: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.csv"
    one.write_text("id,title,abstract\nc1,Graph diffusion,Diffusion on graphs for molecules.\n")
    added = cli("add", one, "--index", seed_copy)
    assert added.code == 0 and "Added 1 paper (38 before, 39 now)" in added.err
    removed = cli("remove", "c1", "--index", seed_copy)
    assert "Removed 1 paper; 38 remain." in removed.err
    built = cli("build", one, "--out", tmp_path / "small")
    assert built.code == 0 and "Indexed 1 paper into" in built.err


def test_backup_names_its_positional_argument_as_dest(cli: Cli, seed_index: Path,
                                                      tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    refused = cli("backup", taken, "--index", seed_index)
    assert refused.code == 1
    assert refused.err.startswith(f"embedsearch: error: DEST: {taken} exists and is not a "
                                  "backup")
    assert "--dest" not in refused.err


def test_build_refuses_an_existing_index_before_warning_about_entries(
        cli: Cli, seed_index: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    shutil.copytree(seed_index, out)
    skips = tmp_path / "skips.jsonl"  # the second record has no abstract: a warning
    skips.write_text('{"id": "a", "abstract": "Graphs."}\n{"id": "b", "title": "No text"}\n')
    refused = cli("build", skips, "--out", out)
    assert refused.code == 1
    assert refused.err == (f"embedsearch: error: an index already exists at {out}; pass "
                           "--overwrite to replace it\n")


def test_the_first_model_load_says_so_once(cli: Cli, seed_index: Path, tmp_path: Path) -> None:
    """An empty cache: the model is prepared for this machine (seconds) after one line."""
    args = ("search", "graph neural networks", "--index", seed_index, "-k", "1", "--cache-dir",
            tmp_path / "cache")
    first = cli(*args)
    assert first.code == 0, first.err
    assert first.err.startswith("Loading the model sentence-transformers/all-MiniLM-L6-v2 "
                                "(first use")
    assert "Loading the model" not in cli(*args).err


def _serve_says(seed_index: Path, *options: str) -> str:
    """What `serve` prints before it serves: the process is stopped once it says so."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("EMBEDSEARCH_READ_TOKEN", None)
    server = subprocess.Popen([sys.executable, "-m", "embedsearch.cli", "serve", "--index",
                               str(seed_index), "--port", "0", "--no-map", *options],
                              stderr=subprocess.PIPE, text=True, env=env)
    said = []
    try:
        assert server.stderr is not None
        for line in server.stderr:
            said.append(line)
            if line.startswith("Serving") or line.startswith("embedsearch: error"):
                break
    finally:
        server.kill()
        server.wait()
    return "".join(said)


def test_serve_warns_when_the_network_can_read_without_a_token(seed_index: Path) -> None:
    said = _serve_says(seed_index, "--host", "0.0.0.0")
    assert said.count("Warning: on --host 0.0.0.0 anyone who can reach this machine can "
                      "search the index") == 1
    assert "pass --read-token" in said and "--host 127.0.0.1" in said
    assert "Serving" in said  # a warning, not a refusal
    guarded = _serve_says(seed_index, "--host", "0.0.0.0", "--read-token", "r" * 20)
    assert "Serving" in guarded and "Warning" not in guarded
    local = _serve_says(seed_index)
    assert "Serving" in local and "Warning" not in local


def test_output_piped_into_a_reader_that_stopped_ends_quietly(tmp_path: Path) -> None:
    # `embedsearch sample - | head -1`: head exits after one line and every later write
    # fails with EPIPE; a pipe whose reading end is already closed makes it certain.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "embedsearch.cli", "sample", "-"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == "", done.stderr
