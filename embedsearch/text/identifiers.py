"""DOIs and arXiv ids: written many ways, compared in one.

A bibliography names a paper by DOI (`10.1000/XYZ`, `doi:…`, `https://doi.org/…`) or by
arXiv id (`2401.01234v2`, `arXiv:2401.01234`, `https://arxiv.org/abs/…`, the old
`hep-th/9901001`); matching a bibliography to an index compares them normalised: a DOI
bare and lower-cased (DOIs are case-insensitive), an arXiv id bare and without its
version (any version is the same paper).
"""

from __future__ import annotations

import re

__all__ = ["identifiers_in_url", "normalise_arxiv_id", "normalise_doi"]

_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_ARXIV = re.compile(
    r"^(?:https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/|arxiv:\s*)?"
    r"(\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?/?$",
    re.IGNORECASE)


def normalise_doi(text: str) -> str:
    """The DOI in `text` (bare, a doi: prefix or a doi.org URL), lower-cased; '' if none."""
    match = _DOI.match(text.strip())
    return match.group(1).lower().rstrip(".") if match else ""


def normalise_arxiv_id(text: str) -> str:
    """The arXiv id in `text` (bare, arXiv:…, an abs or pdf URL) without its version;
    old-style ids keep their archive in lower case; '' if none."""
    match = _ARXIV.match(text.strip())
    if not match:
        return ""
    found = match.group(1)
    return found.lower() if "/" in found else found


def identifiers_in_url(url: str) -> tuple[str, str]:
    """(DOI, arXiv id) a paper's URL gives, each '' when it gives none."""
    return normalise_doi(url), normalise_arxiv_id(url)
