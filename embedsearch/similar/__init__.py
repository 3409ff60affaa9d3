"""Papers like given papers: example papers matched to the index or encoded (`examples`)
and the ways a library of them ranks candidates (`recommending`)."""
