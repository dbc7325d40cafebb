"""Paper identity: stable, tidy ids that do not depend on run, machine or input order.

The rule, first match wins:

1. the id the record gives (``id`` field, BibTeX key), tidied;
2. its DOI, as ``doi:10.…`` (lower-case: DOIs are case-insensitive), unless it is arXiv's own
   DOI (``10.48550/arXiv.…``), which gives the arXiv form below;
3. its arXiv id, as ``arXiv:2505.00001`` (version dropped: v1 and v2 are one paper);
4. a readable slug of the title plus a short hash of the abstract,
   e.g. ``kan-ad-time-series-anomaly-detection-3f2a9c1e``.

Every id is a non-empty string without whitespace or control characters
(later stages turn ids into IRIs; they escape, but ids stay tidy).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

# New-style arXiv ids (0704.0001 onwards) and old-style ones (cs/0112017, math.GT/0309136).
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_ID = rf"(?P<id>{_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?"
# In free text (an id field, a URL, a DOI) the id must carry an arXiv marker.
_ARXIV_MARKED = re.compile(rf"(?:arxiv\.org/(?:abs|pdf)/|\barxiv:\s*|10\.48550/arxiv\.){_ARXIV_ID}", re.IGNORECASE)
# In a field that is known to hold an arXiv id (BibTeX eprint, `arxiv_id`) the bare id is enough.
_ARXIV_BARE = re.compile(rf"^\s*(?:arxiv:\s*)?{_ARXIV_ID}\s*$", re.IGNORECASE)

_DOI_PREFIX = re.compile(r"^\s*(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_IN_URL = re.compile(r"(?:dx\.)?doi\.org/(10\.\d{4,9}/\S+)", re.IGNORECASE)

# Characters never allowed in an id: C0/C1 controls and DEL (whitespace is handled separately).
_CONTROLS = dict.fromkeys([*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)])

ARXIV_DOI_PREFIX = "10.48550/arxiv."  # arXiv's own DataCite DOIs: the arXiv id form reads better
SLUG_MAX = 60
HASH_LEN = 8


def find_arxiv_id(text: str | None, *, bare: bool = False) -> str | None:
    """The arXiv id in `text` (an id, URL or DOI), without version; None if there is none.

    With ``bare=True`` the text is known to be an arXiv field, so ``2505.00001v2`` is accepted
    without an ``arXiv:`` prefix; otherwise a marker (``arXiv:``, arxiv.org URL, arXiv DOI) is required.
    """
    if not text:
        return None
    match = (_ARXIV_BARE.match(text) if bare else None) or _ARXIV_MARKED.search(text)
    return match.group("id") if match else None


def normalise_doi(value: str | None) -> str | None:
    """``https://doi.org/10.1145/ABC`` → ``10.1145/abc``; None when `value` is not a DOI."""
    if not value:
        return None
    doi = _DOI_PREFIX.sub("", value).strip().rstrip(".")
    return doi.lower() if _DOI.match(doi) else None


def doi_from_url(url: str | None) -> str | None:
    """The DOI inside a doi.org URL, if `url` is one."""
    match = _DOI_IN_URL.search(url) if url else None
    return normalise_doi(match.group(1)) if match else None


def tidy_id(value: object) -> str | None:
    """A given id made safe: NFC, controls removed, whitespace runs → ``-``; None if nothing is left."""
    if value is None or isinstance(value, bool):
        return None
    words = (word.translate(_CONTROLS) for word in unicodedata.normalize("NFC", str(value)).split())
    tidy = "-".join(word for word in words if word)
    return tidy or None


def slugify(text: str, *, max_length: int = SLUG_MAX) -> str:
    """A lower-case ASCII slug of `text`, cut at a word boundary; ``paper`` when nothing is left.

    Accents are folded (``Café`` → ``cafe``); scripts without an ASCII form drop out, which is
    why ids always carry the content hash as well.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > max_length:
        cut = slug[: max_length + 1]
        slug = cut[: cut.rfind("-")] if "-" in cut else slug[:max_length]
    return slug.strip("-") or "paper"


def content_hash(abstract: str, *, length: int = HASH_LEN) -> str:
    """A short hex digest of the (whitespace-normalised) abstract: same text, same hash, anywhere."""
    return hashlib.sha256(abstract.encode("utf-8")).hexdigest()[:length]


def paper_id(*, given: str | None, doi: str | None, arxiv_id: str | None, title: str, abstract: str) -> str:
    """Apply the identity rule in the module docstring."""
    if given:
        return given
    if doi and not (arxiv_id and doi.startswith(ARXIV_DOI_PREFIX)):
        return f"doi:{doi}"
    if arxiv_id:
        return f"arXiv:{arxiv_id}"
    return f"{slugify(title)}-{content_hash(abstract)}"
