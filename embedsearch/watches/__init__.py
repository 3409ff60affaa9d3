"""Saved searches and what they bring: the watches kept with an index (`saved`), a digest
of what the index received since (`digests`), and the forms people read it in: Atom,
text (`feeds`) and HTML mail (`mails`)."""
