"""The HTTP API and web page: `create_app` builds the app over an open engine, `serve`
runs it with uvicorn. Imported only by `embedsearch serve`, so other commands stay fast."""

from __future__ import annotations

from .app import ApiError, create_app
from .serving import serve

__all__ = ["ApiError", "create_app", "serve"]
