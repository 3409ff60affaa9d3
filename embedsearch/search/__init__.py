"""Searching an index: the query's candidates from the vectors and the words (`retrieval`),
their rankings fused (`fusion`), the sentence that matched (`evidence`), what a hit is
(`results`) and what a filter admits (`filters`)."""
