"""What a query returns: `Hit`, one ranked paper as plain data, and `Hits`, the list
of them (see its docstring)."""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..errors import DependencyError
from ..papers import Paper, Passage

if TYPE_CHECKING:
    import pandas

__all__ = ["HIT_COLUMNS", "PAPER_COLUMNS", "Hit", "Hits", "Reason", "hit_record"]

#: A paper's fields in JSON, in their order: `Paper.to_dict` is their one definition
#: (its order, id and title first, is not the dataclass's), so they are read from it.
PAPER_COLUMNS: tuple[str, ...] = tuple(Paper(id="", abstract="").to_dict())
_PAPER_FIELDS = frozenset(field.name for field in fields(Paper))
_HTML_ABSTRACT_CHARS = 300
_LINE = 100  # the width `Hits` prints to


@dataclass(frozen=True)
class Reason:
    """A paper of the library a recommendation is like: its id (as given), its title,
    and the cosine of the two. A recommendation's reasons are its nearest examples."""

    id: str
    title: str
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "similarity": round(self.similarity, 4)}

    def __str__(self) -> str:  # as a CSV cell and in text: the title says what it is
        return f"{self.title} ({self.id})" if self.title else self.id


@dataclass(frozen=True)
class Hit:
    """One result: its 1-based rank, its score, the paper, and why.

    `score` is the number the hits are ordered by, on the cosine scale, so it never
    rises down a list and reads alike across queries and modes (`min_score` keeps to
    it). For a dense search it is the cosine of the query's vector and the paper's (for
    `similar`, of the given papers' direction and the paper); for a recommendation from
    example papers, the cosine of the paper and its nearest example (the method chooses
    which papers, they are shown by this); for hybrid and lexical search it is the
    ranking's score (the fused z-score, BM25) mapped onto the cosines of the same
    candidates (`fusion.cosine_scale`), so a paper ranked high by strong shared words
    scores above its own cosine. It lies in (-1, 1), in practice about 0.1 to 0.95 for
    the bundled model (docs/explanation/search-quality.md says what each band holds).

    `similarity` is the cosine itself (query and paper, or the paper and its nearest
    example), None for a search without a vector; `lexical_score` (BM25) is given
    whenever the search computed it. `evidence` is the abstract's sentence that best
    matches the query, and `evidence_terms` the words of it that match. A
    recommendation from example papers has `because`: the (up to three) examples
    nearest to it, nearest first, and `group`: the label of the cluster of examples the
    nearest is in. A paper read in full whose passage answered the query better than
    its abstract has `passage`: that passage, with its page and section (its
    `evidence` is then the passage's sentence, and `similarity` and `lexical_score`
    the passage's where it beat the abstract). The paper's fields are the hit's too:
    `hit.id`, `hit.title`, ...
    """

    rank: int
    score: float
    paper: Paper
    similarity: float | None = None
    lexical_score: float | None = None
    evidence: str | None = None
    evidence_terms: tuple[str, ...] = ()
    because: tuple[Reason, ...] = ()
    group: str | None = None
    passage: Passage | None = None

    def __getattr__(self, name: str) -> Any:
        # Called only for names the hit lacks: a paper field is the hit's too, as in its
        # JSON (`hit.id`, `hit.title`, `hit.year`), so a reader need not know `hit.paper`.
        if name in _PAPER_FIELDS:
            return getattr(self.paper, name)
        raise AttributeError(f"'Hit' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_PAPER_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """The hit as JSON-ready data, in `HIT_COLUMNS` order: rank, score and the paper's
        fields always; a component score or the evidence (with its terms) only where the
        search computed it. Read off the dataclass, so a new field needs no code here."""
        data: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if name == "paper":
                data.update(self.paper.to_dict())
            elif name == "evidence_terms":  # () also when there is no evidence
                if self.evidence is not None:
                    data[name] = list(value)
            elif name == "because":  # only recommendations have reasons
                if value:
                    data[name] = [reason.to_dict() for reason in value]
            elif name == "passage":  # only a paper read in full, when a passage won
                if value is not None:
                    data[name] = value.to_dict()
            elif value is not None:
                data[name] = value
        return data


_FIELDS = tuple(field.name for field in fields(Hit))
#: The fields of a JSON hit, in their order: the columns of CSV and of `Hits.to_pandas`.
#: `Hit`'s fields, its paper spelt out as `PAPER_COLUMNS`; the HTTP API's schema of a
#: hit (`server.schemas.HitOut`) is built from this too.
HIT_COLUMNS: tuple[str, ...] = tuple(
    column for name in _FIELDS
    for column in (PAPER_COLUMNS if name == "paper" else (name,)))


def hit_record(hit: Hit, **extra: Any) -> dict[str, Any]:
    """One hit as JSON-ready data: the shape every JSON output of a hit has."""
    data = hit.to_dict()
    data["score"] = round(hit.score, 6)
    for name in ("similarity", "lexical_score"):
        value = getattr(hit, name)
        if value is not None:
            data[name] = round(value, 6)
    return {**data, **extra}


def _cell(text: str, limit: int | None = None) -> str:
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0] + "…"
    return html.escape(text, quote=True)


class Hits(list[Hit]):
    """The hits of one query, best first: a plain `list[Hit]` that also renders as an
    HTML table in Jupyter and converts to a pandas DataFrame."""

    def __init__(self, hits: Iterable[Hit] = ()) -> None:
        super().__init__(hits)

    def papers(self) -> list[Paper]:
        """The hits' papers, in rank order."""
        return [hit.paper for hit in self]

    def __repr__(self) -> str:
        """A compact table, a hit a line: rank, score, id and title cut to the line."""
        if not self:
            return "Hits([])  (no papers match)"
        width = max(len(hit.paper.id) for hit in self)
        lines = [f"{'rank':>4}  {'score':>5}  {'id':<{width}}  title"]
        for hit in self:
            title = " ".join(hit.paper.title.split())
            room = max(20, _LINE - 17 - width)
            title = title if len(title) <= room else title[: room - 1] + "…"
            lines.append(f"{hit.rank:>4}  {hit.score:>5.3f}  {hit.paper.id:<{width}}  {title}")
        return "\n".join(lines)

    __str__ = __repr__

    def to_records(self) -> list[dict[str, Any]]:
        """Each hit as JSON-ready data (the `--json` shape)."""
        return [hit_record(hit) for hit in self]

    def to_pandas(self) -> pandas.DataFrame:
        """A DataFrame with one row per hit and the JSON hit's fields as columns
        (`HIT_COLUMNS`, in that order; component scores and evidence None where absent)."""
        try:
            import pandas
        except ImportError:
            raise DependencyError("Hits.to_pandas needs pandas, which is not installed: "
                                  "pip install pandas (or pip install 'embedsearch[pandas]')"
                                  ) from None
        rows = [{column: record.get(column) for column in HIT_COLUMNS}
                for record in self.to_records()]
        return pandas.DataFrame(rows, columns=list(HIT_COLUMNS))

    def _repr_html_(self) -> str:
        """A table for Jupyter: every value HTML-escaped, since titles and abstracts are
        arbitrary text from the corpus (a `<` in a formula must not become markup)."""
        if not self:
            return "<p><em>No papers match.</em></p>"
        head = "".join(f"<th>{name}</th>" for name in
                       ("rank", "score", "title", "venue", "year", "id", "evidence"))
        rows = []
        for hit in self:
            paper = hit.paper
            title = _cell(paper.title)
            if paper.url.startswith(("https://", "http://")):  # never javascript: links
                title = f'<a href="{_cell(paper.url)}" target="_blank">{title}</a>'
            evidence = hit.evidence if hit.evidence is not None else paper.abstract
            cells = (str(hit.rank), f"{hit.score:.3f}", title, _cell(paper.venue),
                     str(paper.year or ""), _cell(paper.id),
                     _cell(evidence, _HTML_ABSTRACT_CHARS))
            rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
        return ("<table class=\"embedsearch-hits\"><thead><tr>" + head + "</tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>")
