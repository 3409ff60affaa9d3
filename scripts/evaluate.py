#!/usr/bin/env python3
"""Ranking quality on labelled queries (same as `embedsearch eval`); see --help."""

from __future__ import annotations

import sys

from embedsearch.evaluation.evaluate import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
