"""Ranking quality: the labelled dev collection (`devset`), the metrics (`metrics`) and
`embedsearch eval`, models side by side (`evaluate`)."""
