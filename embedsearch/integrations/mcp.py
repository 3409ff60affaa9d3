"""The index as tools for AI assistants, over the Model Context Protocol (MCP).

    from embedsearch import SearchEngine
    from embedsearch.integrations.mcp import create_server

    server = create_server(SearchEngine.open("indexes/mine"), local=True)
    server.run("stdio")                       # what `embedsearch mcp` does

`embedsearch serve` mounts the same tools at /mcp with `local=False`: an HTTP client's
file paths are not this machine's to read. Five read-only tools, `search`, `similar`,
`recommend`, `get` and `info`, call the engine's public API only. Each answers in
plain text sized for a model's context (`Shape`): per paper its id, title, venue,
year, score and evidence sentence, for a paper read in full the passage it was found in
with its page and section, the abstract only with `detail="full"`, and never
more than `max_chars` characters, saying so where it cuts. An error of ours is a tool
error carrying the one-line message the command line prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from ..errors import (
    DependencyError,
    EmbedSearchError,
    PaperNotFoundError,
    QueryError,
    worded,
)

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from mcp.types import Tool as MCPTool
except ImportError:
    raise DependencyError("the MCP server needs the mcp package, which is not installed: "
                          "pip install 'embedsearch[mcp]'") from None
from pydantic import Field

from .._version import __version__
from ..engine import SearchEngine
from ..exporting import to_bibtex
from ..filters import Filters
from ..papers import Paper, Passage
from ..readers import read_bibliography
from ..search.results import Hit, Hits
from ..search.retrieval import MAX_QUERY_CHARS

__all__ = ["EVIDENCE_CHARS", "MAX_CHARS", "MAX_K", "PASSAGE_CHARS", "QUERY_CHARS", "TOOLS",
           "Shape", "create_server"]

#: The most characters one call answers: about 4,000 tokens, a small share of any
#: assistant's context, and under the 25,000-token cap some clients put on a tool result.
MAX_CHARS = 16_000
#: An evidence sentence longer than this is cut at a word: ten brief hits then stay
#: under 4,000 characters (an abstract without full stops is one long "sentence").
EVIDENCE_CHARS = 200
#: A hit's passage is shown up to this many characters, around its evidence sentence:
#: a passage is a window of a few sentences (500-900 characters), and 400 keeps ten
#: brief hits near 6,000 characters, the sentence that matched with its neighbours.
PASSAGE_CHARS = 400
_AUTHORS = 8  # listed in full; more become "et al."
#: An answer's first line names its query, cut at a word beyond this: the assistant sent
#: the query and needs no echo of a pasted abstract (5,000 characters, say) in its context.
QUERY_CHARS = 80
#: The most papers one call lists: 50 brief hits fit in MAX_CHARS; more is a job for
#: the CLI's or the HTTP API's export, not for a model's context.
MAX_K = 50
TOOLS = ("search", "similar", "recommend", "get", "info")

# The argument of each engine parameter named otherwise in the tools (`worded`).
_ARGUMENTS = {"venues": "venue", "keywords": "keyword"}
# Clients approve read-only tools more readily. (The other hints say little more:
# destructiveHint means something only where readOnlyHint is false.)
_READ_ONLY = ToolAnnotations(read_only_hint=True)
_INSTRUCTIONS = ("Search a local index of research papers. Results list each paper's id; "
                 "pass ids to similar, recommend and get. Ask detail='full' for abstracts.")

# The tools' arguments: types and limits are the schema the client sees (and validates).
# Each word of it is read by the model at every turn, so a limit the engine checks anyway
# (a list's) is left to the engine. A query's length is in the schema, as the other faces
# state it, but checked by the engine (not pydantic), whose message names both the length
# and the limit.
Query = Annotated[str, Field(min_length=1, description="what to find",
                             json_schema_extra={"maxLength": MAX_QUERY_CHARS})]
K = Annotated[int, Field(ge=1, le=MAX_K, description="how many papers")]
Mode = Annotated[Literal["hybrid", "dense", "lexical"],
                 Field(description="hybrid: words and meaning; dense: meaning; lexical: words")]
Year = Annotated[str, Field(description="2024, 2023-2025, 2023- or -2024")]
Venues = Annotated[tuple[str, ...], Field(description="any of these venues")]
Keywords = Annotated[tuple[str, ...], Field(description="any of these author keywords")]
Detail = Annotated[Literal["brief", "full"],
                   Field(description="full adds authors, url and abstract")]
Ids = Annotated[tuple[str, ...], Field(description="paper ids")]
Unlike = Annotated[tuple[str, ...], Field(description="ids of papers not wanted")]
Text = Annotated[str, Field(description="or a passage to match")]
Entries = Annotated[tuple[str, ...], Field(description="ids or titles of papers")]
File = Annotated[str, Field(description="or a .bib, .ris, ... file (local server only)")]
PaperId = Annotated[str, Field(min_length=1, description="a paper id")]
Passages = Annotated[bool, Field(description="with its passages")]
FromPassage = Annotated[int, Field(ge=1)]  # named plainly enough: each word costs


class _Server(MCPServer):
    """The SDK's server, listing its tools without the "title" pydantic gives each
    argument: it repeats the argument's name, and the model reads the list every turn."""

    async def list_tools(self) -> list[MCPTool]:
        return [tool.model_copy(update={"input_schema": _untitled(tool.input_schema)})
                for tool in await super().list_tools()]


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    properties = {name: {key: value for key, value in field.items() if key != "title"}
                  for name, field in schema.get("properties", {}).items()}
    return {**{key: value for key, value in schema.items() if key != "title"},
            "properties": properties}


