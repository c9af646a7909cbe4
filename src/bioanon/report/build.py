"""Build a :class:`Report` from an evaluation's typed results; :func:`evaluate` runs one and
builds its report.

``report.json`` keeps every key of earlier versions and only adds: ``utility.cas`` (the
headline), ``utility.notes`` (e.g. person-level attributes scored on unseen identities),
``privacy.control``, ``privacy.baseline``, ``privacy.advantage`` (worst − max(chance, control)
with a 95% interval), ``privacy.membership``, ``privacy.contributors``,
``privacy.verification``, ``risks`` (one typed entry per risk and level: recognition,
membership, inference; value, 95% interval, attacker, baseline, target, status),
``privacy.worst_case_crossfit`` (the worst attacker chosen on one
half of the released records and scored on the other: the max over many attacks is biased
upwards, this figure is not), ``privacy.threat_names`` (VoicePrivacy terms), ``privacy.notes``
(which attackers a bound covers) and ``verdict``. The source is the input's file name only.
Nothing secret goes in: the anonymizer's seed is neither a parameter nor derived here, and the
mixing matrix never leaves the evaluation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._version import __version__
from ..attack.verification import VOICEPRIVACY
from ..metrics import mixture, utility
from .document import Report

#: which attackers each kind of guarantee covers (written in the report and the README)
BOUND_NOTES = {
    "distinct": ("distinct grouping bounds identity recognition by 1/k for the naive and "
                 "linkage attackers only (one clear record matched to a cluster mean); an "
                 "attacker trained on released records (parrot, reverse) learns each member's "
                 "share of the mean and is not bounded — read the worst case"),
    "k": ("k-anonymity bounds record linkage (which record) by 1/k, not identity recognition "
          "by a trained attacker"),
}


def source_name(source: Any) -> str:
    """The input's file name only (never a directory path)."""
    text = str(source)
    if os.sep in text or "/" in text:
        return os.path.basename(text.rstrip("/" + os.sep)) or "input"
    return text


def _jsonable(obj: Any) -> Any:
    """Plain JSON values (numpy scalars unwrapped, other objects by their repr)."""
    import numpy as np

    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return repr(obj)


def _bound_notes(anonymizer: Any) -> list[str]:
    params = anonymizer.get_params(deep=False) if hasattr(anonymizer, "get_params") else {}
    notes = []
    if params.get("distinct"):
        notes.append(BOUND_NOTES["distinct"])
    elif "k" in params:
        notes.append(BOUND_NOTES["k"])
    return notes


def build_report(ev: Any) -> Report:
    """The report of a finished :class:`~bioanon.evaluation.Evaluation`."""
    util = ev.utility_raw_
    interest, additional = ev.interest, ev.additional

    def u_of(view: str) -> float:
        return utility(util[interest][view],
                       {c: (float(a), util[c][view]) for c, a in additional.items()})

    typed = ev.utility()
    utility_block = {
        "interest": {**util[interest], "cas_ci": list(typed[interest].cas.ci)},
        "additional": {c: {**util[c], "alpha": float(a), "cas_ci": list(typed[c].cas.ci)}
                       for c, a in additional.items()},
        "U": u_of("anonymized"),
        "U_clear": u_of("clear"),
        "U_anonymized_to_clear": u_of("anonymized_to_clear"),
        "U_anonymized_to_anonymized": u_of("anonymized_to_anonymized"),
        "cas": typed[interest].cas.to_dict(),
        "headline": "cas",
        # the consumer's panel (each model release -> clear beside clear -> clear, the
        # picks by cross-validation); None where it did not run (consumer_panel)
        "consumer": util[interest].get("consumer"),
        "person_level": ev.person_level_,
        "notes": ev.utility_notes_,
    }
    panel = ev.panel_
    attacks = panel["attacks"]
    worst = max(attacks, key=lambda a: a["accuracy"])
    w_typed = ev.worst_case()
    ctrl = ev.control()
    baseline, baseline_name = ev.baseline()
    contributors = ev.contributors()
    privacy: dict[str, Any] = {
        "sensitive": ev.sensitive, "n_classes": ev.n_classes_, "chance": ev.chance(),
        "top_k_chance": [min(1.0, k / ev.n_classes_) for k in range(1, ev.options.top_k + 1)],
        "attacks": attacks, "clear": panel["clear"],
        "worst_case": {"accuracy": worst["accuracy"], "mode": worst["mode"],
                       "model": worst["model"], "train_data": worst["train_data"],
                       "attacker": f"{worst['mode']} attacker with {worst['model']}",
                       "ci": worst["ci"], "advantage": worst["advantage"],
                       "mixture": mixture(worst["accuracy"]),
                       "advantage_over_baseline": w_typed.advantage.to_dict(),
                       "voiceprivacy": VOICEPRIVACY.get(worst["mode"], "")},
        "worst_case_crossfit": ev.worst_case_crossfit(),
        "control": {**ctrl.to_dict(), "columns": ev.label_columns,
                    "attacker": "commonest sensitive value per combination of the released "
                                "label columns (learnt on the training split)"},
        "baseline": {"value": baseline, "name": baseline_name},
        "advantage": {**w_typed.advantage.to_dict(), "over": baseline_name},
        "membership": [m.to_dict() for m in ev.membership()],
        "contributors": None if contributors is None else contributors.to_dict(),
        "verification": [v.to_dict() for v in ev.verification()],
        "threat_names": {m: VOICEPRIVACY.get(m, "") for m in ev.modes},
        "notes": _bound_notes(ev.anonymizer_),
        "timing": panel["timing"],
        # recognizers replaced by one-pass substitutes above many classes (named, with why)
        "substitutions": panel.get("substitutions", []),
        "probes": panel.get("probes"),  # all released records, or a stated seeded sample
    }
    if ev.selection_ is not None:
        privacy["selection"] = ev.selection_
    anonymizer = ev.anonymizer_
    params = anonymizer.public_params() if hasattr(anonymizer, "public_params") else {
        k: v for k, v in anonymizer.get_params(deep=False).items() if k != "random_state"}
    table, opts = ev.table, ev.options
    data: dict[str, Any] = {
        "bioanon_version": __version__,
        "dataset": {"n_records": table.n_records, "n_features": table.n_features,
                    "n_train": ev.n_train_, "n_test": ev.n_test_,
                    "source": source_name(table.meta.get("source", "in-memory table")),
                    "panel_sample": getattr(ev, "panel_sample_", None)},
        "params": {
            "method": type(anonymizer).__name__,
            "anonymizer": _jsonable(params),
            "evaluation": {"interest": interest, "sensitive": ev.sensitive,
                           "additional": additional, "test_size": opts.test_size,
                           "split": ("closed set: per identity" if opts.group is None else
                                     f"grouped by '{opts.group}' (each group on one side)"),
                           "group": opts.group,
                           "attackers": ev.modes,
                           "models": [m if isinstance(m, str) else type(m).__name__
                                      for m in ev.model_list],
                           "utility_model": (opts.utility_model
                                             if isinstance(opts.utility_model, str)
                                             else type(opts.utility_model).__name__),
                           "consumer_panel": opts.consumer_panel,
                           "selection": ev.strategies_, "identities": ev.counts_,
                           "n_random": opts.n_random, "top_k": opts.top_k,
                           "seed": ev.random_state,
                           "seed_note": "evaluation seed (split, recognizers, mixes); the "
                                        "anonymizer's seed is derived from it one way and is "
                                        "not written",
                           "released_labels": ev.label_columns},
        },
        "utility": utility_block,
        "privacy": privacy,
    }
    verdict = ev.verdict()
    data["risks"] = [r.to_dict() for r in verdict.risks]
    data["verdict"] = verdict.to_dict()
    if ev.notes():
        data["notes"] = ev.notes()
    from ..evaluation.caps import sizes

    caps = sizes(ev)  # records per model fit and candidates per side, with the widths
    data["dataset"]["fit_sizes"] = {k: v for k, v in caps.items() if k != "sentence"}
    if caps["binding"]:
        data["verdict"]["fit_sizes"] = data["dataset"]["fit_sizes"]
        data["verdict"]["sentence"] += " " + caps["sentence"]
    sample = getattr(ev, "panel_sample_", None)
    if sample is not None:  # judged on a stratified sample of a large table: say so
        data["verdict"]["sample"] = sample
        data["verdict"]["sentence"] += (
            f" Judged on a stratified sample of {sample['n_records']} of "
            f"{sample['total_records']} records ({sample['n_identities']} of "
            f"{sample['total_identities']} identities).")
    figures = _figures(ev)
    return Report(data, figures)


