"""Searching an index: the query's candidates from the vectors and the words (`retrieval`),
their rankings fused (`fusion`), the sentence that matched (`evidence`) and what a hit
is (`results`). What a search may be restricted to (`embedsearch.filters`) is vocabulary
every storage shares, so it lives at the root."""
