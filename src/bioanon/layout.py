"""A declared feature layout: which columns form which trajectories (``--layout``, ``layout=``).

A method with a stated temporal basis (``dp-cells``' DCT of each trajectory) needs to know
which features are one quantity over time. bioanon's own extractors name them
``NAME_t0 … NAME_t{L-1}``; a table from another pipeline (``f0 … f399``) says nothing, so its
owner states the layout:

``GROUP+GROUP+…`` in column order, each ``GROUP`` either ``TRACKSxSTEPS`` (``TRACKS``
trajectories of ``STEPS`` consecutive features each: track 0's steps first) or ``COUNT``
(``COUNT`` features outside any trajectory). The groups must cover every feature exactly.

- ``20x16`` — 320 features: 20 tracks of 16 steps;
- ``20x16+80`` — those 320, then 80 features outside any trajectory (summary statistics);
- ``40x10`` — bioanon's FSDD features (20 MFCC and 20 delta tracks of 10 steps).

The layout is public (a description of the columns, no record enters it): it is written in
the manifest and the report, and the model-aware attacker rebuilds the basis from it.
Checked here, in one place (:func:`parse_layout`), with one-line errors.
The temporal DCT of the trajectories is built here too, from public knowledge alone
(:func:`dct_basis`, :func:`layout_dct_basis`, :func:`public_dct_basis`; which trajectories
a table has: :func:`resolve_layout`, or from ``NAME_tK`` names :func:`trajectory_length`).

Examples
--------
>>> lay = parse_layout("20x16+80", 400)
>>> lay.text, lay.n_features, lay.n_trajectories
('20x16+80', 400, 20)
>>> parse_layout("20x16", 400)
Traceback (most recent call last):
...
bioanon.errors.BioanonError: layout '20x16' lays out 320 features but the table has 400; \
add the 80 features outside any trajectory as a group (20x16+80) or fix the counts
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import BioanonError

#: the grammar in words (help texts, errors)
GRAMMAR = ("groups joined by '+' in column order, each TRACKSxSTEPS (trajectories of STEPS "
           "consecutive features) or COUNT (features outside any trajectory), e.g. 20x16 or "
           "20x16+80")
_GROUP = re.compile(r"^(\d+)(?:x(\d+))?$")
#: the table meta key a declared layout is kept under (its canonical text)
META_KEY = "layout"


@dataclass(frozen=True)
class Layout:
    """A parsed layout: ``groups`` of (tracks, steps) in column order (steps 1: features
    outside any trajectory)."""

    groups: tuple[tuple[int, int], ...]

    @property
    def n_features(self) -> int:
        return int(sum(t * s for t, s in self.groups))

    @property
    def n_trajectories(self) -> int:
        """Trajectories of two steps or more."""
        return int(sum(t for t, s in self.groups if s > 1))

    @property
    def text(self) -> str:
        """The canonical text (``20x16+80``)."""
        return "+".join(f"{t}x{s}" if s > 1 else str(t) for t, s in self.groups)

    def describe(self) -> str:
        """The layout in words."""
        parts = [f"{t} trajectories of {s} steps" if s > 1 else f"{t} features outside any "
                 "trajectory" for t, s in self.groups]
        return f"{', then '.join(parts)} (layout {self.text})"

    def segments(self) -> list[tuple[int, int]]:
        """(start column, steps) of every trajectory and every lone feature, in order."""
        out, start = [], 0
        for tracks, steps in self.groups:
            for _ in range(tracks):  # a loop over trajectories (tens), never over records
                out.append((start, steps))
                start += steps
        return out


def parse_layout(value: Any, n_features: int | None = None) -> Layout:
    """Parse and check a layout (text, or a :class:`Layout`) against ``n_features``.

    >>> parse_layout(" 40x10 ").text, parse_layout("10+2x5", 20).groups
    ('40x10', ((10, 1), (2, 5)))
    >>> parse_layout("20by16")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: layout '20by16' is not a layout: write groups joined by \
