"""The one place where the bucketed writer learns the release policy (columns and manifest).

The release policy (column roles, dropped columns, the join check, the manifest's contents) is
the in-memory release's (``bioanon.release`` once it lands). This small function is the wiring:
it returns the label columns to release and the manifest fields, and the bucketed writer
(:func:`bioanon.scale.bucketed.bucketed_release`) only obeys them. At merge it should call the
release module instead of repeating today's rule below.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def release_plan(label_columns: Sequence[str], interest: str | None,
                 additional: Sequence[str], sensitive: str | None,
                 keep_sensitive: bool = False,
                 kept: Sequence[str] = ()) -> tuple[list[str], dict[str, Any]]:
    """Label columns to release and the roles to list in the manifest.

    Today's rule (that of ``bioanon anonymize``): the interest, additional and kept columns
    are released; the sensitive column only with ``keep_sensitive``; every other label column
    (unnamed) is dropped. Returns ``(released_columns, {"columns": {name: role}})``.
    """
    roles: dict[str, str] = {}
    for c in label_columns:
        roles[c] = "dropped"
    if interest:
        roles[interest] = "interest"
    for c in additional:
        roles[c] = "additional"
    for c in kept:
        roles[c] = "kept"
    if sensitive:
        roles[sensitive] = "sensitive" if keep_sensitive else "dropped"
    released = [c for c in label_columns if roles.get(c) != "dropped"]
    return released, {"columns": roles}
