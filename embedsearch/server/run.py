"""Running the server: open the index, load the model once, serve with uvicorn."""

from __future__ import annotations

from ..engine import SearchEngine
from .app import create_app

__all__ = ["serve"]


def serve(engine: SearchEngine, *, host: str = "127.0.0.1", port: int = 8000,
          allow_writes: bool = False, compute_map: bool = True,
          log_level: str = "info") -> None:
    """Serve `engine`'s index until interrupted (loopback only by default); closes it."""
    import uvicorn

    try:
        # Load the model now, once, so that the first request does not pay for it.
        engine.search("warm up the encoder", k=1)
        app = create_app(engine, allow_writes=allow_writes, compute_map=compute_map)
        # One process: the model and the index are loaded once and shared by the
        # request threads; the engine serialises what must not run concurrently.
        uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1)
    finally:
        engine.close()
