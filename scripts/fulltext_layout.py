"""What goes where in a PDF of scripts/fulltext_devset.py: the sections, which dev
paper's abstract fills each, the footnotes, figures and references, and the record of
where each donor's sentences were printed (`Plan`), which the questions' answers are."""

from __future__ import annotations

import random
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fulltext_typeset import REFERENCE, Printed, Typesetter  # noqa: E402

from embedsearch.papers import split_sentences  # noqa: E402

__all__ = ["Donor", "Plan", "printable", "typeset"]

RELATED = ("Related Work", "Background", "Preliminaries", "Prior Work")
METHOD = ("Method", "Approach", "Proposed Method", "Our Approach", "Model")
METHOD_SUBS = ("Problem Setting", "Model", "Training Objective", "Architecture",
               "Learning Procedure", "Representation", "Inference")
EXPERIMENTS = ("Experiments", "Evaluation", "Experimental Results", "Empirical Study")
EXPERIMENT_SUBS = ("Setup", "Results", "Ablations", "Baselines", "Analysis",
                   "Comparison with Prior Methods")
CLOSING = ("Conclusion", "Discussion", "Conclusions", "Limitations and Future Work")
APPENDIX = ("Additional Results", "Further Details", "Supplementary Experiments",
            "Implementation Details")
AFFILIATIONS = ("Department of Computer Science, University of Northbridge",
                "Institute for Intelligent Systems, Eastgate University",
                "School of Engineering, Lakeside Institute of Technology",
                "Robotics Laboratory, Westfield University",
                "Faculty of Informatics, Technical University of Hallberg")
FOOTNOTES = ("Code and trained models are available at https://github.com/anonymous/{slug}.",
             "Work done while the first author was an intern.",
             "We use the default hyperparameters of the original implementations.",
             "See the appendix for the full list of settings.",
             "Videos of the experiments are on the project page.",
             "All numbers are averaged over five random seeds.")
CAPTIONS = ("Overview of the proposed approach. The model is trained end to end and "
            "evaluated on held-out tasks.",
            "Performance as a function of training steps; shaded regions show one "
            "standard deviation over five seeds.",
            "Qualitative results on the test set. Each row shows a different scene.",
            "Ablation of the main components. Removing either part lowers the score.",
            "Comparison with the baselines on all benchmarks (higher is better).")


def printable(text: str) -> str | None:
    """`text` as the standard PDF fonts can print it (cp1252), or None: a donor's
    sentence must be printed exactly as its question quotes it."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    for form in (text, "".join(c for c in unicodedata.normalize("NFKD", text)
                               if not unicodedata.combining(c))):
        try:
            form.encode("cp1252")
            return form
        except UnicodeEncodeError:
            continue
    return None


@dataclass
class Donor:
    """A donor's abstract as printed: its sentences, the pages of each, its heading."""

    index: int
    id: str
    section: str
    appendix: bool
    sentences: list[str] = field(default_factory=list)
    sentence_pages: list[list[int]] = field(default_factory=list)


@dataclass
class Plan:
    """One typeset PDF: its paper id and file, what it holds and where."""

    paper_id: str
    file: str
    host: dict[str, object]
    title: str
    first_label: int
    pages: int = 0
    donors: list[Donor] = field(default_factory=list)
    fillers: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    printed: list[Printed] = field(default_factory=list)

    def label(self, page: int) -> str:
        return str(self.first_label + page - 1)

    def truth(self) -> dict[str, object]:
        """The PDF as typeset, its body as blocks (a paragraph cut where a page begins,
        each sentence on the page it starts on): what a perfect reader would give."""
        blocks = []
        for printed in self.printed:
            run: list[str] = []
            page = None
            for sentence, pages in zip(printed.sentences, printed.pages, strict=True):
                if run and pages[0] != page:
                    blocks.append(self._block(" ".join(run), page, printed))
                    run = []
                page = pages[0]
                run.append(sentence)
            if run:
                blocks.append(self._block(" ".join(run), page, printed))
        return {"id": self.paper_id, "file": self.file, "host": self.host["id"],
                "title": self.title, "authors": self.host["authors"],
                "abstract": self.host["abstract"], "pages": self.pages,
                "first_label": self.first_label,
                "donors": [d.id for d in self.donors], "fillers": self.fillers,
                "references": self.references, "blocks": blocks}

    def _block(self, text: str, page: int | None, printed: Printed) -> dict[str, object]:
        return {"text": text, "page": page, "page_label": self.label(page or 1),
                "section": printed.section, "kind": printed.kind}


def head_authors(authors: list[str]) -> str:
    surnames = [name.split()[-1] for name in authors]
    if len(surnames) == 1:
        return surnames[0]
    return f"{surnames[0]} and {surnames[1]}" if len(surnames) == 2 else f"{surnames[0]} et al."


def short_title(title: str) -> str:
    """A running head's title: the part before a colon, or the first six words."""
    head = title.split(":")[0].strip()
    words = head.split()
    return head if len(words) <= 7 else " ".join(words[:6]) + " ..."


def cite(sentences: list[str], first: int, count: int, rng: random.Random) -> list[str]:
    """Citation marks ("[3]", "[2, 5]") put before the full stop of some sentences."""
    cited = []
    for sentence in sentences:
        if sentence.endswith(".") and count and rng.random() < 0.45:
            marks = sorted(rng.sample(range(first, first + count), rng.randint(1, 2)))
            sentence = f"{sentence[:-1]} [{', '.join(map(str, marks))}]."
        cited.append(sentence)
    return cited


