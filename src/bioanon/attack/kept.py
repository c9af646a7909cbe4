"""Release-independent figures kept in this process, by a digest of what they depend on.

Some attackers' work depends on the candidates and the attacker's own data but not on the
release (the density ratio's reference side, the calibrated score's population side): every
setting a search judges on one split shares it. :class:`Kept` holds a few such results, least
recently used dropped first; :func:`content_key` names them by their inputs' bytes.

Examples
--------
>>> kept = Kept(size=1)
>>> a, b = content_key(np.zeros(3)), content_key(np.ones(3))
>>> kept.put(a, 1); kept.put(b, 2)
>>> kept.get(a), kept.get(b)
(None, 2)
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np


def content_key(*arrays: np.ndarray, tags: tuple[str, ...] = ()) -> str:
    """A digest of numeric arrays (dtype, shape and bytes, in order) and text tags."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}|".encode())
        h.update(a.data)
    for tag in tags:
        h.update(tag.encode())
    return h.hexdigest()


class Kept:
    """At most ``size`` results by key, the least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()

    def get(self, key: str) -> Any:
        """The result kept under ``key`` (now the most recently used), or None."""
        got = self._items.get(key)
        if got is not None:
            self._items.move_to_end(key)
        return got

    def put(self, key: str, value: Any) -> None:
        """Keep ``value`` under ``key``, dropping the least recently used beyond ``size``."""
        self._items[key] = value
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def clear(self) -> None:
        """Drop everything kept."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


__all__ = ["Kept", "content_key"]