def _filters(year: str, venue: Sequence[str], keyword: Sequence[str]) -> Filters:
    return Filters.parse(year=year or None, venues=venue, keywords=keyword)


def _answer(make: Callable[[], str], local: bool) -> CallToolResult:
    """The tool's text, or a tool error worded as the command line words it (with the
    argument's name for the flag); anything else is the SDK's to report as a crash."""
    try:
        text = make()
    except (EmbedSearchError, OSError) as exc:
        if isinstance(exc, PaperNotFoundError) and not local:
            exc = PaperNotFoundError(exc.paper_id)  # as the HTTP API says it: no path
        message = worded(exc, lambda parameter: _ARGUMENTS.get(parameter, parameter))
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=text)])


def create_server(engine: SearchEngine, *, local: bool = False,
                  max_chars: int = MAX_CHARS) -> MCPServer:
    """An MCP server whose tools read `engine` (which the caller opens and closes).

    `local`: the client runs on this machine (`embedsearch mcp`, over stdio), so
    `recommend` may read a bibliography file by its path and messages may name the
    index's folder; otherwise (over HTTP) a path is refused and the folder not named.
    `max_chars`: the most characters a call answers.
    """
    server = _Server("embedsearch", version=__version__,
                     instructions=_INSTRUCTIONS, log_level="WARNING")
    shape = Shape(max_chars)

    def hits(found: Hits, what: str, detail: str) -> str:
        return shape.hits(found, what, full=detail == "full")

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def search(query: Query, k: K = 10, mode: Mode = "hybrid", year: Year = "",
               venue: Venues = (), keyword: Keywords = (),
               detail: Detail = "brief") -> CallToolResult:
        """Find papers by a description of what they are about."""
        return _answer(lambda: hits(engine.search(query, k, mode=mode, filters=_filters(
            year, venue, keyword)), f"for {_quoted(query)}", detail), local)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def similar(ids: Ids = (), text: Text = "", unlike: Unlike = (),
                k: K = 10, year: Year = "", venue: Venues = (), keyword: Keywords = (),
                detail: Detail = "brief") -> CallToolResult:
        """Find papers like given papers of the index, or like a passage."""
        def run() -> str:
            filters = _filters(year, venue, keyword)
            if text.strip():
                given: list[Any] = [engine.get(paper_id) for paper_id in ids]
                found = engine.similar_to_papers(
                    [*given, {"abstract": text}], k, filters=filters,
                    negatives=[engine.get(paper_id) for paper_id in unlike])
            elif ids:
                found = engine.similar(list(ids), k, negatives=list(unlike), filters=filters)
            else:
                raise QueryError("give the papers to start from: ids, or a text",
                                 parameter="ids")
            return hits(found, f"like {len(ids) + bool(text.strip())} given", detail)
        return _answer(run, local)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def recommend(papers: Entries = (), file: File = "",
                  k: K = 10, year: Year = "", venue: Venues = (), keyword: Keywords = (),
                  detail: Detail = "brief") -> CallToolResult:
        """Recommend papers for a reading list, each topic of it heard."""
        def run() -> str:
            given = _reading_list(engine, papers, file, local)
            found = engine.similar_to_papers(given, k, filters=_filters(year, venue, keyword))
            return hits(found, f"for {len(given)} given", detail)
        return _answer(run, local)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def get(id: PaperId, passages: Passages = False,
            from_passage: FromPassage = 1) -> CallToolResult:
        """One paper in full, with its BibTeX (and its passages, to quote and cite)."""
        def run() -> str:
            paper = engine.get(id)
            if not local:  # as the HTTP API shows a paper: the server's paths are its own
                paper = replace(paper, file="")
            if passages:
                return shape.passages(paper, to_bibtex([paper]), engine.passages(id),
                                      from_passage)
            return shape.paper(paper, to_bibtex([paper]))
        return _answer(run, local)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def info() -> CallToolResult:
        """What the index holds and how it was built."""
        def run() -> str:
            data = engine.info().to_dict()
            data["index"] = Path(data.pop("path")).name  # as /info says it: no path
            return shape.info(data)
        return _answer(run, local)

    return server