def halves(sentences: list[str]) -> list[list[str]]:
    """A long abstract as two paragraphs, cut at the sentence nearest its middle."""
    words = sum(len(s.split()) for s in sentences)
    if words <= 110 or len(sentences) < 4:
        return [sentences]
    seen, cut = 0, 1
    for cut, sentence in enumerate(sentences[:-1], 1):
        seen += len(sentence.split())
        if seen >= words / 2:
            break
    return [sentences[:cut], sentences[cut:]]


def unique(paper: dict[str, object]) -> list[str]:
    """The paper's authors, each once (a few dev records list them twice over)."""
    return list(dict.fromkeys(str(name) for name in paper["authors"]))  # type: ignore[attr-defined]


def reference(paper: dict[str, object]) -> str:
    authors = unique(paper)
    names = ", ".join(authors[:3]) + (" et al" if len(authors) > 3 else "")
    return f"{names}. {paper['title']}. In {paper['venue']}, {paper['year']}."


def typeset(folder: Path, number: int, papers: list[dict[str, object]], host: int,
            donors: list[int], fillers: list[int], references: list[int],
            rng: random.Random) -> Plan:
    """Typeset PDF `number` of the dev set into `folder` and say where its text went."""
    paper = papers[host]
    text = {i: printable(str(papers[i]["abstract"])) or "" for i in (host, *donors, *fillers)}
    sentences = {i: split_sentences(t) for i, t in text.items()}
    authors = [printable(name) or "" for name in unique(paper)]
    title = printable(str(paper["title"])) or ""
    plan = Plan(f"fulltext-{number:03d}", f"fulltext-{number:03d}.pdf", paper, title,
                1 if rng.random() < 0.5 else rng.randint(100, 900))
    plan.fillers = [str(papers[i]["id"]) for i in fillers]
    plan.references = [str(papers[i]["id"]) for i in references]
    setter = Typesetter(folder / plan.file, title=title, authors=", ".join(authors),
                        head_title=short_title(title), head_authors=head_authors(authors),
                        first_label=plan.first_label)
    setter.front(title, ", ".join(authors), rng.choice(AFFILIATIONS), text[host])
    slug = "-".join(title.lower().split()[:2]).strip(":,")
    # Each footnote its own text: the first in the introduction, the rest (one in
    # three donors has one) in turn.
    notes = [note.format(slug=slug) for note in rng.sample(FOOTNOTES, len(FOOTNOTES))]
    in_appendix = len(donors) > 1 and rng.random() < 0.4
    body = donors[:-1] if in_appendix else donors
    method = body[:(len(body) + 1) // 2]
    # Fillers beyond the four every PDF has go after donors (and one to related work),
    # so that the donors' sections spread over pages 2 to 5 rather than all fall on 2.
    spare = list(fillers[4:])

    def fill(index: int, cited: bool = False, note: str | None = None) -> None:
        said = cite(sentences[index], 1, len(references), rng) if cited else sentences[index]
        for part, paragraph in enumerate(halves(said)):
            marks = {len(paragraph) - 1: note} if note and part == 0 else None
            setter.paragraph(paragraph, notes=marks, indent=0.0 if part == 0 else 10.0)

    def donate(index: int, appendix: bool) -> None:
        donor = Donor(index, str(papers[index]["id"]), setter.section, appendix)
        note = notes.pop() if len(notes) > 1 and rng.random() < 0.35 else None
        for part, paragraph in enumerate(halves(sentences[index])):
            marks = {rng.randrange(len(paragraph)): note} if note and part == 0 else None
            printed = setter.paragraph(paragraph, notes=marks,
                                       indent=0.0 if part == 0 else 10.0)
            donor.sentences += printed.sentences
            donor.sentence_pages += printed.pages
        plan.donors.append(donor)
        if spare and rng.random() < 0.6:
            fill(spare.pop(0))

    setter.heading("1 Introduction")
    fill(fillers[0], cited=True, note=notes[0])
    if rng.random() < 0.5:
        setter.figure([f"Figure {setter.figures + 1}: {rng.choice(CAPTIONS)}"])
    fill(fillers[1], cited=True)
    setter.heading(f"2 {rng.choice(RELATED)}")
    fill(fillers[2], cited=True)
    if spare and rng.random() < 0.5:
        fill(spare.pop(0), cited=True)
    setter.heading(f"3 {rng.choice(METHOD)}")
    subsections(setter, "3", method, METHOD_SUBS, rng, donate)
    setter.heading(f"4 {rng.choice(EXPERIMENTS)}")
    setter.figure([f"Figure {setter.figures + 1}: {rng.choice(CAPTIONS)}"])
    subsections(setter, "4", body[len(method):], EXPERIMENT_SUBS, rng, donate)
    setter.heading(f"5 {rng.choice(CLOSING)}")
    for index in (fillers[3], *spare):
        fill(index)
    setter.heading("References")
    for position, index in enumerate(references, 1):
        setter.paragraph([f"[{position}] {printable(reference(papers[index])) or ''}"],
                         kind="reference", font=REFERENCE, indent=0.0, justify=False)
    if in_appendix:
        setter.new_page()
        setter.heading(f"A {rng.choice(APPENDIX)}")
        donate(donors[-1], True)
    setter.save()
    plan.pages, plan.printed = setter.page, setter.printed
    return plan


def subsections(setter: Typesetter, number: str, donors: list[int], names: tuple[str, ...],
                rng: random.Random, donate: Callable[[int, bool], None]) -> None:
    """Each donor under a subsection of its own (`3.1 Model`), or the only one
    straight under the section."""
    if len(donors) == 1 and rng.random() < 0.5:
        donate(donors[0], False)
        return
    for position, (index, name) in enumerate(zip(donors, rng.sample(names, len(donors)),
                                                 strict=True), 1):
        setter.heading(f"{number}.{position} {name}", 2)
        donate(index, False)
