"""Where a Zotero library lives: its data directory, and the base of its linked files.

Zotero keeps `zotero.sqlite` and `storage/` in its data directory: `~/Zotero` on every
platform unless the user chose another, which Zotero then records in its profile's
`prefs.js` (`extensions.zotero.dataDir`). Linked files may be stored relative to a
base directory, recorded there too (`extensions.zotero.baseAttachmentPath`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from ...errors import InputError

__all__ = ["DATABASE", "data_directory", "preference", "profile_prefs"]

DATABASE = "zotero.sqlite"
_PREF = re.compile(r'user_pref\("(?P<name>[^"]+)",\s*(?P<value>.+?)\);\s*$', re.MULTILINE)


def _profile_roots(home: Path) -> list[Path]:
    """Where Zotero keeps its profiles on this platform (each holds prefs.js)."""
    if sys.platform == "darwin":
        return [home / "Library" / "Application Support" / "Zotero" / "Profiles"]
    if sys.platform == "win32":
        appdata = Path(os.environ.get("APPDATA", home / "AppData" / "Roaming"))
        return [appdata / "Zotero" / "Zotero" / "Profiles"]
    return [home / ".zotero" / "zotero"]


def profile_prefs(home: Path | None = None) -> list[Path]:
    """Every profile's prefs.js, newest first."""
    home = home or Path.home()
    found = [prefs for root in _profile_roots(home) if root.is_dir()
             for prefs in root.glob("*/prefs.js")]
    return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)


def preference(prefs: Path, name: str) -> object:
    """The value `prefs.js` gives `name` (a string, number or boolean), or None."""
    try:
        text = prefs.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for match in _PREF.finditer(text):
        if match.group("name") == name:
            try:
                return json.loads(match.group("value"))
            except json.JSONDecodeError:
                return None
    return None


def _chosen(home: Path) -> Path | None:
    """The data directory a profile names, if the user moved it from the default."""
    for prefs in profile_prefs(home):
        if preference(prefs, "extensions.zotero.useDataDir") is False:
            continue
        named = preference(prefs, "extensions.zotero.dataDir")
        if isinstance(named, str) and named:
            return Path(named)
    return None


def data_directory(given: str | os.PathLike[str] | None = None, *,
                   home: Path | None = None) -> Path:
    """The Zotero data directory to read: `given` (the folder, or its zotero.sqlite),
    else the one Zotero's preferences name, else `~/Zotero`.

    Raises:
        InputError: no zotero.sqlite there, saying where it looked and how to find it.
    """
    home = home or Path.home()
    if given is not None:
        folder = Path(given).expanduser()
        folder = folder.parent if folder.name == DATABASE or folder.is_file() else folder
    else:
        folder = _chosen(home) or home / "Zotero"
    if not (folder / DATABASE).is_file():
        how = "" if given is not None else " (the default; give the folder with --zotero DIR)"
        raise InputError(f"no Zotero library here: {folder / DATABASE} does not exist{how}. "
                         "Zotero shows its data directory under Settings → Advanced → Files "
                         "and Folders", path=folder)
    return folder
