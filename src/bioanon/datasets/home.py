"""Where real datasets live: ``$BIOANON_DATA`` (default ``~/bioanon_data``)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BioanonError


def data_home(path: str | os.PathLike | None = None) -> Path:
    """The data home: ``path`` if given, else ``$BIOANON_DATA``, else ``~/bioanon_data``."""
    return Path(path or os.environ.get("BIOANON_DATA") or Path.home() / "bioanon_data")


def dataset_dir(name: str, root: str | os.PathLike | None = None) -> Path:
    """Folder of one dataset under the data home, checked to exist."""
    folder = data_home(root) / name
    if not folder.is_dir():
        raise BioanonError(
            f"dataset folder '{folder}' not found; set BIOANON_DATA to the folder holding "
            f"'{name}/' or pass root=..."
        )
    return folder
