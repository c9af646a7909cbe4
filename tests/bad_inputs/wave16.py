"""Cases of wave 16: a motion stream's row of another width than its header, kept fixed here.

Before the fix, ``extract motion`` read a stream with a row cut short (a line broken in two)
as NaN sensor values and refused it as "the stream has 1 sensor value(s) that are NaN, inf or
beyond 32-bit floats ... clean or drop those rows": advice to clean values the file never
held (or, its time cut off under ``--rate``, "time column ... has 1 empty or infinite
value(s) ... fill or drop those rows"). A row of more
fields than its header was refused in pandas' words ("Error tokenizing data. C error:
Expected 4 fields in line 9, saw 6"), without the fix. A table read by ``anonymize`` names
both rows by their line and width already; a stream now says the same. A row whose last
value is empty, its commas kept, is a complete row: its missing value is refused as before,
and a short row the windows never read is not looked for.
"""

from __future__ import annotations

from .cases import Case
from .wave10 import _motion, _stream


def _lines(edit: int, how: str, time_last: bool = False) -> str:
    """The text of a stream of 400 rows (timestamp, x_acc, y_acc; ``time_last``: the
    timestamp last) whose line ``edit`` (1: the header) is cut to its first field
    (``short``), given two more (``long``) or its last value emptied with its comma kept
    (``empty``)."""
    frame = _stream()
    if time_last:
        frame = frame[["x_acc", "y_acc", "timestamp"]]
    lines = frame.to_csv(index=False).splitlines()
    fields = lines[edit - 1].split(",")
    lines[edit - 1] = {"short": fields[0], "long": ",".join([*fields, "1", "2"]),
                       "empty": ",".join([*fields[:-1], ""])}[how]
    return "\n".join(lines) + "\n"


def wave16_cases() -> list[Case]:
    cut = "line 9 of 's1.csv' holds 1 fields where its header names 3: a row cut short"
    return [
        Case("extract-motion-stream-row-cut-short",
             lambda d: _motion(d, _lines(9, "short")), says=cut),
        Case("extract-motion-stream-row-cut-short-with-rate",
             lambda d: _motion(d, _lines(9, "short", time_last=True), "--rate", "50"),
             says=cut),
        Case("extract-motion-stream-row-of-more-fields",
             lambda d: _motion(d, _lines(9, "long")),
             says="line 9 of 's1.csv' holds 5 fields where its header names 3: a value "
                  "holding a comma without quotes"),
        # a complete row whose last value is empty: the missing value itself is refused
        Case("extract-motion-stream-row-with-an-empty-last-value",
             lambda d: _motion(d, _lines(9, "empty")),
             says="sensor value(s) that are NaN, inf or beyond 32-bit floats"),
    ]
