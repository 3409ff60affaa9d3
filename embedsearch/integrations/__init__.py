"""Adapters that plug an open `SearchEngine` into other libraries' interfaces.

Each lives in its own module and imports its library only there, so the package never
needs them: `embedsearch.integrations.langchain` needs `pip install 'embedsearch[langchain]'`.
"""

from __future__ import annotations

__all__: list[str] = []
