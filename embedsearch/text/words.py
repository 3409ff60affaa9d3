"""Words: how text is cut into stems, which words carry no meaning, and how rare a stem is.

One home for the word vocabulary every part shares: the BM25 index (`storage.local`),
the Milvus storage's word counts, evidence highlighting and the map's cluster labels.

Text is lower-cased, split into words of two or more letters or digits, stripped of the
33 Lucene English stopwords and Snowball-stemmed (the bm25s defaults). Stems are kept as
stable 64-bit hashes, so a word statistic is a few sorted arrays, not a dict of strings.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from .markup import without_markup

__all__ = ["BOILERPLATE", "FUNCTION_WORDS", "GENERIC_WORDS", "STOPWORDS", "WORDS_FILE",
           "Tokenized", "Tokenizer", "WordCounts", "WordStatistics", "bm25_idf", "find_terms",
           "label_words", "lucene_idf"]

#: How many words name a group of texts (a region of the map, a recommendation group).
_LABEL_WORDS = 3

_WORD = re.compile(r"(?u)\b\w\w+\b")
#: The 33 Lucene English stopwords: what BM25 never counts (the bm25s default).
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "
    "their then there these they this to was will with".split()
)
#: Never evidence of any query (`evidence`), nor highlighted: function words beyond the
#: 33 stopwords (BM25 still counts them). A pasted abstract holds "we", "which" and
#: "across", and a highlighted "we" tells a reader nothing.
FUNCTION_WORDS = frozenset("""
about above across after again against all almost along already also although always
among amongst another any anyone anything around back because been before being below
between beyond both can cannot could did do does doing done down during each either
else enough etc even ever every few first former from further had has have having
here hence how however itself just last latter least less made make makes many may
more moreover most much must neither never nevertheless next now often once one only
onto other others otherwise our ours ourselves out over own per perhaps rather same
second several she should since so some still than thereby therefore thus through
throughout too toward towards two under until up upon us very via was we well
were what whatever when where whereas whether which while who whom whose why within
without would yet you your its those them themselves he him his her me my
""".split())
#: Never evidence that two papers are alike (`evidence.content_words`), nor of a query
#: as long as a passage: the function words, and the verbs and nouns every abstract uses
#: to describe itself. On a large index the frequency rule drops them anyway; on a small
#: one (the bundled 38 papers) "propose" is rare enough to pass it.
BOILERPLATE = FUNCTION_WORDS | frozenset("""
abstract achieve achieves address addresses approach approaches based demonstrate
demonstrates effective effectively enable enables enabling existing experiment
experiments extensive finally furthermore given introduce introduces key method
methods new novel outperform outperforms paper present presents problem propose
proposed proposes recent recently research result results set show shows significant
significantly state study task tasks use used uses using various work focus focuses
gain gains multi non pre wise
""".split())
#: Never a map cluster's label (`projection`): words of every abstract that would
#: otherwise top many clusters' labels. Kept apart from BOILERPLATE: the labels were
#: tuned with this list on top of scikit-learn's English stopwords.
GENERIC_WORDS = frozenset(
    "paper propose proposed proposes approach approaches method methods results result "
    "show shows shown using use used based new novel work problem problems present "
    "presents demonstrate performance existing also well however different achieve "
    "achieves state art study task tasks framework significantly experiments "
    "experimental effective efficient compared improve improves improved "
    "cid".split()  # 'cid' is an artefact of text extracted from PDFs: "(cid:16)"
)


class Tokenizer:
    """Text to stemmed words; the same for documents and queries."""

    def __init__(self) -> None:
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWords
        self._hashes: dict[str, int] = {}

    def words(self, text: str) -> list[str]:
        return list(self._stem([w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]))

    def surface(self, texts: Sequence[str]) -> list[list[tuple[str, str]]]:
        """For each text, (word as written, its stem) for each of its non-stopwords."""
        written = [[w for w in _WORD.findall(text) if w.lower() not in STOPWORDS]
                   for text in texts]
        stems = iter(self._stem([w.lower() for words in written for w in words]))
        return [[(w, next(stems)) for w in words] for words in written]

    def hashes(self, terms: Iterable[str]) -> NDArray[np.uint64]:
        """Stable 64-bit hashes of `terms` (memoised: corpora repeat their words)."""
        known = self._hashes
        out = []
        for term in terms:
            value = known.get(term)
            if value is None:
                value = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(),
                                       "little")
                known[term] = value
            out.append(value)
        return np.array(out, dtype=np.uint64)

    def terms(self, text: str) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
        """Hashes of the words of `text` and of its adjacent word pairs."""
        words = self.words(text)
        pairs = [f"{a} {b}" for a, b in zip(words, words[1:])]
        return self.hashes(words), self.hashes(pairs)


class WordStatistics(Protocol):
    """What evidence needs of an index's words: the tokenizer and how rare each stem is.
    A `Postings` is one; an index whose postings live elsewhere (Milvus) keeps only
    these counts."""

    @property
    def tokenizer(self) -> Tokenizer: ...

    def idf(self, words: Sequence[str]) -> dict[str, float]:
        """BM25 idf of each stem, as the index weighs it."""
        ...

    def __len__(self) -> int: ...


def find_terms(sorted_terms: NDArray[np.uint64],
          terms: NDArray[np.uint64]) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """For each of `terms`, its position in `sorted_terms` and whether it is there."""
    if not len(sorted_terms):
        return np.zeros(len(terms), np.intp), np.zeros(len(terms), bool)
    where = np.searchsorted(sorted_terms, terms).clip(0, len(sorted_terms) - 1)
    return where, sorted_terms[where] == terms


def lucene_idf(papers: int, df: NDArray[np.int64] | NDArray[np.float64]
               ) -> NDArray[np.float64]:
    """Lucene's BM25 idf, log1p((N - df + 0.5) / (df + 0.5)), of terms in `df` papers
    each among `papers`."""
    return np.asarray(np.log1p((papers - df + 0.5) / (df + 0.5)), dtype=np.float64)


def bm25_idf(papers: int, sorted_terms: NDArray[np.uint64], df: NDArray[np.int64],
         terms: NDArray[np.uint64]) -> NDArray[np.float64]:
    """Lucene's BM25 idf (`lucene_idf`) of each of `terms` among `papers` papers, `df[i]`
    being the document frequency of `sorted_terms[i]`; a term seen nowhere has df 0."""
    where, known = find_terms(sorted_terms, terms)
    found = np.zeros(len(terms))
    found[known] = df[where][known]
    return lucene_idf(papers, found)


class Tokenized:
    """A lazily made `Tokenizer` (it loads the Snowball stemmer): what both kinds of word
    statistics read and count words with."""

    _tokenizer: Tokenizer | None = None

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer()
        return self._tokenizer


WORDS_FILE = "words.npz"


class WordCounts(Tokenized):
    """How many papers each word stem occurs in, and how many papers there are: what
    evidence needs of an index whose BM25 is computed elsewhere (a Milvus collection).

    The stems are those `Postings` counts (`Tokenizer.words`), kept as sorted 64-bit
    hashes with their document frequencies, so `idf` weighs a word exactly as a local
    index of the same papers would. Satisfies `WordStatistics`.
    """

    def __init__(self, terms: NDArray[np.uint64], df: NDArray[np.int64], papers: int) -> None:
        self._terms, self._df, self._papers = terms, df, papers

    @classmethod
    def build(cls, texts: Iterable[str]) -> WordCounts:
        counts = cls(np.zeros(0, np.uint64), np.zeros(0, np.int64), 0)
        counts.add(texts)
        return counts

    def __len__(self) -> int:
        return self._papers

    def _documents(self, texts: Iterable[str]) -> tuple[NDArray[np.uint64], NDArray[np.int64], int]:
        """The distinct stems of `texts` with the number of texts each occurs in."""
        per_text = [np.unique(self.tokenizer.hashes(self.tokenizer.words(text)))
                    for text in texts]
        if not per_text:
            return np.zeros(0, np.uint64), np.zeros(0, np.int64), 0
        terms, df = np.unique(np.concatenate(per_text), return_counts=True)
        return terms.astype(np.uint64), df.astype(np.int64), len(per_text)

    def add(self, texts: Iterable[str]) -> None:
        """Count the papers of `texts` too."""
        terms, df, papers = self._documents(texts)
        merged = np.union1d(self._terms, terms).astype(np.uint64)
        total = np.zeros(len(merged), np.int64)
        total[np.searchsorted(merged, self._terms)] += self._df
        total[np.searchsorted(merged, terms)] += df
        self._terms, self._df, self._papers = merged, total, self._papers + papers

    def remove(self, texts: Iterable[str]) -> None:
        """Stop counting the papers of `texts` (the very texts they were added with)."""
        terms, df, papers = self._documents(texts)
        where, known = find_terms(self._terms, terms)
        total = self._df.copy()
        total[where[known]] -= df[known]
        live = total > 0
        self._terms, self._df = self._terms[live], total[live]
        self._papers = max(self._papers - papers, 0)

    def idf(self, words: Sequence[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) word, as `Postings.idf` weighs it."""
        values = bm25_idf(self._papers, self._terms, self._df, self.tokenizer.hashes(words))
        return dict(zip(words, (float(v) for v in values)))

    def save(self, directory: Path) -> list[str]:
        np.savez(directory / WORDS_FILE, terms=self._terms, df=self._df,
                 papers=np.array(self._papers, dtype=np.int64))
        return [WORDS_FILE]

    @classmethod
    def load(cls, directory: Path) -> WordCounts:
        with np.load(directory / WORDS_FILE, allow_pickle=False) as data:
            return cls(np.asarray(data["terms"], dtype=np.uint64),
                       np.asarray(data["df"], dtype=np.int64), int(data["papers"]))


