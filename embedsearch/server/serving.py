"""Running the server: open the index, load the model once, serve with uvicorn."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import SearchEngine
from ..search.retrieval import MAX_QUERY_CHARS
from .app import create_app

__all__ = ["MAX_REQUEST_HEAD_BYTES", "serve"]

#: The most bytes of a request's line and headers uvicorn reads (h11's default is 16
#: KiB): enough for GET /search to carry the longest query, MAX_QUERY_CHARS characters
#: of up to 12 bytes each percent-encoded (an emoji, %F0%9F%98%80), with its filters.
#: Measured with the default: a 20,000-character Chinese query (a 180 KB URL) was a
#: bare 400, a 20,000-character English one (20 KB) passed. The page sends a long
#: query by POST anyway, as a proxy in front may cut lines at 8 KB.
MAX_REQUEST_HEAD_BYTES = 12 * MAX_QUERY_CHARS + 16 * 1024


def serve(engine: SearchEngine, *, host: str = "127.0.0.1", port: int = 8000,
          allow_writes: bool = False, compute_map: bool = True, log_level: str = "info",
          token: str | None = None, read_token: str | None = None,
          allowed_hosts: Sequence[str] = (), cors_origins: Sequence[str] = ()) -> None:
    """Serve `engine`'s index until interrupted (loopback only by default); closes it.

    The address listened on is a Host name the server answers to (unless a wildcard),
    besides the loopback names and `allowed_hosts`.
    """
    import uvicorn

    try:
        app = create_app(engine, allow_writes=allow_writes, compute_map=compute_map,
                         token=token, read_token=read_token,
                         allowed_hosts=[host, *allowed_hosts], cors_origins=cors_origins)
        # Load the model now, once, so that the first request does not pay for it.
        engine.search("warm up the encoder", k=1)
        # Searches are answered by one batching thread: were it to read each newer
        # generation itself, every query would wait the second that takes at 85k papers.
        engine.follow_in_background()
        # One process: the model and the index are loaded once and shared by the
        # request threads; the engine serialises what must not run concurrently.
        uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1,
                    h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES)
    finally:
        engine.close()
