"""Evidence: the sentence of a hit's abstract that best matches the query, and why.

Computed for the returned hits only. A sentence's score is the summed BM25 idf of the
distinct query words it contains (stemmed like the lexical index); the words that
matched are returned for highlighting. The best three hits that share no word with the
query (purely semantic matches) get the sentence closest to the query vector instead,
their sentences encoded in one batch; further such hits get their first sentence.
Encoding sentences is the one costly step: measured here, 80 sentences (ten word-less
hits) took 30 ms, 24 (three hits) 10 ms.

Function words ("we", "which", "across": `words.FUNCTION_WORDS`) are never evidence nor
highlighted, whatever the query. For papers like given papers (`shared=True`, what
`similar` asks) the "query" is the examples' whole text, and a query as long as a
passage (more than `PASSAGE_WORDS` distinct words: a pasted abstract) is read the same
way: its words are filtered to content words first: a word counts when at most
`MAX_SHARED_DF` of the index's papers hold it (the field's boilerplate, "we", "model",
"propose", is in more) and it is not in `BOILERPLATE`, the words that small indexes
cannot tell apart by frequency. The hit's terms are then the content words both papers
share, rarest first.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from ..papers import split_sentences
from ..text.words import BOILERPLATE, FUNCTION_WORDS, WordStatistics

__all__ = ["MAX_SHARED_DF", "PASSAGE_WORDS", "SEMANTIC_HITS", "Evidence", "content_words",
           "find_evidence", "is_passage"]

SEMANTIC_HITS = 3
#: The largest share of the index's papers a word may occur in and still be evidence
#: that two papers are alike (at least `MIN_COMMON` papers, so that on a small index a
#: word is not dropped for being in a few). On the 79.5k dev papers 0.1 keeps "graph"
#: (6.5%) and "language" (7.2%) and drops "neural" (13%), "model" (48%), "we" (83%).
MAX_SHARED_DF = 0.1
MIN_COMMON = 10
#: A query of more distinct words (stems, stopwords out) than this is a passage, its
#: words weighed as an example paper's. Measured on the dev data: of the one-sentence
#: summaries (683 tldr queries) the 99th percentile has 27 distinct words and the longest
#: 30, titles at most 18; of the abstracts (every 20th of 79,509) the 1st percentile has
#: 35 and the median 78.
PASSAGE_WORDS = 30
_MAX_COUNT = 3
# Of a sentence's shared words, those weighing at least this share of the heaviest are
# highlighted: a word the examples mention once in passing adds to the sentence's score
# but would mostly distract as a highlight.
_SHOWN = 0.5


@dataclass(frozen=True)
class Evidence:
    """A sentence of the abstract and the words of it that match the query."""

    sentence: str
    terms: tuple[str, ...]


@cache
def _boilerplate_stems() -> frozenset[str]:
    from ..text.words import Tokenizer

    return frozenset(Tokenizer().words(" ".join(sorted(BOILERPLATE))))


def _common_idf(papers: int) -> float:
    """The BM25 idf (Lucene's, as `Postings.idf`) of a word in the most papers the
    frequency rule allows: a word of lower idf is too common to be evidence."""
    df = max(MIN_COMMON, MAX_SHARED_DF * papers)
    return math.log1p(max(papers - df + 0.5, 0.0) / (df + 0.5))


def content_words(text: str, lexical: WordStatistics) -> dict[str, float]:
    """The stems of `text` that can show a paper like it, each with its weight: its idf
    times its count in `text` (up to `_MAX_COUNT`), as a word the examples repeat is
    their topic, and one they mention once in passing mostly is not. Boilerplate,
    numbers and words in too many of the index's papers are left out."""
    counts = Counter(stem for stem in lexical.tokenizer.words(text)
                     if not stem.isdigit() and stem not in _boilerplate_stems())
    idf = lexical.idf(sorted(counts))
    limit = _common_idf(len(lexical))
    return {stem: value * min(counts[stem], _MAX_COUNT) for stem, value in idf.items()
            if value > limit}


def is_passage(text: str, lexical: WordStatistics, limit: int = PASSAGE_WORDS) -> bool:
    """Whether a query is as long as a passage: more than `limit` distinct words."""
    return len(set(lexical.tokenizer.words(text))) > limit


def _query_words(text: str, lexical: WordStatistics) -> dict[str, float]:
    """The idf of each stem of a query's words, function words left out."""
    [surface] = lexical.tokenizer.surface([text])
    return lexical.idf(sorted({stem for written, stem in surface
                               if written.lower() not in FUNCTION_WORDS}))


def _lexical(sentences: Sequence[str], words: Sequence[list[tuple[str, str]]],
             idf: dict[str, float], shared: bool) -> Evidence | None:
    """The sentence whose words (as written, stem) among `idf`'s weigh most; a function
    word is never one of them, whatever its stem ("own" is "owned"'s)."""
    best, best_score = None, 0.0
    for sentence, surface in zip(sentences, words):
        matched = [(written, stem) for written, stem in surface
                   if stem in idf and written.lower() not in FUNCTION_WORDS]
        score = sum(idf[stem] for stem in {stem for _, stem in matched})
        if score > best_score:
            if shared:  # the words that carry the match, heaviest first
                top = max(idf[stem] for _, stem in matched)
                matched = [pair for pair in matched if idf[pair[1]] >= _SHOWN * top]
                matched.sort(key=lambda pair: -idf[pair[1]])  # stable: ties in text order
            terms = tuple(dict.fromkeys(written for written, _ in matched))
            best, best_score = Evidence(sentence, terms), score
    return best


def find_evidence(abstracts: Sequence[str], query_text: str, lexical: WordStatistics,
                  query_vector: NDArray[np.float32] | None,
                  encode: Callable[[list[str]], NDArray[np.float32]], *,
                  shared: bool = False) -> list[Evidence]:
    """Evidence for each abstract: lexical where words match, else semantic.

    `shared`: `query_text` is the text of example papers, and the words that count are
    their content words (`content_words`) that the abstract shares; so they are for a
    query as long as a passage (`is_passage`).
    """
    shared = shared or is_passage(query_text, lexical)
    idf = (content_words(query_text, lexical) if shared
           else _query_words(query_text, lexical))
    sentences = [split_sentences(abstract) or [abstract] for abstract in abstracts]
    words = iter(lexical.tokenizer.surface([s for group in sentences for s in group]))
    found = [_lexical(group, [next(words) for _ in group], idf, shared) for group in sentences]
    missing = [i for i, item in enumerate(found) if item is None][:SEMANTIC_HITS]
    if missing and query_vector is not None:
        flat = [sentence for i in missing for sentence in sentences[i]]
        scores = encode(flat) @ query_vector
        start = 0
        for i in missing:
            best = int(np.argmax(scores[start : start + len(sentences[i])]))
            found[i] = Evidence(sentences[i][best], ())
            start += len(sentences[i])
    return [item or Evidence(group[0], ()) for item, group in zip(found, sentences)]