'+' in column order, each TRACKSxSTEPS (trajectories of STEPS consecutive features) or COUNT \
(features outside any trajectory), e.g. 20x16 or 20x16+80
    """
    if isinstance(value, Layout):
        lay = value
        text = value.text
    else:
        text = str(value).strip()
        groups = []
        for part in text.lower().replace(" ", "").split("+"):
            m = _GROUP.match(part)
            if m is None:
                raise BioanonError(f"layout '{text}' is not a layout: write {GRAMMAR}",
                                   parameter="layout")
            tracks, steps = int(m.group(1)), int(m.group(2) or 1)
            if tracks < 1 or steps < 1:
                raise BioanonError(f"layout '{text}': the group '{part}' must count at "
                                   "least 1 track of at least 1 step", parameter="layout")
            groups.append((tracks, steps))
        lay = Layout(tuple(groups))
    if n_features is not None and lay.n_features != int(n_features):
        d, k = int(n_features), lay.n_features
        fix = (f"add the {d - k} features outside any trajectory as a group "
               f"({lay.text}+{d - k}) or fix the counts" if k < d else
               f"it names {k - d} more than there are; fix the counts")
        raise BioanonError(f"layout '{text}' lays out {k} features but the table has {d}; "
                           f"{fix}", parameter="layout")
    return lay


def table_layout(table: Any) -> Layout | None:
    """The layout a table declares (its meta), or None."""
    meta = getattr(table, "meta", None) or {}
    text = meta.get(META_KEY)
    return None if text is None else parse_layout(text, int(table.X.shape[1]))


def reads_layout(anonymizer: Any) -> bool:
    """Whether a method (an estimator, or a method class) reads a declared layout: it has a
    ``layout`` parameter, or it is a composition whose first method has one."""
    if isinstance(anonymizer, type):
        params: Any = getattr(anonymizer, "params", {})
    else:
        params = anonymizer.get_params(deep=False) if hasattr(anonymizer, "get_params") else {}
    if "layout" in params:
        return True
    inner = params.get("method") if isinstance(params, dict) else None
    return inner is not None and not isinstance(inner, str) and reads_layout(inner)


def refuse_unread_layout(anonymizer: Any, layout: Any) -> None:
    """Refuse a declared ``layout`` for a method that reads none (one without a ``layout``
    parameter): declared there, it would change nothing.

    >>> from bioanon.anonymize import SelectiveMeanAnonymizer
    >>> from bioanon.anonymize.dp_cells import DPCellsAnonymizer
    >>> refuse_unread_layout(DPCellsAnonymizer(), "4x8")
    >>> try:
    ...     refuse_unread_layout(SelectiveMeanAnonymizer(), "4x8")
    ... except BioanonError as exc:
    ...     print(str(exc).split(":")[0])
    layout=4x8 has no effect with method 'selective-mean'
    """
    if layout is None or reads_layout(anonymizer):
        return
    name = getattr(anonymizer, "method_name", "") or type(anonymizer).__name__
    raise BioanonError(f"layout={layout} has no effect with method '{name}': a layout states "
                       "the trajectories a stated basis reads (dp-cells' temporal DCT), and "
                       "this method reads none; leave it out", parameter="layout")


def with_layout(table: Any, layout: Any) -> Any:
    """``table`` declaring ``layout`` (checked against its features); None: unchanged."""
    if layout is None:
        return table
    lay = parse_layout(layout, int(table.X.shape[1]))
    return table.with_features(table.X, **{META_KEY: lay.text})


def layout_dct_basis(layout: Layout, keep: int | None = None) -> np.ndarray:
    """The stated basis (k, d) of a layout: each trajectory's first ``keep`` orthonormal
    DCT-II rows (all when None), each lone feature as it is. Orthonormal rows.

    >>> P = layout_dct_basis(parse_layout("2x4+1"), keep=2)
    >>> P.shape, bool(np.allclose(P @ P.T, np.eye(5)))
    ((5, 9), True)
    """
    from scipy.fft import dct

    d = layout.n_features
    rows: list[np.ndarray] = []
    for start, steps in layout.segments():
        q = steps if keep is None else min(int(keep), steps)
        T = dct(np.eye(steps), norm="ortho", axis=0)[:q]
        block = np.zeros((q, d))
        block[:, start:start + steps] = T
        rows.append(block)
    return np.vstack(rows)


def dct_basis(d: int, block: int | None = None, keep: int | None = None) -> np.ndarray:
    """The stated temporal-DCT basis (k, d): for each of the d / ``block`` consecutive
    trajectories of ``block`` features, the first ``keep`` orthonormal DCT-II rows (all when
    None); ``block`` None treats the d features as one trajectory. Rows are ordered by
    trajectory, then frequency; orthonormal.

    Raises :class:`BioanonError` when ``block`` does not divide d.

    Examples
    --------
    >>> P = dct_basis(4, block=2)
    >>> P.round(3).tolist()[0]
    [0.707, 0.707, 0.0, 0.0]
    >>> dct_basis(6, block=4)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: block=4 does not divide the 6 features into trajectories; \