def _reading_list(engine: SearchEngine, entries: Sequence[str], file: str,
                  local: bool) -> list[Paper | dict[str, str]]:
    """The papers `recommend` starts from: the index's by id, others by title, then
    the entries of `file` (a local server's only)."""
    given: list[Paper | dict[str, str]] = [
        engine.get(entry) if entry in engine else {"title": entry}
        for entry in entries if entry.strip()]
    if file:
        if not local:
            raise QueryError("this server reads no files (its paths are not yours); pass "
                             "the papers' ids or titles", parameter="file")
        given.extend(read_bibliography([file], title_only=True).papers)
    if not given:
        raise QueryError("give the papers to start from: ids or titles, or a file",
                         parameter="papers")
    return given


# -- the answers' text ------------------------------------------------------------------
def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rsplit(" ", 1)[0] + "…"


def _quoted(query: str) -> str:
    """The query in quotes on one line: whole, or its opening, saying how long it is."""
    line = " ".join(query.split())
    if len(line) <= QUERY_CHARS:
        return f'"{line}"'
    return f'"{_clip(line, QUERY_CHARS)}" (the opening of a {len(query):,}-character query)'


def _counted(count: int, noun: str) -> str:
    """"1 paper", "2 papers"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _where(paper: Paper) -> str:
    """"ICLR 2025", or "NeurIPS, 2023": the year only where the venue lacks it."""
    parts = [paper.venue] if paper.venue else []
    if paper.year and str(paper.year) not in paper.venue:
        parts.append(str(paper.year))
    return ", ".join(parts)


def _located(passage: Passage) -> str:
    """"p. 102 (§3 Results), PDF page 4": the printed page to cite, and the file's page
    to open where the two differ."""
    where = passage.where or "passage"
    if passage.page is not None and passage.page_label not in ("", str(passage.page)):
        where += f", PDF page {passage.page}"
    return where


def _excerpt(text: str, anchor: str, limit: int) -> str:
    """`text` on one line, or at most `limit` characters of it around `anchor` (the
    evidence sentence) cut at words, with an ellipsis at each cut end."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    at = text.find(" ".join(anchor.split())) if anchor else -1
    start = max(0, min(at, len(text) - limit + 2)) if at > 0 else 0
    if start:  # from a word's start, not its middle
        start = text.find(" ", start - 1) + 1 or start
    cut = _clip(text[start:], limit - (1 if start else 0))
    return ("…" if start else "") + cut


