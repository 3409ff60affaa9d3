"""`python -m embedsearch.cli`: the same as the `embedsearch` command."""

from __future__ import annotations

import sys

from . import main

sys.exit(main())