def evaluate(table: Any, interest: str, sensitive: str,
             additional: Mapping[str, float] | None = None, anonymizer: Any = None, *,
             random_state: int = 0, progress: Any = None, cache: Any = None,
             options: Any = None, layout: str | None = None,
             **option_values: Any) -> Report:
    """Run :class:`~bioanon.evaluation.Evaluation` and return its :class:`Report`
    (``bioanon.evaluate``).

    Parameters are those of :class:`~bioanon.evaluation.Evaluation`: the evaluation's
    options as ``options=`` (:class:`~bioanon.evaluation.options.EvaluationOptions`) and/or
    as keywords named by its fields (``models=``, ``attackers=``, ``selection=``, ``group=``,
    ``n_jobs=``, ``max_records=``, ``inference=``, the targets, ...). ``layout``: the
    table's feature layout (:mod:`bioanon.layout`, e.g. ``"20x16+80"``), checked against
    its features. ``table`` may be a pandas DataFrame, read as a CSV file is (its text
    columns and the named ones are labels: :func:`~bioanon.table.table_of`).

    Examples
    --------
    >>> from bioanon.anonymize import SelectiveMeanAnonymizer
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32)
    >>> r = evaluate(t, "expression", "identity", models=["knn"], n_jobs=1,
    ...              anonymizer=SelectiveMeanAnonymizer("expression", g=8, r_p=0.1))
    >>> sorted(r["privacy"])[:3]
    ['advantage', 'attacks', 'baseline']
    >>> sorted(r["verdict"])[:3]
    ['accepted_risks', 'advantage', 'chance']
    >>> [x["name"] for x in r["risks"]][:2]
    ['record-recognition', 'record-membership']
    """
    from ..evaluation import Evaluation
    from ..layout import refuse_unread_layout, with_layout
    from ..table import table_of

    if anonymizer is not None:
        refuse_unread_layout(anonymizer, layout)
    table = with_layout(table_of(table, [interest, sensitive, *(additional or {})]), layout)
    return build_report(Evaluation(table, interest, sensitive, additional, anonymizer,
                                   random_state=random_state, progress=progress, cache=cache,
                                   options=options, **option_values).evaluate())


def _figures(ev: Any) -> Mapping[str, str]:
    """The contact sheet, only when the evaluation was asked for a preview (opt-in)."""
    if ev.preview_data_ is None:
        return {}
    from .preview import preview_html

    test, anon_test = ev.preview_data_
    sheet = preview_html(test, anon_test, by=None, random_state=ev.random_state)
    if sheet is None:
        return {}
    return {"What the release looks like (held-out originals above, released below; "
            "uncaptioned; this report shows originals: keep it private)": sheet}
