"""The connection to Milvus: one client per URI in a process, and Milvus's failures as
one-line errors of ours.

pymilvus logs every failed call with a traceback and raises exceptions that name neither
the collection nor what to do; every call goes through `Connection.call`, which says both
in one line. Milvus Lite serves in this process: its server is stopped when the last
user of its file lets go, as pymilvus never does, so another process can then open it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError, DependencyError, EmbedSearchError, IndexCorruptError
from .schema import in_list

__all__ = ["CONNECT_TIMEOUT", "Connection", "MilvusError", "is_lite", "milvus_errors"]

#: Seconds to wait for a Milvus server to answer the first time.
CONNECT_TIMEOUT = 10.0
_BATCH = 1_000  # ids or keys an `in [...]` filter lists
_ITERATOR_BATCH = 10_000
_STRONG = "Strong"
_SERVER_SCHEMES = ("http://", "https://", "tcp://")
_INSTALL = 'pip install -e ".[milvus]"'
_MISSING_CODE = 100  # Milvus's "collection not found"


class MilvusError(EmbedSearchError):
    """Milvus failed or refused an operation; says which, and where."""


def is_lite(uri: str) -> bool:
    """Whether `uri` names a Milvus Lite file (anything that is not a server address)."""
    return not uri.startswith(_SERVER_SCHEMES)


def _pymilvus() -> Any:
    """The pymilvus module, its loggers silenced: it logs every failed call with a
    traceback, and our errors already say in one line what went wrong."""
    try:
        import pymilvus
    except ImportError:
        raise DependencyError(f"the Milvus storage needs pymilvus: {_INSTALL}") from None
    for name in ("pymilvus", "pymilvus.milvus_client", "pymilvus.bulk_writer", "milvus_lite"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    return pymilvus


class Connection:
    """One MilvusClient per URI and token in this process, shared by the storages and
    views that use it; the last of them to let go closes it and, for a Lite file, stops
    Lite's in-process server, which pymilvus never does (a Lite file is held by one
    process at a time, so another process can open it only then)."""

    _open: dict[tuple[str, str], Connection] = {}
    _lock = threading.Lock()

    def __init__(self, client: Any, uri: str, token: str) -> None:
        self.client, self.uri, self._token, self._users = client, uri, token, 0

    @classmethod
    def get(cls, uri: str, token: str) -> Connection:
        """The open connection to `uri`, or a new one; one more user either way."""
        with cls._lock:
            connection = cls._open.get((uri, token))
            if connection is None:
                connection = cls._open[(uri, token)] = cls(_client(uri, token), uri, token)
            connection._users += 1
            return connection

    def acquire(self) -> Connection:
        with self._lock:
            self._users += 1
        return self

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users > 0:
                return
            del self._open[(self.uri, self._token)]
        try:
            self.client.close()
            if is_lite(self.uri):
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(self.uri)
        except Exception:  # closing what is gone already: nothing left to let go of
            pass

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """`client.method(*args, **kwargs)`, a Milvus failure as one line of ours."""
        from pymilvus.exceptions import MilvusException

        try:
            return getattr(self.client, method)(*args, **kwargs)
        except MilvusException as exc:
            named = f" of '{args[0]}'" if args and isinstance(args[0], str) else ""
            if exc.code == _MISSING_CODE:
                raise IndexCorruptError(f"the Milvus collection{named.removeprefix(' of')} "
                                        f"at {self.uri} is missing; rebuild the index") from None
            raise MilvusError(f"Milvus at {self.uri}: {method}{named} failed: "
                              f"{exc.message}") from None

    def count(self, name: str, expr: str) -> int:
        rows = self.call("query", name, filter=expr, output_fields=["count(*)"],
                         consistency_level=_STRONG)
        return int(rows[0]["count(*)"])

    def rows(self, name: str, field: str, values: Iterable[Any],
             output: list[str]) -> Iterator[dict[str, Any]]:
        """The rows whose `field` is one of `values`, with the `output` fields."""
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), _BATCH):
            expr = f"{field} in {in_list(unique[start:start + _BATCH])}"
            yield from self.call("query", name, filter=expr, output_fields=output,
                                 consistency_level=_STRONG)

    def every(self, name: str, expr: str, output: list[str]) -> Iterator[dict[str, Any]]:
        """Every row `expr` admits, in batches (a query alone returns at most 16,384)."""
        iterator = self.call("query_iterator", name, batch_size=_ITERATOR_BATCH, filter=expr,
                             output_fields=output, consistency_level=_STRONG)
        try:
            while True:
                with milvus_errors(self.uri):
                    batch = iterator.next()
                if not batch:
                    return
                yield from batch
        finally:
            iterator.close()

    def oldest(self, name: str, field: str, values: Iterable[str]) -> dict[str, int]:
        """The smallest key of each of `values` that rows have as `field`."""
        found: dict[str, int] = {}
        for row in self.rows(name, field, (v for v in values if v), ["key", field]):
            value, key = row[field], int(row["key"])
            if value not in found or key < found[value]:
                found[value] = key
        return found


def _client(uri: str, token: str) -> Any:
    """A new MilvusClient of `uri`; one line of ours if it cannot be had."""
    pymilvus = _pymilvus()
    if is_lite(uri):
        # Lite serves in this process, and grpc logs (with a traceback) each call it has
        # not implemented, which pymilvus makes and gets over while creating a collection.
        logging.getLogger("grpc._server").setLevel(logging.CRITICAL + 1)
        try:
            import milvus_lite  # noqa: F401
        except ImportError:
            raise DependencyError(f"the Milvus Lite file {uri} needs milvus-lite: "
                                  f"{_INSTALL}") from None
        if not Path(uri).parent.is_dir():
            raise ConfigurationError(f"could not open Milvus Lite at {uri}: the folder "
                                     f"{Path(uri).parent} does not exist")
    try:
        return pymilvus.MilvusClient(uri=uri, token=token, timeout=CONNECT_TIMEOUT)
    except Exception as exc:  # MilvusException, or whatever Lite's start-up raises
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        if is_lite(uri):
            raise ConfigurationError(f"could not open Milvus Lite at {uri}: {message}; is "
                                     "another process using it? (one process at a time "
                                     "can open a Lite file)") from None
        raise ConfigurationError(f"could not reach Milvus at {uri}: {message}; is the server "
                                 f"running? (a Lite file needs `{_INSTALL}`)") from None


@contextmanager
def milvus_errors(uri: str) -> Iterator[None]:
    from pymilvus.exceptions import MilvusException

    try:
        yield
    except MilvusException as exc:
        raise MilvusError(f"Milvus at {uri}: {exc.message}") from None


def quietly(connection: Connection, method: str, *args: Any, **kwargs: Any) -> None:
    """A clean-up call whose failure must not hide the error being raised (or, after a
    commit, fail a write that succeeded): it leaves an unused collection at worst."""
    try:
        connection.call(method, *args, **kwargs)
    except Exception:
        pass
