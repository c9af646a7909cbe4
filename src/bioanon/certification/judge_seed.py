"""The judge's randomness, derived from the table and the options: a verdict is not a draw.

Without a seed, a search used to draw fresh entropy for its splits and attackers: re-running a
refused command re-rolled the evaluation, and a user who re-ran until it certified had chosen
the luckiest of several evaluations (the 95% statement holds for one). Here the judge's root
seed is a keyed digest of what decides the result — the table's features and labels, the
roles, the methods and every option that changes a figure — so the same command on the same
table judges the same splits with the same attackers and gives the same verdict and setting.
``random_state`` stays the way to ask for a different, reproducible evaluation.

The release's own draw (its noise, its donors) keeps fresh entropy: only the judge is pinned.
The seed itself is never written; the :func:`fingerprint` of the judged inputs (a different
keyed digest, from which the seed cannot be computed without the table) goes into the
manifest and the report, so a second run can be checked against the first.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=6, records_per_identity=10, n_features=32, random_state=0)
>>> a = judged_inputs(t, {"interest": "expression", "sensitive": "identity"})
>>> b = judged_inputs(t, {"interest": "expression", "sensitive": "identity"})
>>> root_seed(a) == root_seed(b), fingerprint(a) == fingerprint(b)
(True, True)
>>> root_seed(a) == root_seed(judged_inputs(t, {"interest": "expression"}))
False

A reason is the user's words: rewording it does not re-roll the judge, accepting another
risk does.

>>> acc = lambda d: root_seed(judged_inputs(t, {"accept_risks": d}))
>>> acc({"identity-membership": "6 speakers"}) == acc({"identity-membership": "too few"})
True
>>> acc({"identity-membership": "6 speakers"}) == acc({"record-membership": "6 speakers"})
False
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

#: the keys of the two digests (domain separation: the seed and the fingerprint differ)
_SEED_KEY = b"bioanon/judge-seed/v1"
_FINGERPRINT_KEY = b"bioanon/judge-fingerprint/v1"
#: options that change only the time or what is shown, never a figure
_TIME_ONLY = frozenset({"n_jobs", "preview", "progress", "on_plan"})
#: options of {name: reason}: which names were given decides the verdict, the reasons are the
#: user's words (rewording a reason must not re-roll the judge)
_NAMES_ONLY = frozenset({"accept_risks"})
#: options added after this digest's first version, with their defaults: one at its default
#: is left out, so that adding an option does not re-roll every verdict judged before it
_ADDED_LATER = {"sensitive_released": False}


def _canonical(value: Any) -> Any:
    """A JSON-able form of an option's value that is the same in every process (no memory
    addresses: an object without a plain form is named by its type and its parameters)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_canonical(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__,
                **{f.name: _canonical(_names(f.name, getattr(value, f.name)))
                   for f in dataclasses.fields(value) if f.name not in _TIME_ONLY
                   and not _at_added_default(f.name, getattr(value, f.name))}}
    if hasattr(value, "get_params"):
        return {"type": type(value).__name__, **_canonical(value.get_params(deep=False))}
    if callable(value):
        return getattr(value, "__qualname__", type(value).__name__)
    return type(value).__name__


def _at_added_default(key: str, value: Any) -> bool:
    """Whether option ``key`` is one added later (:data:`_ADDED_LATER`) at its default."""
    return key in _ADDED_LATER and value == _ADDED_LATER[key]


def _names(key: str, value: Any) -> Any:
    """The names alone of a {name: reason} option (:data:`_NAMES_ONLY`); any other as is."""
    if key in _NAMES_ONLY and isinstance(value, Mapping):
        return sorted(str(k) for k in value)
    return value


def _labels_digest(h: Any, labels: pd.DataFrame) -> None:
    """Feed ``labels`` to ``h`` by column name, whatever their order: the command line reads
    the named columns first, a table read in Python keeps the file's order, and both are the
    same data (they must get the same judge)."""
    names = sorted(str(c) for c in labels.columns)
    h.update(json.dumps(names).encode())
    if names:
        ordered = labels.set_axis([str(c) for c in labels.columns], axis=1)[names]
        hashed = pd.util.hash_pandas_object(ordered.astype(str), index=False)
        h.update(np.ascontiguousarray(hashed.to_numpy(np.uint64)).tobytes())


def table_digest(table: Any) -> bytes:
    """SHA-256 of a table's features (float32, row order kept), feature names and labels (by
    name: the order of the label columns is not data).

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=5, n_features=32)
    >>> u = t.subset(list(range(t.n_records)))
    >>> u.labels = u.labels[list(reversed(u.labels.columns))]
    >>> table_digest(t) == table_digest(u)
    True
    """
    h = hashlib.sha256()
    X = np.ascontiguousarray(np.asarray(table.X, dtype=np.float32))
    h.update(str(X.shape).encode())
    h.update(X.tobytes())
    h.update(json.dumps(list(table.feature_names or [])).encode())
    _labels_digest(h, table.labels)
    return h.digest()


def judged_inputs(table: Any, options: Mapping[str, Any]) -> bytes:
    """What decides a verdict, as bytes: the table's digest and the options in canonical
    form (time-only options left out)."""
    opts = {k: _canonical(_names(k, v)) for k, v in options.items() if k not in _TIME_ONLY}
    return table_digest(table) + json.dumps(opts, sort_keys=True).encode()


def root_seed(inputs: bytes) -> int:
    """The judge's root seed for these inputs (never written)."""
    digest = hashlib.blake2b(inputs, key=_SEED_KEY, digest_size=8).digest()
    return int.from_bytes(digest, "big") % (2**31)


def fingerprint(inputs: bytes) -> str:
    """A public check of what was judged: equal for two runs that judged the same table with
    the same options (and so gave the same verdict), from which the seed is not computable."""
    return hashlib.blake2b(inputs, key=_FINGERPRINT_KEY, digest_size=12).hexdigest()





#: how a report says where the judge's randomness came from
DERIVED = "derived from the table and the options (the same command gives the same verdict)"
SEEDED = "the seed given (random_state): one of many reproducible evaluations"


def judged_statement(inputs: bytes, random_state: int | None) -> dict[str, str]:
    """The manifest's and report's ``judged`` block: the fingerprint of the judged inputs
    (the seed given folded in, never written itself) and where the randomness came from."""
    seed = b"" if random_state is None else b"/seed/" + str(int(random_state)).encode()
    return {"fingerprint": fingerprint(inputs + seed),
            "randomness": DERIVED if random_state is None else SEEDED,
            "note": ("choosing among several seeds' verdicts voids the 95% statement: it holds "
                     "for one evaluation, not for the best of several")}



def labels_seed(labels: pd.DataFrame, roles: Any) -> int:
    """A seed derived from a table's label columns and the roles alone (the dask path's panel
    sample is drawn from the labels before any feature is read): the same input gives the
    same sample, so the judge there is not a draw either."""
    h = hashlib.sha256()
    _labels_digest(h, labels)
    h.update(repr(_canonical(roles)).encode())
    return root_seed(h.digest())
__all__ = ["DERIVED", "SEEDED", "fingerprint", "judged_inputs", "judged_statement", "labels_seed",
           "root_seed", "table_digest"]
