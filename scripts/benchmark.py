#!/usr/bin/env python3
"""Performance figures in one run: `embedsearch bench`, the same command line; see --help."""

from __future__ import annotations

import sys

from embedsearch.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
