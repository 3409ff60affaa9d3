"""The MCP tools, in process with the SDK's own client: what they list, what they answer
(the engine's hits, sized for a model's context), and how they fail (the CLI's words)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from embedsearch import SearchEngine
from embedsearch.cli.assistant import MAX_CHARS as CLI_MAX_CHARS
from embedsearch.integrations.mcp import MAX_CHARS, MAX_K, TOOLS, create_server
from tests.assistant import calls, listing, text
from tests.conftest import CliResult, write_jsonl

QUERIES = ["low-rank visual prompting", "offline reinforcement learning from preferences",
           "language model agents on the web", "audio representation learning",
           "diffusion models for images", "3D object grounding"]
TOOL_LIST_BUDGET = 1500
SEARCH_BUDGET = 4000


def ids(answer: str) -> list[str]:
    """The paper ids of an answer, in its order: each paper's line is 'N. ID | ...'."""
    return re.findall(r"^\d+\. (\S+) \|", answer, re.M)


@pytest.fixture(scope="module")
def server(seed_engine: SearchEngine) -> object:
    return create_server(seed_engine, local=True)


def test_tools_are_read_only_and_typed(server: object) -> None:
    tools = {tool.name: tool for tool in listing(server)}
    assert tuple(tools) == TOOLS
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.values())
    k = tools["search"].input_schema["properties"]["k"]
    assert (k["type"], k["minimum"], k["maximum"], k["default"]) == ("integer", 1, MAX_K, 10)
    assert tools["search"].input_schema["required"] == ["query"]
    assert set(tools["search"].input_schema["properties"]["mode"]["enum"]) == {
        "hybrid", "dense", "lexical"}
    assert CLI_MAX_CHARS == MAX_CHARS  # `embedsearch mcp --help` says the real default


def test_the_tool_list_is_under_its_token_budget(server: object) -> None:
    """Counted on the JSON of tools/list as a client receives it, with the bundled
    model's WordPiece tokenizer (offline, and conservative: it makes every brace, quote
    and colon a token of its own, where the BPE tokenizers of assistants' models merge
    them, so an assistant counts fewer)."""
    from tokenizers import Tokenizer

    from embedsearch.encoding import resolve_model

    tokenizer = Tokenizer.from_file(str(resolve_model().path / "tokenizer.json"))
    tokenizer.no_truncation()
    listed = json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                         for tool in listing(server)])
    tokens = len(tokenizer.encode(listed, add_special_tokens=False).ids)
    assert tokens < TOOL_LIST_BUDGET, f"{tokens} tokens, {len(listed)} characters"


def test_search_answers_the_engines_hits_briefly(server: object,
                                                 seed_engine: SearchEngine) -> None:
    brief, full, lexical = calls(
        server, ("search", {"query": QUERIES[0]}),
        ("search", {"query": QUERIES[0], "k": 3, "detail": "full"}),
        ("search", {"query": QUERIES[0], "k": 3, "mode": "lexical"}))
    hits = seed_engine.search(QUERIES[0], 10)
    assert ids(text(brief)) == [hit.paper.id for hit in hits]
    assert not brief.is_error and f"score {hits[0].score:.3f}" in text(brief)
    assert f"> {hits[0].evidence}" in text(brief)
    assert "abstract:" not in text(brief) and hits[0].paper.abstract not in text(brief)
    assert f"abstract: {' '.join(hits[0].paper.abstract.split())}" in text(full)
    assert ids(text(lexical)) == [hit.paper.id for hit in
                                  seed_engine.search(QUERIES[0], 3, mode="lexical")]


def test_a_default_search_stays_under_4000_characters(server: object) -> None:
    answers = calls(server, *[("search", {"query": query}) for query in QUERIES])
    sizes = [len(text(answer)) for answer in answers]
    assert all(len(ids(text(answer))) == 10 for answer in answers)
    assert max(sizes) < SEARCH_BUDGET, sizes


def test_the_cap_cuts_at_a_paper_and_says_so(seed_engine: SearchEngine) -> None:
    small = create_server(seed_engine, max_chars=2500)
    [answer] = calls(small, ("search", {"query": QUERIES[0], "k": 20, "detail": "full"}))
    said = text(answer)
    assert len(said) <= 2500 and not answer.is_error
    shown = len(ids(said))
    assert 0 < shown < 20
    assert said.endswith(f"[cut at 2,500 characters: {shown} of 20 papers shown in full; "
                         "ask for fewer (k) or detail='brief']")


