"""Public records as the source of a stated basis, without a privacy budget (``--public-data``).

Records of people **not** in the release, with the same feature columns, fix a basis a
release can be modelled in at no privacy cost: the principal directions of the public
records. Without a declared budget (no ``epsilon``: :mod:`.dp_budget` covers that case) the
search then tries, beside every applicable method's ``search_space``, the settings each
method declares in its class attribute ``public_basis_space`` (``dp-cells`` and ``dp-basis``
with ``basis="public"``): their ``"public"`` parameters take the public records
(:func:`~bioanon.certification.dp_budget.resolve_public`), which travel with the candidate
(``Candidate.hidden``) and are never written (the manifest names the public table, its size
and what it was used for).

The public table is checked before any work (one line each, naming ``public=``): the same
feature columns, numeric (a text-typed feature names its type as the cause), at least two
finite records, none of them a record of the input, and — where both tables hold the
identity column (``sensitive``) — no person of the input among its people.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=8, records_per_identity=10, n_features=32, random_state=0)
>>> aux = t.labels["identity"].to_numpy() == "person00"
>>> pub, private = t.subset(np.flatnonzero(aux)), t.subset(np.flatnonzero(~aux))
>>> cands = PublicRecords(pub).candidates(private, None, "identity")
>>> sorted({c.method for c in cands}), sorted({c.params["basis"] for c in cands})
(['dp-basis', 'dp-cells'], ['public'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..table import FeatureTable
from .dp_budget import public_features, resolve_public

#: what the public records give the settings that take them, in words (the manifest)
USED_FOR = ("the stated basis: principal directions of the public records (stated, no privacy "
            "cost), and the clipping box (values not written)")
#: what they give a setting with the public prior besides (the manifest)
PRIOR_USED_FOR = ("; and the prior of each class mean: the public records' class means, "
                  "from their interest labels and people (post-processing, no privacy cost; "
                  "values not written)")


def _column(table: FeatureTable, name: str) -> np.ndarray | None:
    """The values of column ``name`` as text (a label, or a numeric column read as a
    feature), None when the table lacks it."""
    if name in table.labels.columns:
        return table.labels[name].astype(str).to_numpy()
    names = list(table.feature_names or [])
    if name in names:
        return np.asarray(table.X[:, names.index(name)]).astype(str)
    return None


def shared_people(public: Any, table: FeatureTable, sensitive: str | None) -> list[str]:
    """The input's people (values of ``sensitive``) the public table holds too; empty when
    either table lacks the column (no person ids to compare).

    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=3, records_per_identity=4, n_features=32)
    >>> shared_people(t.subset(np.arange(4)), t.subset(np.arange(4, 12)), "identity")
    []
    >>> shared_people(t.subset(np.arange(6)), t.subset(np.arange(4, 12)), "identity")
    ['person01']
    """
    if not sensitive or not isinstance(public, FeatureTable):
        return []
    theirs, ours = _column(public, sensitive), _column(table, sensitive)
    if theirs is None or ours is None:
        return []
    return sorted(set(theirs.tolist()) & set(ours.tolist()))


#: the parameters a public prior takes from the public table's label columns
PRIOR_KEYS = frozenset({"public_labels", "public_groups"})


def without_prior(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without the public prior (its labels, people and ``prior``).

    >>> without_prior({"cells": 0, "prior": "public", "public_labels": "public",
    ...                "public_groups": "public", "public_data": "public"})
    {'cells': 0, 'public_data': 'public'}
    """
    return {k: v for k, v in params.items() if k not in PRIOR_KEYS | {"prior"}}


def public_basis_methods() -> dict[str, tuple[dict[str, Any], ...]]:
    """The registered methods that declare settings in a public basis, with those settings."""
    from ..anonymize.registry import methods

    return {name: tuple(cls.public_basis_space) for name, cls in methods().items()
            if getattr(cls, "public_basis_space", ())}


