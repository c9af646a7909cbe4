"""The one place where the bucketed writer learns the release policy (columns and manifest).

The release policy (column roles, dropped columns, the manifest's column list) is the
in-memory release's, :mod:`bioanon.release`; the bucketed writer
(:func:`bioanon.scale.bucketed.bucketed_release`) only obeys what this function returns.
Kept and quasi-identifying columns are not offered on the dask path (their join check reads
the labels in memory), so every released label column here has a role the user gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..release import Roles, manifest_columns, resolve_roles


def release_plan(label_columns: Sequence[str], interest: str | None,
                 additional: Sequence[str], sensitive: str | None,
                 keep_sensitive: bool = False,
                 identifying: Sequence[str] = ()) -> tuple[list[str], dict[str, Any]]:
    """Label columns to release and the manifest's column roles.

    Returns ``(released_columns, {"columns": [...], "dropped": [...]})`` (``columns`` in the
    manifest's one shape, :func:`bioanon.release.manifest_columns`): the
    interest and additional columns are released, the sensitive one only with
    ``keep_sensitive``; identifying and unnamed columns are dropped.

    Examples
    --------
    >>> release_plan(["digit", "speaker", "file"], "digit", [], "speaker")[0]
    ['digit']
    """
    if sensitive is None:
        raise ValueError("the release policy needs the sensitive column")
    roles = Roles(sensitive=sensitive, interest=interest, additional=list(additional),
                  identifying=[c for c in identifying if c in label_columns])
    plan = resolve_roles(label_columns, roles, keep_sensitive=keep_sensitive)
    return plan.released, {"columns": manifest_columns(plan), "dropped": plan.dropped}
