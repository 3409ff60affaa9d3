#!/usr/bin/env python3
"""Performance figures in one run (same as `embedsearch bench`); see --help."""

from __future__ import annotations

import sys

from embedsearch.benchmark import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