def test_similar_recommend_get_and_info(server: object, seed_engine: SearchEngine,
                                        tmp_path: Path) -> None:
    first, second, third = [hit.paper for hit in seed_engine.search(QUERIES[0], 3)]
    library = write_jsonl(tmp_path / "library.jsonl", [
        {"id": "mine:1", "title": "Prompting frozen vision models", "abstract":
         "We learn a small visual prompt that adapts a frozen image model to new tasks."}])
    like, passage, unlike, listed, from_file, paper, described = calls(
        server, ("similar", {"ids": [first.id], "k": 5}),
        ("similar", {"text": first.abstract, "k": 5}),
        ("similar", {"ids": [first.id], "unlike": [second.id], "k": 5}),
        ("recommend", {"papers": [first.id, third.title], "k": 5}),
        ("recommend", {"file": str(library), "k": 5}),
        ("get", {"id": first.id}), ("info", {}))
    assert ids(text(like)) == [hit.paper.id for hit in seed_engine.similar(first.id, 5)]
    assert ids(text(unlike)) == [hit.paper.id for hit in
                                 seed_engine.similar(first.id, 5, negatives=[second.id])]
    from_text = seed_engine.similar_to_papers([{"abstract": first.abstract}], 5)
    assert ids(text(passage)) == [hit.paper.id for hit in from_text]
    recommended = seed_engine.similar_to_papers([first, {"title": third.title}], 5)
    assert ids(text(listed)) == [hit.paper.id for hit in recommended]
    assert len(ids(text(from_file))) == 5
    assert f"id: {first.id}" in text(paper) and "@" in text(paper).split("BibTeX:\n")[1]
    assert "count: 38" in text(described) and str(seed_engine.path) not in text(described)


def test_errors_are_tool_errors_in_the_clis_words(server: object, seed_index: Path,
                                                  cli: Callable[..., CliResult]) -> None:
    backwards, unknown, nothing = calls(
        server, ("search", {"query": "bandits", "year": "2025-2020"}),
        ("get", {"id": "no-such-paper"}), ("similar", {}))
    said = cli("search", "bandits", "--index", seed_index, "--year", "2025-2020").err
    assert backwards.is_error and said == f"embedsearch: error: --{text(backwards)}\n"
    said = cli("show", "no-such-paper", "--index", seed_index).err
    assert unknown.is_error and said == f"embedsearch: error: {text(unknown)}\n"
    assert nothing.is_error and text(nothing) == ("ids: give the papers to start from: ids, "
                                                  "or a text")


def test_a_long_query_is_named_by_its_opening_and_one_too_long_refused(
        server: object, seed_engine: SearchEngine) -> None:
    from embedsearch.search.retrieval import MAX_QUERY_CHARS
    from tests.search.test_retrieval import long_query

    query = long_query(seed_engine, 5_000)
    [schema] = [tool.input_schema for tool in listing(server) if tool.name == "search"]
    assert schema["properties"]["query"]["maxLength"] == MAX_QUERY_CHARS
    long, one, over = calls(server, ("search", {"query": query, "k": 3}),
                            ("search", {"query": QUERIES[0], "k": 1}),
                            ("search", {"query": "x" * (MAX_QUERY_CHARS + 1)}))
    heading = text(long).splitlines()[0]
    assert heading.startswith(f'3 papers for "{query[:40]}')
    assert heading.endswith('…" (the opening of a 5,000-character query), best first:')
    assert len(heading) < 160 and len(ids(text(long))) == 3
    assert text(one).startswith(f'1 paper for "{QUERIES[0]}", best first:')
    assert over.is_error and text(over) == (
        f"query: the query is {MAX_QUERY_CHARS + 1:,} characters long; the limit is "
        f"{MAX_QUERY_CHARS:,}: shorten it")


def test_a_remote_server_reads_no_files_and_names_no_paths(seed_engine: SearchEngine,
                                                           tmp_path: Path) -> None:
    remote = create_server(seed_engine, local=False)
    library = write_jsonl(tmp_path / "library.jsonl", [{"id": "a", "abstract": "Bandits."}])
    refused, unknown = calls(remote, ("recommend", {"file": str(library)}),
                             ("get", {"id": "no-such-paper"}))
    assert refused.is_error and text(refused).startswith("file: this server reads no files")
    assert text(unknown) == "no paper with id 'no-such-paper'"
