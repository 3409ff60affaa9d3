"""The exceptions every part of embedsearch raises.

Each message is written for the person at the keyboard: it names the file, line and
field at fault where there is one, and says what to do about it. The CLI prints the
message as one line; Python callers can catch the base class or a precise subclass.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = [
    "ConfigurationError",
    "DependencyError",
    "DiskSpaceError",
    "EmbedSearchError",
    "IndexCorruptError",
    "IndexBusyError",
    "IndexExistsError",
    "IndexIncompatibleError",
    "IndexNotFoundError",
    "InputError",
    "ModelError",
    "PaperNotFoundError",
    "QueryError",
    "worded",
]


class EmbedSearchError(Exception):
    """Base class of every error embedsearch raises on purpose.

    `parameter`: the argument at fault, by its Python name (`year`, `storage`), when
    one is; the CLI words it as its flag (`--year`), the server as its field.
    """

    def __init__(self, *args: object, parameter: str | None = None) -> None:
        self.parameter = parameter
        super().__init__(*args)


class InputError(EmbedSearchError):
    """A corpus file or record cannot be read; says where (file, line, record, field)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        record: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.record = record
        self.field = field
        self.reason = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or ""
        if self.line is not None:
            where += f":{self.line}"
        elif self.record is not None:
            where += f": record {self.record}"
        field = f"field '{self.field}': " if self.field else ""
        return f"{where}: {field}{self.reason}" if where else f"{field}{self.reason}"


class QueryError(EmbedSearchError, ValueError):
    """A query or its parameters are unusable (empty text, k < 1, bad filter)."""


class PaperNotFoundError(EmbedSearchError, KeyError):
    """A paper id is not in the index."""

    def __init__(self, paper_id: str, index: str | Path | None = None) -> None:
        self.paper_id = paper_id
        # Where the index is known (the command line, Python), say how to see its ids.
        where = (f" in index {index}; every hit shows its id: embedsearch search WORDS "
                 f"--index {index}" if index is not None else "")
        super().__init__(f"no paper with id '{paper_id}'{where}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class IndexNotFoundError(EmbedSearchError):
    """The index directory does not exist or holds no index."""


class IndexExistsError(EmbedSearchError):
    """A build would overwrite an existing index or directory without being told to."""


class IndexBusyError(EmbedSearchError):
    """Another process held the index's write lock for longer than the caller would wait."""

    def __init__(self, message: str, *, waited: float) -> None:
        self.waited = waited
        super().__init__(message)


class DiskSpaceError(EmbedSearchError):
    """A write needs more free disk than the index's file system has; nothing was
    written. `needed` and `free` are bytes, `path` the index directory."""

    def __init__(self, message: str, *, needed: int, free: int, path: str) -> None:
        self.needed, self.free, self.path = needed, free, path
        super().__init__(message)


class IndexCorruptError(EmbedSearchError):
    """An index file is missing, truncated or does not match its checksum."""


class IndexIncompatibleError(EmbedSearchError):
    """The index was written by another format version or for another encoder."""


class ModelError(EmbedSearchError):
    """The encoder model cannot be found or loaded."""


class ConfigurationError(EmbedSearchError):
    """Options that cannot work together or would expose an index; names the option."""


class DependencyError(EmbedSearchError):
    """A feature needs an optional package that is not installed; says which to install."""


def worded(exc: EmbedSearchError | OSError,
           spell: Callable[[str], str | None] = lambda parameter: parameter) -> str:
    """`exc`'s one-line message, led by the argument at fault as the face that took it
    spells it (`spell(parameter)`: `--year` on the command line, `year` to an AI
    assistant; None: the message alone), so that every face words an error alike."""
    message = str(exc)
    parameter = exc.parameter if isinstance(exc, EmbedSearchError) else None
    name = spell(parameter) if parameter is not None else None
    return f"{name}: {message}" if name else message