give the number of time steps of each trajectory (a divisor of 6) or block=none
    """
    from scipy.fft import dct

    L = d if block is None else int(block)
    if L < 1 or d % L:
        raise BioanonError(f"block={block} does not divide the {d} features into "
                           f"trajectories; give the number of time steps of each trajectory "
                           f"(a divisor of {d}) or block=none")
    q = L if keep is None else min(int(keep), L)
    T = dct(np.eye(L), norm="ortho", axis=0)[:q]  # (q, L): row f is frequency f
    blocks = d // L
    P = np.zeros((blocks * q, d))
    for j in range(blocks):  # a loop over trajectories (tens), never over records
        P[j * q:(j + 1) * q, j * L:(j + 1) * L] = T
    return P


_STEP_NAME = re.compile(r"^(.+)_t(\d+)$")


def trajectory_length(names: Sequence[str] | None) -> int | None:
    """The number of time steps of the trajectories the feature names lay out, or None.

    Trajectories are runs of consecutive features named ``PREFIX_t0 … PREFIX_t{L-1}`` (one
    prefix per run, the same L for every run), as :mod:`bioanon.features.voice` names its
    MFCC tracks; anything else has no trajectory layout.

    Examples
    --------
    >>> trajectory_length(["c0_t0", "c0_t1", "c0_t2", "c1_t0", "c1_t1", "c1_t2"])
    3
    >>> trajectory_length(["a", "b"]) is None, trajectory_length(["c0_t0", "c0_t2"]) is None
    (True, True)
    """
    if not names:
        return None
    parsed = [_STEP_NAME.match(str(n)) for n in names]
    if not all(parsed):
        return None
    steps = np.array([int(m.group(2)) for m in parsed if m is not None])
    prefixes = [m.group(1) for m in parsed if m is not None]
    L = int(np.flatnonzero(steps == 0)[1]) if np.count_nonzero(steps == 0) > 1 else steps.size
    if L < 2 or steps.size % L:
        return None
    runs = steps.reshape(-1, L)
    same = all(len(set(prefixes[i * L:(i + 1) * L])) == 1 for i in range(runs.shape[0]))
    return L if same and bool(np.all(runs == np.arange(L))) else None


def public_dct_basis(feature_names: Sequence[str] | None, d: int, *, block: int | None = None,
                     keep: int | None = None, layout: str | None = None) -> np.ndarray:
    """The (k, d) basis of ``basis="dct"`` from public knowledge alone — the feature names, d,
    ``block``, the declared ``layout`` (:mod:`bioanon.layout`) and ``keep`` — as the attacker
    rebuilds it (:attr:`ReleaseModel.public_basis`): the temporal DCT of the trajectories
    ``block``, the layout or the names lay out, else the identity.

    Examples
    --------
    >>> public_dct_basis(["a_t0", "a_t1", "a_t2", "b_t0", "b_t1", "b_t2"], 6, keep=2).shape
    (4, 6)
    >>> public_dct_basis(["x", "y"], 2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> public_dct_basis(["f0", "f1", "f2", "f3", "f4"], 5, keep=1, layout="2x2+1").shape
    (3, 5)
    """
    lay = resolve_layout(feature_names, d, block=block, layout=layout)
    return np.eye(d) if lay is None else layout_dct_basis(lay, keep)


def resolve_layout(feature_names: Sequence[str] | None, d: int, *, block: int | None = None,
                   layout: Any = None) -> Layout | None:
    """The trajectories ``basis="dct"`` acts on: ``block`` (every feature, runs of ``block``),
    else the declared ``layout``, else the one the feature names lay out (``NAME_tK``); None
    when there is no trajectory of two steps or more (the identity basis is used).

    >>> resolve_layout(["f0", "f1", "f2", "f3"], 4) is None
    True
    >>> resolve_layout(["f0", "f1", "f2", "f3"], 4, layout="2x2").text
    '2x2'
    """
    if block is not None:
        lay: Layout | None = Layout(((d // int(block), int(block)),)) if d % int(block) == 0 \
            else None
    elif layout is not None:
        lay = parse_layout(layout, d)
    else:
        L = trajectory_length(None if feature_names is None else [str(n) for n in feature_names])
        lay = None if L is None or d % L else Layout(((d // L, L),))
    return lay if lay is not None and lay.n_trajectories else None


__all__ = ["dct_basis", "public_dct_basis", "reads_layout", "refuse_unread_layout",
           "resolve_layout", "trajectory_length", "GRAMMAR", "META_KEY", "Layout",
           "layout_dct_basis", "parse_layout", "table_layout", "with_layout"]
