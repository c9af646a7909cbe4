"""The evaluation's options, declared once: :class:`EvaluationOptions`.

:class:`~bioanon.evaluation.Evaluation`, :func:`bioanon.evaluate`,
:func:`bioanon.certification.search.search`, :func:`bioanon.certify` and the command line all
take their evaluation options from this one frozen dataclass. Their keyword arguments are a
convenience derived from its fields (:meth:`EvaluationOptions.of`), so an option is added in
one place and no signature can lose one.

Examples
--------
>>> opts = EvaluationOptions.of(models=["knn"], n_jobs=1)
>>> opts.models, opts.n_jobs, opts.test_size
(['knn'], 1, 0.25)
>>> EvaluationOptions.of(opts, n_jobs=2).n_jobs
2
>>> EvaluationOptions.of(modles=["knn"])
Traceback (most recent call last):
...
TypeError: unknown evaluation option 'modles' (did you mean 'models'?); the options are ...
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ..attack.recognizers import DEFAULT_MODELS
from ..errors import BioanonError
from .verdict import DEFAULT_TARGET

#: options of earlier versions, refused with the way forward
REMOVED = {
    "target_membership": "an AUC bound", "target_inference": "an advantage bound"}


def refuse_removed(values: Mapping[str, Any]) -> None:
    """Refuse the former per-risk targets in one line naming ``level``."""
    for name in values:
        if name in REMOVED:
            raise BioanonError(
                f"{name} ({REMOVED[name]}) was removed: membership and inference on members "
                "are now both judged by the membership advantage (TPR − FPR) against one "
                "target per level; pass level=NAME or a number instead, e.g. "
                "level='standard' or level=0.1", parameter="level")


@dataclass(frozen=True)
class EvaluationOptions:
    """How a release is judged: the attack panel, the split, the risks and their targets.

    Attributes
    ----------
    models : str or sequence
        Attack recognizers (names, estimators, or ``"all"``).
    utility_model : str or estimator
        The model of the utility (CAS) views.
    test_size : float
        Share of each identity's records held out (closed set).
    top_k : int
        k of the top-k recognition rate.
    attackers : str or sequence of str
        Attacker modes (naive, parrot, parrot25, parrot50, parrot75, reverse, linkage; "all").
    selection : str, sequence of str or None
        Identity-selection strategies ("auto", "all", "none"/None or names).
    identities : sequence of int, str or None
        Identity counts of the selection curves.
    n_random : int
        Repeats of the random selection.
    metadata : sequence of str or None
        Per-identity columns of the metadata selection.
    group : str or None
        Column of groups kept whole on one side of the split.
    n_jobs : int or None
        Parallel fits (-1: all cores).
    released_labels : sequence of str or None
        Label columns the release carries (default: the interest and additional ones).
    membership, verification, inference : bool
        Run the membership, verification and inference-on-members risks.
    target_advantage : float
        Recognition target (upper 95% bound of the worst attack's advantage).
    level : str, float, Level or None
        The privacy level membership and inference on members are judged at (both as a
        membership advantage TPR − FPR): a name of :data:`bioanon.levels.LEVELS`, a number
        (the same target at the record and identity levels) or None (the default level).
    guarantee : bioanon.privacy_bounds.Guarantee or None
        A declared DP guarantee: membership and inference at a level it covers, with its
        proven bound within the target, are "covered by the guarantee"
        (:func:`bioanon.evaluation.risks.base.cover`).
    accept_risks : mapping {"LEVEL-RISK": reason} or None
        Risks accepted explicitly, with the reason.
    preview : bool
        Keep a contact sheet of held-out originals and releases (pixel tables).
    max_records : int or None
        Judge a larger table on a stratified sample of this many records (None: never).
    max_fit_records : int or None
        Records each utility model is trained on: a sample of the training split stratified
        by the column it predicts (None: all). The test records are never sampled, so the
        intervals keep their width; the report names the sizes. The default (10,000) leaves
        tables of up to 13,333 records (at ``test_size`` 0.25) exactly as without it.
    max_candidates : int or None
        Candidate records per side (members, non-members) the membership and inference
        attackers score, and clear records per release at the identity level: a sample
        stratified by identity, every identity kept (None: all). The release and the
        attacker's reference population are never sampled; the report names the sizes beside
        the intervals.
    """

    models: str | Sequence[Any] = DEFAULT_MODELS
    utility_model: Any = "forest"
    test_size: float = 0.25
    top_k: int = 5
    attackers: str | Sequence[str] = "all"
    selection: str | Sequence[str] | None = None
    identities: Sequence[int] | str | None = None
    n_random: int = 10
    metadata: Sequence[str] | None = None
    group: str | None = None
    n_jobs: int | None = -1
    released_labels: Sequence[str] | None = None
    membership: bool = True
    verification: bool = True
    inference: bool = True
    target_advantage: float = DEFAULT_TARGET
    level: Any = None
    guarantee: Any = None
    accept_risks: Mapping[str, str] | None = None
    preview: bool = False
    max_records: int | None = 50_000
    max_fit_records: int | None = 10_000
    max_candidates: int | None = 10_000

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names (the dataclass's fields), in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls, options: EvaluationOptions | None = None, /,
           **values: Any) -> EvaluationOptions:
        """``options`` (default: every default) with ``values`` replaced.

        Raises TypeError naming the closest option for a keyword that is not one.
        """
        names = cls.names()
        refuse_removed(values)
        for key in values:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise TypeError(f"unknown evaluation option '{key}'{hint}; the options are "
                                f"{', '.join(names)}")
        return replace(options if options is not None else cls(), **values)

    def split(self, values: Mapping[str, Any]) -> tuple[EvaluationOptions, dict[str, Any]]:
        """These options with the evaluation options among ``values`` replaced, and the
        remaining (non-option) keywords."""
        names = self.names()
        mine = {k: v for k, v in values.items() if k in names}
        rest = {k: v for k, v in values.items() if k not in names}
        return replace(self, **mine), rest


__all__ = ["EvaluationOptions"]
