"""The 95% interval of a rate shown in a report: the one the report carries, else Wilson's.

Every rate in the HTML report is printed with an interval. Attack results carry theirs
(``ci``); utility accuracies may carry one per view (``ci`` as ``{view: [lo, hi]}`` or a
``{view}_ci`` key); otherwise the Wilson score interval is computed from the rate and the
number of records it was scored on (``n``, else the held-out split's size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..metrics.intervals import rate_interval

__all__ = ["rate_interval", "view_interval"]


def view_interval(entry: Mapping[str, Any], view: str, n: int | None
                  ) -> tuple[float, float] | None:
    """Interval of one utility view (``clear``, ``anonymized_to_clear``, ...) of an entry."""
    ci = entry.get("ci")
    given = ci.get(view) if isinstance(ci, Mapping) else entry.get(f"{view}_ci")
    return rate_interval(entry.get(view), entry.get("n", n), given)
