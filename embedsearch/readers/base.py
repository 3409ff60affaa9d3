"""What every input format shares: the reader signature, the registry, strict decoding.

A format is one module that defines a function `(path) -> Iterator[(Paper, where)]`
and registers it with `@register_format(name, extensions)`; `where` is "file:line"
(or "file: record N") so that later checks, such as duplicate ids, can point at it.
A reader of other tools' exports may also yield `Skipped` for an entry it passed over
(no abstract and no title, or malformed), which the caller reports, or refuses when
asked to be strict.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..papers import Paper

__all__ = [
    "FormatSpec",
    "Located",
    "ReadFunc",
    "Skipped",
    "SourceState",
    "compressed",
    "format_for",
    "formats",
    "iter_lines",
    "load_json",
    "read_text",
    "register_format",
    "source_name",
]

Located = tuple[Paper, str]


@dataclass(frozen=True)
class Skipped:
    """An entry a reader passed over: where it is, how to name it, and why.

    `malformed`: the entry could not be parsed (a missing brace, a truncated RIS
    entry); the rest of the file was read, unless the caller is strict. `excluded`:
    left out by rule, not for a fault (a note or an attachment of a reference
    manager's library, an item in its trash): listed by a report, never warned about.
    """

    path: Path
    line: int | None
    label: str
    reason: str
    malformed: bool = False
    excluded: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"file": str(self.path), "line": self.line, "entry": self.label,
                "reason": self.reason, "malformed": self.malformed}


ReadFunc = Callable[[Path], Iterator[Located | Skipped]]


@dataclass(frozen=True)
class FormatSpec:
    """A registered input format: its name, the extensions it claims, its reader."""

    name: str
    extensions: tuple[str, ...]
    read: ReadFunc
    description: str


_FORMATS: dict[str, FormatSpec] = {}


def register_format(
    name: str, extensions: tuple[str, ...], description: str
) -> Callable[[ReadFunc], ReadFunc]:
    """Class the decorated reader as format `name`, chosen for files with `extensions`."""

    def decorate(read: ReadFunc) -> ReadFunc:
        _FORMATS[name] = FormatSpec(name, extensions, read, description)
        return read

    return decorate


def formats() -> dict[str, FormatSpec]:
    """Every registered format by name."""
    return dict(_FORMATS)


def compressed(path: Path) -> bool:
    return path.suffix.lower() == ".gz"


def _logical_suffix(path: Path) -> str:
    """The extension that names the format: '.jsonl' for both x.jsonl and x.jsonl.gz."""
    inner = path.with_suffix("") if compressed(path) else path
    return inner.suffix.lower()


def source_name(path: Path) -> str:
    """The file's name without format extensions; the stem of derived ids."""
    name = path.name
    for _ in range(2):
        stem, dot, ext = name.rpartition(".")
        if dot and stem and ("." + ext.lower()) in _known_suffixes() | {".gz"}:
            name = stem
    return name


def _known_suffixes() -> set[str]:
    return {ext for spec in _FORMATS.values() for ext in spec.extensions}


def format_for(path: Path, override: str | None = None) -> FormatSpec:
    """The format to read `path` with: `override` if given, else by its extension."""
    if override is not None:
        try:
            return _FORMATS[override]
        except KeyError:
            known = ", ".join(sorted(_FORMATS))
            raise InputError(f"unknown format '{override}' (known: {known})") from None
    suffix = _logical_suffix(path)
    for spec in _FORMATS.values():
        if suffix in spec.extensions:
            return spec
    known = ", ".join(sorted(_known_suffixes()))
    raise InputError(
        f"cannot tell the format from the extension '{suffix or '(none)'}'; "
        f"use one of {known} (optionally .gz) or pass --format",
        path=path,
    )


def _open_binary(path: Path):  # type: ignore[no-untyped-def]
    return gzip.open(path, "rb") if compressed(path) else open(path, "rb")


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _decode(raw: bytes, path: Path, first_line: int = 1) -> str:
    """`raw` as UTF-8; an error names the line and column of the first bad byte.

    NUL bytes are refused too: UTF-16 text of plain ASCII is valid UTF-8 with a NUL
    after every letter, and would otherwise be read as garbage without a word.
    """
    if first_line == 1 and raw.startswith(_UTF16_BOMS):
        raise InputError("is UTF-16 (it starts with a UTF-16 byte-order mark); save the file "
                         "as UTF-8", path=path, line=1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + raw.count(b"\n", 0, exc.start)
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise InputError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}); "
            "save the file as UTF-8",
            path=path,
            line=line,
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        line = first_line + text.count("\n", 0, nul)
        column = nul - text.rfind("\n", 0, nul)
        raise InputError(f"holds a NUL byte (at column {column}): is it UTF-16 or a binary "
                         "file? Save it as UTF-8 text", path=path, line=line)
    return text


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, decoded strictly as UTF-8 (a BOM is dropped)."""
    try:
        with _open_binary(path) as handle:
            for number, raw in enumerate(handle, 1):
                text = _decode(raw, path, number)
                yield number, text.removeprefix("\ufeff") if number == 1 else text
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(f"not a readable gzip file ({exc})", path=path) from None


def read_text(path: Path) -> str:
    """The whole file as text, decoded strictly; errors name the offending line."""
    try:
        with _open_binary(path) as handle:
            raw = handle.read()
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(f"not a readable gzip file ({exc})", path=path) from None
    return _decode(raw, path).removeprefix("\ufeff")


def load_json(text: str, path: Path, line: int | None = None, extra_data_hint: str = "") -> object:
    """`text` parsed as JSON; every failure is an InputError naming the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = extra_data_hint if exc.msg == "Extra data" else ""
        where = exc.lineno if line is None else line
        raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno}){hint}",
                         path=path, line=where) from None
    except RecursionError:
        raise InputError("malformed JSON: nested too deeply to be a paper record",
                         path=path, line=line) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise InputError(f"malformed JSON: {exc}".split(";")[0], path=path, line=line) from None


@dataclass(frozen=True)
class SourceState:
    """A source an index mirrors (a Zotero library), as it is now: its papers without
    what is costly to read, which of the index's papers are its own, and how to
    complete papers about to be written (`index.syncing` plans a sync from it)."""

    papers: list[Paper]
    owns: Callable[[str], bool]
    complete: Callable[[Sequence[Paper]], list[Paper]] = list