@dataclass(frozen=True)
class PublicRecords:
    """Public records given without a privacy budget: the source of a public basis.

    Parameters
    ----------
    public : FeatureTable or array-like of shape (m, d)
        Records of people not in the release with the same feature columns.
    public_name : str, optional
        The public table's file name, for the manifest.
    """

    public: Any
    public_name: str | None = None

    def X(self, table: FeatureTable, sensitive: str | None) -> np.ndarray:
        """The public records' features in the input's column order, checked (see the
        module)."""
        X = public_features(self.public, table)
        people = shared_people(self.public, table, sensitive)
        if people:
            raise BioanonError(
                f"public= holds {len(people)} person(s) of the input in column '{sensitive}' "
                f"(e.g. {people[:3]}); public data must hold people NOT in the release (a "
                "basis from released people's records would leak)", parameter="public")
        return X

    def candidates(self, table: FeatureTable, methods: Sequence[str] | None,
                   sensitive: str | None, interest: str | None = None,
                   additional: Sequence[str] = ()) -> list[Any]:
        """The settings in the public basis of the methods searched (``methods`` None: every
        method that declares some); named methods none of which takes a public basis are
        refused (the public table would be ignored). A setting with the public prior
        (``public_labels``/``public_groups`` read ``"public"``) takes the public table's
        ``interest`` and ``sensitive`` columns; where it lacks either, or ``additional``
        attributes are released (the prior is one per interest class), the same setting is
        tried without the prior (:func:`without_prior`)."""
        from .search import Candidate

        X_pub = self.X(table, sensitive)
        spaces = public_basis_methods()
        names = list(spaces) if methods is None else [m for m in methods if m in spaces]
        if not names:
            raise BioanonError(
                f"public= gives a public basis, which none of methods= {list(methods or [])} "
                f"takes; add {' or '.join(spaces)} to methods= or drop public=",
                parameter=("public", "methods"))
        labels = self.prior_labels(interest, sensitive) if not additional else None
        out: list[Any] = []
        for name in names:
            for setting in spaces[name]:
                params = dict(setting)
                hidden = resolve_public(params, X_pub)
                if PRIOR_KEYS & {k for k, v in params.items() if v == "public"}:
                    if labels is None:
                        params = without_prior(params)
                    else:
                        hidden.update(labels)
                out.append(Candidate(name, params, hidden))
        return out

    def prior_labels(self, interest: str | None, sensitive: str | None
                     ) -> dict[str, np.ndarray] | None:
        """The public records' interest labels and people (the public prior's), None when
        the public table lacks either column (or is an array)."""
        if not interest or not sensitive or not isinstance(self.public, FeatureTable):
            return None
        y, people = _column(self.public, interest), _column(self.public, sensitive)
        if y is None or people is None:
            return None
        return {"public_labels": y, "public_groups": people}

    def statement(self, table: FeatureTable, used: bool,
                  prior: bool = False) -> dict[str, Any]:
        """What the manifest and the report say of the public table (its values never);
        ``prior``: the certified setting takes the public prior too."""
        n = (self.public.n_records if isinstance(self.public, FeatureTable)
             else int(np.asarray(self.public).shape[0]))
        return {"name": self.public_name, "n_records": int(n),
                "used_for": USED_FOR + (PRIOR_USED_FOR if prior else "") if used else
                "nothing: the certified setting does not take a public basis"}


def public_records(settings: Any, budget: Any = None) -> PublicRecords | None:
    """The public records of ``settings`` (a :class:`~.settings.ReleaseSettings`) when they
    are given without a budget (with one, :class:`~.dp_budget.DPBudget` takes them); None
    otherwise."""
    if settings.public is None or budget is not None or settings.epsilon is not None:
        return None
    name = settings.public_name
    return PublicRecords(settings.public, None if name is None else Path(name).name)


def state_public(manifest: dict[str, Any], report: Any, public: PublicRecords,
                 result: Any, table: FeatureTable) -> Any:
    """Write what the public table was used for into the manifest and the report; the
    parameters taken from it read ``public`` (their values are not written). Returns the
    report with the statement."""
    chosen = result.candidate
    hidden = chosen.hidden if chosen is not None else {}
    statement = public.statement(table, bool(hidden), bool(PRIOR_KEYS & set(hidden)))
    manifest["public_data"] = statement
    params = manifest.get("params", {})
    for key in hidden:
        params[key] = "public (from the public table; values not written)"
    return report.amended(lambda data: data.update(public_data=statement))


__all__ = ["PRIOR_KEYS", "PRIOR_USED_FOR", "USED_FOR", "PublicRecords", "public_basis_methods",
           "public_records", "shared_people", "state_public", "without_prior"]
