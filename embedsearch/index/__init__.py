"""An index's life: writing it (build and every update, `writing`), following its newest
generation (`live`), checking it (`checking`), describing it (`info`) and keeping it in
step with a source (`syncing`)."""
