"""The arrays of an uncompressed `.npz` file, memory-mapped where they lie.

An `.npz` is a zip archive of `.npy` members; stored uncompressed, each array's bytes
lie contiguous in the file, yet `np.load` reads an `.npz` whole. Mapping them instead
lets a segment's postings be opened without reading them: the operating system pages
in what queries touch and can drop it again, so a process serving millions of papers
does not hold every posting in its own memory.

`write_npz` writes what `np.load` reads, with each array's data aligned to 64 bytes in
the file (a padding record in the member's extra field, as Android's zipalign pads),
since NumPy copies a misaligned array before searching it. A member that is compressed,
misaligned (an archive `np.savez` wrote) or not a plain `.npy` is read, not mapped.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ALIGN", "mapped_npz", "write_npz"]

#: Where each array's data starts in a file `write_npz` writes: a multiple of this.
ALIGN = 64
#: The extra field's record that pads a member's header (zipalign's own id).
_PADDING_ID = 0xD935
#: What zipfile adds to a member's header extra when it writes it as ZIP64.
_ZIP64_EXTRA = 20

#: A zip local file header: signature, then fixed fields, the name's and extra's lengths.
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"


def mapped_npz(path: Path) -> dict[str, Any]:
    """Each array of the `.npz` at `path` by name (without ".npy"), read-only: mapped
    where it is stored uncompressed, read otherwise."""
    found: dict[str, Any] = {}
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            start = _data_start(raw, info)
            array = _mapped(path, raw, start) if start is not None else None
            if array is None:
                with archive.open(info) as member:
                    array = np.lib.format.read_array(member, allow_pickle=False)
            found[name] = array
    return found


def write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` to `path` as an uncompressed `.npz`, each array's data at a
    multiple of `ALIGN` bytes in the file, so that `mapped_npz` maps it."""
    with path.open("wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED,
                                                 allowZip64=True) as archive:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(array),
                                      allow_pickle=False)
            data = buffer.getbuffer()
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            # zipfile writes a member as ZIP64 past 1/1.05 of its limit (zipfile.open).
            zip64 = _ZIP64_EXTRA if len(data) * 1.05 > zipfile.ZIP64_LIMIT else 0
            before = (raw.tell() + _LOCAL_HEADER.size + len(info.filename.encode()) + zip64
                      + len(data) - array.nbytes)
            info.extra = _padding(-before % ALIGN)
            archive.writestr(info, data)


def _padding(size: int) -> bytes:
    """An extra-field record of `size` bytes in all (none for 0; at least 4 else)."""
    if not size:
        return b""
    size += ALIGN if size < 4 else 0
    return struct.pack("<HH", _PADDING_ID, size - 4) + bytes(size - 4)


def _data_start(raw: Any, info: zipfile.ZipInfo) -> int | None:
    """Where the stored bytes of `info` begin in the archive (None: compressed)."""
    if info.compress_type != zipfile.ZIP_STORED:
        return None
    raw.seek(info.header_offset)
    header = raw.read(_LOCAL_HEADER.size)
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_SIGNATURE:
        return None
    name_length, extra_length = fields[-2], fields[-1]
    return int(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)


def _mapped(path: Path, raw: Any, start: int) -> np.ndarray | None:
    """The `.npy` array whose bytes begin at `start`, mapped (None: not mappable)."""
    raw.seek(start)
    version = np.lib.format.read_magic(raw)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(raw)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(raw)
    else:
        return None
    if dtype.hasobject or raw.tell() % max(dtype.alignment, 1):
        return None
    if not int(np.prod(shape)):
        return np.zeros(shape, dtype)
    mapped: np.ndarray = np.memmap(path, dtype=dtype, mode="r", offset=raw.tell(), shape=shape,
                                   order="F" if fortran else "C")
    return mapped