def _hit(hit: Hit, full: bool) -> str:
    paper = hit.paper
    where = f" ({_where(paper)})" if _where(paper) else ""
    lines = [f"{hit.rank}. {paper.id} | {paper.title}{where} | score {hit.score:.3f}"]
    if hit.passage is not None:
        lines.append(f"   {_located(hit.passage)}: "
                     f"{_excerpt(hit.passage.text, hit.evidence or '', PASSAGE_CHARS)}")
    elif hit.evidence:
        lines.append(f"   > {_clip(hit.evidence, EVIDENCE_CHARS)}")
    if full:
        if paper.authors:
            more = " et al." if len(paper.authors) > _AUTHORS else ""
            lines.append(f"   authors: {', '.join(paper.authors[:_AUTHORS])}{more}")
        if paper.url:
            lines.append(f"   url: {paper.url}")
        if hit.because:
            lines.append(f"   like: {', '.join(reason.id for reason in hit.because)}")
        lines.append(f"   abstract: {' '.join(paper.abstract.split())}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Shape:
    """How answers are written: a line per paper (and its evidence), cut to `max_chars`
    at a paper's end, with a note saying how many were left out."""

    max_chars: int = MAX_CHARS

    def hits(self, found: Hits, what: str, *, full: bool) -> str:
        if not found:
            return f"No papers found {what}."
        advice = "ask for fewer (k)" + (" or detail='brief'" if full else "")
        return self._fit(f"{_counted(len(found), 'paper')} {what}, best first:",
                         [_hit(hit, full) for hit in found], "paper", advice)

    def paper(self, paper: Paper, bibtex: str) -> str:
        fields = {name: value for name, value in paper.to_dict().items()
                  if value not in ("", [], {}, None, False)}
        kept = fields.pop("bib_fields", {})  # publisher, pages, ...: a line each
        fields.update(kept if isinstance(kept, dict) else {})
        record = "\n".join(f"{name}: {'; '.join(value) if isinstance(value, list) else value}"
                           for name, value in fields.items())
        return self._fit("", [record, f"BibTeX:\n{bibtex.strip()}"], "part",
                         "the abstract is too long to show whole")

    def passages(self, paper: Paper, bibtex: str, passages: list[Passage],
                 first: int = 1) -> str:
        """The paper (in half the budget at most) and its passages from the `first`,
        each with its page and section, as many as fit; the note says which were
        shown and how to ask for the next."""
        head = Shape(self.max_chars // 2).paper(paper, bibtex)
        if not passages:
            return f"{head}\nPassages: none; the index knows this paper by its abstract."
        if first > len(passages):
            return (f"{head}\nPassages: it has {_counted(len(passages), 'passage')}; "
                    f"from_passage={first} is past the last.")
        title = f"{head}\nPassages ({len(passages)}):"
        lines, used = [title], len(title)
        for number, passage in enumerate(passages[first - 1:], start=first):
            line = f"[{number}] {_located(passage)}: {' '.join(passage.text.split())}"
            if used + 1 + len(line) > self.max_chars - 120 and len(lines) > 1:
                return "\n".join(lines) + (
                    f"\n[cut at {self.max_chars:,} characters: passages {first}-"
                    f"{number - 1} of {len(passages)} shown, {len(passages) - number + 1} "
                    f"left out; ask again with from_passage={number}]")
            lines.append(line[:self.max_chars - 120 - used - 1])
            used += 1 + len(lines[-1])
        return "\n".join(lines)

    def info(self, data: dict[str, Any]) -> str:
        shown = ("index", "count", "model", "encoder_backend", "index_type", "fields",
                 "created", "updated")
        return "\n".join(f"{name}: {', '.join(value) if isinstance(value, list) else value}"
                         for name in shown if (value := data.get(name)) is not None)

    def _fit(self, header: str, blocks: list[str], noun: str, advice: str) -> str:
        whole = "\n".join([header, *blocks] if header else blocks)
        if len(whole) <= self.max_chars:
            return whole

        def note(shown: int) -> str:
            return (f"\n[cut at {self.max_chars:,} characters: {shown} of "
                    f"{_counted(len(blocks), noun)} shown in full; {advice}]")

        room = self.max_chars - len(note(len(blocks)))
        parts, used = [header] if header else [], len(header)
        for block in blocks:
            if used + 1 + len(block) > room:
                break
            parts.append(block)
            used += 1 + len(block)
        shown = len(parts) - bool(header)
        if not shown:  # the first alone is too long: as much of it as fits
            parts.append(blocks[0][:max(0, room - used - 1)])
        return "\n".join(parts) + note(shown)
