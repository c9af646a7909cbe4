"""Where real datasets live: ``$BIOANON_DATA``, else the first of ``~/bioanon_data`` and
``../shared/datasets`` (beside a checkout, where ``make test`` looks) that exists."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BioanonError

#: where the data home is looked for when ``$BIOANON_DATA`` is not set, in order
DEFAULT_HOMES = (Path("~/bioanon_data"), Path("../shared/datasets"))


def data_home(path: str | os.PathLike | None = None) -> Path:
    """The data home: ``path`` if given, else ``$BIOANON_DATA``, else the first of
    :data:`DEFAULT_HOMES` that is a folder (``~/bioanon_data`` when none is)."""
    if path or os.environ.get("BIOANON_DATA"):
        return Path(path or os.environ["BIOANON_DATA"])
    for home in DEFAULT_HOMES:
        if home.expanduser().is_dir():
            return home.expanduser()
    return DEFAULT_HOMES[0].expanduser()


def missing_home(home: Path) -> BioanonError:
    """The one-line error for a data home that does not exist, saying where bioanon looked."""
    if os.environ.get("BIOANON_DATA"):
        found = "is a file, not a folder" if home.exists() else "not found"
        where = f"data home '{home}' (from BIOANON_DATA) {found}"
    else:
        where = ("no data home found: BIOANON_DATA is not set and none of "
                 f"{', '.join(str(h) for h in DEFAULT_HOMES)} exists")
    return BioanonError(f"{where}; set BIOANON_DATA to the folder holding the datasets "
                        "(e.g. fsdd/, yale_faces/)")


def dataset_dir(name: str, root: str | os.PathLike | None = None) -> Path:
    """Folder of one dataset under the data home, checked to exist."""
    folder = data_home(root) / name
    if not folder.is_dir():
        raise BioanonError(
            f"dataset folder '{folder}' not found; set BIOANON_DATA to the folder holding "
            f"'{name}/' or pass root=..."
        )
    return folder
