"""Typeset a full-text dev set: PDFs whose bodies hold statements found nowhere else.

Each PDF (`pdfs/fulltext-NNN.pdf`, paper id `fulltext-NNN`) has a host dev paper's
title, authors and abstract on page 1 and a body in two columns (running heads, page
numbers, numbered headings, footnotes, hyphenated line ends, figure captions,
references, sometimes an appendix; scripts/fulltext_typeset.py draws it). The body's
sections are the abstracts of other dev papers: "donors", which have a `tldr` (a human
paraphrase of the abstract), and "fillers", which have none. A PDF's donors, host and
fillers are neighbours in the dev embeddings, as a paper's sections share its subject.
No donor, host or filler is in the corpus, so a body statement exists only in its PDF.

Writes to `--out`:
- `pdfs/`: the PDFs;
- `questions.jsonl`: three questions per donor, `kind` paraphrase (its tldr), quote
  (one exact sentence of its abstract) and partial (that sentence with its first or last
  few words cut), each with the answer: `paper` (the PDF's id), `pages` (1-based PDF
  pages the text is printed on, as typeset), `page` (the first), `page_label`,
  `section`. Ids: a PDF's questions share the parity of its number, so the even ids
  (`split` tune) and the odd ones (report) ask about different PDFs;
- `truth.jsonl`: per PDF, what was typeset: host, donors, fillers, references, and the
  body as blocks (text, page, page_label, section, kind: body, caption, footnote,
  reference), clean of hyphens and markers: a perfect reader's output;
- `corpus.jsonl`: `--corpus` dev abstracts (seeded sample; no donor, host or filler).

Deterministic for a `--seed`. Usage:
    python scripts/fulltext_devset.py --data /work/shared/data/papers --out /tmp/ftdev
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fulltext_layout import Plan, printable, typeset  # noqa: E402

from embedsearch.papers import split_sentences  # noqa: E402

__all__ = ["main"]

#: Words an abstract used as host, donor or filler has: a short one makes a section of
#: two lines, a long one (a few run to 600 words) a page.
WORDS = (70, 320)
#: Words of the sentence a quote question copies: long enough to be a statement, short
#: enough to be pasted as one.
QUOTE_WORDS = (12, 60)
#: Words in a run two abstracts share when they are one work: 8 shared words in a row
#: are a copied phrase, not a common one ("in this paper we propose a novel" is 7).
SHINGLE = 8


@dataclass
class Dev:
    papers: list[dict[str, object]]
    vectors: np.ndarray


def load(data: Path) -> Dev:
    with gzip.open(data / "papers.jsonl.gz", "rt", encoding="utf-8") as lines:
        papers = [json.loads(line) for line in lines]
    vectors = np.load(data / "minilm_title_abstract_f16.npy").astype(np.float32)
    return Dev(papers, vectors)


def quotable(sentences: list[str]) -> list[int]:
    return [i for i, s in enumerate(sentences)
            if QUOTE_WORDS[0] <= len(s.split()) <= QUOTE_WORDS[1]]


def eligible(paper: dict[str, object], donor: bool) -> bool:
    """Whether `paper` can be typeset: printable, of a usual length, with authors; a
    donor also needs its tldr and a sentence to quote."""
    abstract = printable(str(paper["abstract"]))
    title = printable(str(paper["title"]))
    if not abstract or not title or not paper.get("authors"):
        return False
    if not WORDS[0] <= len(abstract.split()) <= WORDS[1] or len(title.split()) > 25:
        return False
    if any(printable(str(name)) is None for name in paper["authors"]):  # type: ignore[attr-defined]
        return False
    if donor:
        return bool(paper.get("tldr")) and bool(quotable(split_sentences(abstract)))
    return not paper.get("tldr")


def nearest(vectors: np.ndarray, pool: list[int], used: set[int], target: np.ndarray,
            count: int) -> list[int]:
    """The `count` papers of `pool` not in `used` whose vectors are nearest `target`."""
    free = np.array([i for i in pool if i not in used], dtype=np.int64)
    scores = vectors[free] @ target
    order = np.argsort(-scores, kind="stable")[:count]
    return [int(free[i]) for i in order]


def shingles(text: str) -> set[str]:
    words = re.sub(r"[^a-z0-9 ]", "", text.lower()).split()
    return {" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def twins(dev: Dev, indices: list[int]) -> dict[int, set[int]]:
    """The other papers that share a run of `SHINGLE` words with each of `indices`: the
    same work under another venue's id (an ICLR submission and its later version), whose
    abstract would put a donor's sentences in the corpus or print them twice in a PDF."""
    owners: dict[str, set[int]] = {}
    for index in indices:
        for shingle in shingles(str(dev.papers[index]["abstract"])):
            owners.setdefault(shingle, set()).add(index)
    found: dict[int, set[int]] = {index: set() for index in indices}
    for other, paper in enumerate(dev.papers):
        for shingle in shingles(str(paper["abstract"])) & owners.keys():
            for index in owners[shingle] - {other}:
                found[index].add(other)
    return found


