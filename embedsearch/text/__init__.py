"""What every part does to text: LaTeX markup read as text (`latex`) and a title or an
abstract as the plain words it prints (`markup`).

Part of the shared vocabulary with `papers` and `errors`: readers, exports, the map's
labels and the command line use it, and it imports nothing of ours above it.
"""

from __future__ import annotations

from .latex import latex_to_text
from .markup import plain_text, without_markup

__all__ = ["latex_to_text", "plain_text", "without_markup"]