def label_words(texts: Sequence[str], cluster: NDArray[np.integer],
                 clusters: int) -> list[tuple[str, ...]]:
    """Each cluster's most characteristic words (the map's labels, a recommendation
    group's): those whose share of the cluster's words
    most exceeds their share of the corpus, weighted by how common they are there
    (p(w|c)·log(p(w|c)/p(w))), so that words every area uses score nothing. LaTeX
    commands' names (texttt, mathbf) are no words of the texts: they are left out."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    texts = [without_markup(text) for text in texts]

    many = len(texts) >= 50
    vectorizer = CountVectorizer(stop_words=sorted(ENGLISH_STOP_WORDS | GENERIC_WORDS),
                                 token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z-]{2,}\b",
                                 min_df=2 if len(texts) >= 20 else 1, max_df=0.5 if many else 1.0)
    try:
        counts = vectorizer.fit_transform(texts)
    except ValueError:  # no word survives (empty or stop-word-only texts)
        return [() for _ in range(clusters)]
    words = vectorizer.get_feature_names_out()
    per_cluster = np.zeros((clusters, counts.shape[1]), np.float64)
    for number in range(clusters):
        rows = np.flatnonzero(cluster == number)
        if len(rows):
            per_cluster[number] = np.asarray(counts[rows].sum(axis=0)).ravel()
    p_word = per_cluster.sum(axis=0) / max(per_cluster.sum(), 1.0)
    p_in = per_cluster / np.maximum(per_cluster.sum(axis=1, keepdims=True), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(p_in > 0, p_in * np.log(p_in / np.maximum(p_word, 1e-12)), 0.0)
    return [_distinct(str(words[i]) for i in np.argsort(-row)[:4 * _LABEL_WORDS] if row[i] > 0)
            for row in scores]


def _distinct(words: Iterable[str]) -> tuple[str, ...]:
    """The first `_LABEL_WORDS` words, skipping plurals of words taken (robot, robots)."""
    chosen: list[str] = []
    for word in words:
        stem = word.removesuffix("s")
        if not any(stem == other.removesuffix("s") for other in chosen):
            chosen.append(word)
        if len(chosen) == _LABEL_WORDS:
            break
    return tuple(chosen)