def group(dev: Dev, count: int, donors: int, fillers: int, rng: random.Random
          ) -> list[tuple[int, list[int], list[int]]]:
    """`count` (host, donors, fillers): a random donor, its nearest donors, and the
    host and fillers nearest their centroid."""
    with_tldr = [i for i, p in enumerate(dev.papers) if eligible(p, True)]
    without = [i for i, p in enumerate(dev.papers) if eligible(p, False)]
    if len(with_tldr) < count * donors:
        raise SystemExit(f"only {len(with_tldr)} papers can be donors; ask for fewer")
    order = list(with_tldr)
    rng.shuffle(order)
    twin = twins(dev, with_tldr)
    used: set[int] = set()
    groups = []
    for _ in range(count):
        seed = next(i for i in order if i not in used)
        chosen = [seed] + nearest(dev.vectors, with_tldr, used | {seed}, dev.vectors[seed],
                                  donors - 1)
        used.update(chosen)
        used.update(*(twin[i] for i in chosen))
        centroid = dev.vectors[chosen].mean(axis=0)
        rest = nearest(dev.vectors, without, used, centroid, 1 + fillers)
        used.update(rest)
        groups.append((rest[0], chosen, rest[1:]))
    return groups


def corpus_sample(dev: Dev, taken: set[int], size: int, rng: random.Random) -> list[int]:
    free = [i for i in range(len(dev.papers)) if i not in taken]
    return sorted(rng.sample(free, size))


def cut_words(sentence: str, rng: random.Random) -> str:
    """Most of `sentence`: its first or last 3 to 5 words cut, as a reader pastes a
    fragment."""
    words = sentence.split()
    cut = min(rng.randint(3, 5), len(words) - 8)
    return " ".join(words[cut:] if rng.random() < 0.5 else words[:-cut])


def questions_for(plan: Plan, pdf: int, dev: Dev, rng: random.Random,
                  counters: list[int]) -> list[dict[str, object]]:
    """The three questions about each donor of `plan`, with their answers as typeset."""
    asked = []
    for donor in plan.donors:
        paper = dev.papers[donor.index]
        pages = sorted({p for s in donor.sentence_pages for p in s})
        choice = rng.choice(quotable(donor.sentences))
        sentence, spot = donor.sentences[choice], donor.sentence_pages[choice]
        for kind, query, where in (("paraphrase", str(paper["tldr"]), pages),
                                   ("quote", sentence, spot),
                                   ("partial", cut_words(sentence, rng), spot)):
            parity = pdf % 2
            number = 2 * counters[parity] + parity
            counters[parity] += 1
            asked.append({"id": number, "split": "tune" if parity == 0 else "report",
                          "kind": kind, "query": query, "paper": plan.paper_id,
                          "file": plan.file, "page": where[0], "pages": where,
                          "page_label": plan.label(where[0]), "section": donor.section,
                          "appendix": donor.appendix, "donor": paper["id"]})
    return asked


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="the dev papers' folder (papers.jsonl.gz and its embeddings)")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write")
    parser.add_argument("--pdfs", type=int, default=100, help="PDFs to typeset")
    parser.add_argument("--donors", type=int, default=4, help="donors (questions) per PDF")
    parser.add_argument("--fillers", type=int, default=8, help="fillers per PDF (>= 4)")
    parser.add_argument("--corpus", type=int, default=5000, help="abstracts in corpus.jsonl")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    if args.donors < 1 or args.fillers < 4:
        parser.error("a PDF needs at least 1 donor and 4 fillers")
    rng = random.Random(args.seed)
    dev = load(args.data)
    groups = group(dev, args.pdfs, args.donors, args.fillers, rng)
    taken = {i for host, donors, fillers in groups for i in (host, *donors, *fillers)}
    taken.update(*twins(dev, sorted(taken)).values())
    corpus = corpus_sample(dev, taken, args.corpus, rng)
    (args.out / "pdfs").mkdir(parents=True, exist_ok=True)
    questions: list[dict[str, object]] = []
    truths: list[dict[str, object]] = []
    counters = [0, 0]
    for number, (host, donors, fillers) in enumerate(groups):
        centroid = dev.vectors[donors].mean(axis=0)
        references = nearest(dev.vectors, corpus, set(), centroid, rng.randint(8, 14))
        plan = typeset(args.out / "pdfs", number, dev.papers, host, donors, fillers,
                       references, rng)
        questions += questions_for(plan, number, dev, rng, counters)
        truths.append(plan.truth())
    questions.sort(key=lambda q: int(q["id"]))  # type: ignore[call-overload]
    write_jsonl(args.out / "questions.jsonl", questions)
    write_jsonl(args.out / "truth.jsonl", truths)
    write_jsonl(args.out / "corpus.jsonl", [dev.papers[i] for i in corpus])
    pages = [int(t["pages"]) for t in truths]  # type: ignore[call-overload]
    print(f"{len(truths)} PDFs ({sum(pages)} pages, {min(pages)}-{max(pages)} each), "
          f"{len(questions)} questions, {len(corpus)} corpus abstracts -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
