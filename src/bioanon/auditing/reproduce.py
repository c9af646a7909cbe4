"""The release process as the shadow-model attacker re-runs it.

A release made by anything (SDV, a script) has no declared model, so the model-aware
attacker can only try the generic Gaussian families. When the user gives a way to re-run the
process — a command with ``{input}`` and ``{output}`` placeholders, or a Python callable
``table -> table`` — the audit wraps it in :class:`ReproducedMethod`, an estimator the
registry's shadow attacker (:mod:`bioanon.attack.shadow`) clones and runs on parts of its
reference records whose membership it knows: it learns which attackers (a logistic regression
on their scores) separate shadow members best and applies that to RELEASED.

The command gets a CSV file of the records (label columns, then the features) and must write
its release to ``{output}`` (CSV, Parquet or NPZ, by the extension given: ``.csv``) with the
same feature names and the label columns the release carries. Both files live in a temporary
folder removed afterwards; nothing is written beside RELEASED.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ..errors import BioanonError
from ..table import FeatureTable
from .inputs import read_table

#: seconds one run of a reproduce command may take (by default)
TIMEOUT = 600.0


def run_command(command: str, timeout: float) -> tuple[int, str]:
    """Run ``command`` in a shell of its own process group; (exit status, stderr).

    Past ``timeout`` seconds, or when the audit is interrupted, the whole group is killed
    (the shell and whatever it started), so nothing outlives the audit.
    """
    proc = subprocess.Popen(command, shell=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise BioanonError(f"the reproduce command ran over its limit, "
                           f"reproduce_timeout={timeout:g} s, and was stopped; make it "
                           "faster or raise the limit", parameter="reproduce_timeout") from None
    except BaseException:
        _kill_group(proc)
        raise
    return int(proc.returncode), err or ""


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def check_command(command: str) -> str:
    """Refuse a reproduce command without both placeholders (one line)."""
    if "{input}" not in command or "{output}" not in command:
        raise BioanonError("the reproduce command needs both placeholders {input} and "
                           "{output}, e.g. reproduce='python make_release.py {input} {output}'",
                           parameter="reproduce")
    return command


class ReproducedMethod(BaseEstimator):
    """The release process, re-run on any records (for the shadow attacker).

    Parameters
    ----------
    command : str, optional
        A shell command with ``{input}`` and ``{output}`` placeholders (paths quoted).
    function : callable, optional
        ``FeatureTable -> FeatureTable | DataFrame | array`` (used when no command).
    features : sequence of str
        The feature names the audit judges (the output's, matched by name).
    labels : sequence of str
        The label columns the output may carry (read as labels).
    timeout : float
        Seconds one run of ``command`` may take; past it the command (its whole process
        group) is stopped and the audit refused in one line.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=5, n_features=32)
    >>> m = ReproducedMethod(function=lambda tab: tab, features=t.feature_names,
    ...                      labels=["expression"])
    >>> m.fit_transform(t).shape
    (20, 32)
    """

    def __init__(self, command: str | None = None,
                 function: Callable[[FeatureTable], Any] | None = None,
                 features: Sequence[str] = (), labels: Sequence[str] = (),
                 timeout: float = TIMEOUT) -> None:
        self.command = command
        self.function = function
        self.features = features
        self.labels = labels
        self.timeout = timeout

    def fit(self, X: FeatureTable, y: Any = None) -> ReproducedMethod:
        return self

    def fit_transform(self, X: FeatureTable, y: Any = None) -> np.ndarray:
        """The process's release of ``X``, on :attr:`features` (any number of rows)."""
        if self.command is not None:
            out = self._run(X)
        elif self.function is not None:
            out = self.function(X)
        else:
            raise BioanonError("no release process to re-run: pass reproduce=COMMAND or a "
                               "callable", parameter="reproduce")
        return _aligned(self._table(out), X, list(self.labels))

    def _run(self, table: FeatureTable) -> FeatureTable:
        with tempfile.TemporaryDirectory(prefix="bioanon-audit-") as tmp:
            src, dst = Path(tmp) / "input.csv", Path(tmp) / "output.csv"
            table.to_frame().to_csv(src, index=False)
            cmd = str(self.command).format(input=shlex.quote(str(src)),
                                           output=shlex.quote(str(dst)))
            code, err = run_command(cmd, self.timeout)
            if code != 0 or not dst.exists():
                last = (err.strip().splitlines() or ["no message"])[-1]
                said = (f"exit {code}: {last}" if code != 0 else
                        "exit 0 but it wrote nothing to {output}")
                raise BioanonError(f"the reproduce command failed ({said}); run it by hand "
                                   "on a table to check it", parameter="reproduce")
            try:
                return read_table(dst, list(self.labels), "the reproduced release")
            except BioanonError as exc:
                why = str(exc).replace(f"the reproduced release '{dst}': ", "").replace(
                    str(dst), "{output}")
                raise BioanonError(f"the reproduce command's output is not a table bioanon "
                                   f"reads ({why}); it must write the records' features and "
                                   "labels to {output} as CSV",
                                   parameter="reproduce") from None

    def _table(self, out: Any) -> FeatureTable:
        """The output on :attr:`features` (matched by name), as a table."""
        names = list(self.features)
        if isinstance(out, pd.DataFrame):
            out = FeatureTable.from_frame(out, [c for c in out.columns
                                                if c not in set(names)])
        if isinstance(out, FeatureTable):
            out = read_table(out, list(self.labels), "the reproduced release")
            pos = {n: j for j, n in enumerate(out.feature_names or [])}
            missing = [n for n in names if n not in pos]
            if missing:
                raise BioanonError(f"the reproduced release lacks features {missing[:3]}; "
                                   "the process must keep the feature names",
                                   parameter="reproduce")
            return FeatureTable._of_checked(
                np.ascontiguousarray(out.X[:, [pos[n] for n in names]]), out.labels, names)
        X = np.asarray(out, np.float32)
        if X.ndim != 2 or X.shape[1] != len(names):
            raise BioanonError(f"the reproduced release has shape {X.shape}; return a table "
                               f"of {len(names)} features", parameter="reproduce")
        return FeatureTable(X, pd.DataFrame(index=range(X.shape[0])), names)


def _aligned(out: FeatureTable, inside: FeatureTable, labels: list[str]) -> np.ndarray:
    """The output's rows in the order of ``inside``'s label values (the shadow attacker
    reads the shadow release's labels from the records it gave): per combination of the
    label columns both carry, as many output rows as ``inside`` holds (drawn with
    replacement when the output has fewer); an output without those labels keeps its order
    (resampled to ``inside``'s size when the counts differ)."""
    rng = np.random.default_rng(0)
    cols = [c for c in labels if c in out.labels.columns and c in inside.labels.columns]
    n = inside.n_records
    if not cols:
        if out.n_records == n:
            return out.X
        return out.X[rng.choice(out.n_records, n, replace=out.n_records < n)]
    key_in = inside.labels[cols].astype(str).agg("\x1f".join, axis=1).to_numpy()
    key_out = out.labels[cols].astype(str).agg("\x1f".join, axis=1).to_numpy()
    rows = np.empty(n, np.int64)
    for k in np.unique(key_in):  # one draw per label combination, never per record
        want = np.flatnonzero(key_in == k)
        have = np.flatnonzero(key_out == k)
        if have.size == 0:
            have = np.arange(out.n_records)
        rows[want] = rng.choice(have, want.size, replace=have.size < want.size)
    return out.X[rows]


__all__ = ["TIMEOUT", "ReproducedMethod", "check_command", "run_command"]
