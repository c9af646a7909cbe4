"""The 95% interval of a rate shown in a report: the one the report carries, else Wilson's.

Every rate in the HTML report is printed with an interval. Attack results carry theirs
(``ci``); utility accuracies may carry one per view (``ci`` as ``{view: [lo, hi]}`` or a
``{view}_ci`` key); otherwise the Wilson score interval is computed from the rate and the
number of records it was scored on (``n``, else the held-out split's size).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..metrics.scores import wilson_interval

__all__ = ["rate_interval"]


def rate_interval(rate: float | None, n: int | None,
                  given: Sequence[float] | None = None) -> tuple[float, float] | None:
    """``given`` when present, else Wilson's interval for ``rate`` measured on ``n`` records.

    Examples
    --------
    >>> [round(v, 3) for v in rate_interval(0.8, 10)]
    [0.49, 0.943]
    >>> rate_interval(0.5, None) is None, rate_interval(float("nan"), 10) is None
    (True, True)
    """
    if given is not None and len(given) == 2:
        try:
            lo, hi = float(given[0]), float(given[1])
        except (TypeError, ValueError):  # None, NA: no interval given
            lo = hi = math.nan
        if math.isfinite(lo) and math.isfinite(hi):
            return lo, hi
    try:  # no rate (None, NaN, not a number) or no count: no interval
        value, count = float(rate), int(n or 0)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or count <= 0:
        return None
    return wilson_interval(int(round(value * count)), count)


def view_interval(entry: Mapping[str, Any], view: str, n: int | None
                  ) -> tuple[float, float] | None:
    """Interval of one utility view (``clear``, ``anonymized_to_clear``, ...) of an entry."""
    ci = entry.get("ci")
    given = ci.get(view) if isinstance(ci, Mapping) else entry.get(f"{view}_ci")
    return rate_interval(entry.get(view), entry.get("n", n), given)
