"""Give memory back between a build's stages.

Python frees objects as their last reference goes, but keeps the freed blocks for itself, and
glibc's malloc keeps freed heap pages in the process too: a build that has let go of a few GB of
mentions still shows them in its resident size when the SPARQL store's bulk loader (Rust, the
same malloc) asks for more. `release_memory` collects cycles and asks malloc to return free
pages to the system (``malloc_trim``, glibc only; elsewhere only the collection runs).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS, Windows)
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_memory() -> None:
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
