#!/usr/bin/env python3
"""Ranking quality on labelled queries: `embedsearch eval`, the same command line; see --help."""

from __future__ import annotations

import sys

from embedsearch.cli import main

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
