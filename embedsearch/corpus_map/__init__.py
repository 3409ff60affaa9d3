"""The map of a corpus: papers as points in 2D in labelled clusters (`projection`), and the
map kept with an index's generation (`attached`)."""
