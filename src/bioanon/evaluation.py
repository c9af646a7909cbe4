"""The evaluation protocol: utility kept and privacy lost, measured on held-out records.

Records are split into train and test (stratified by sensitive × interest). Each split is
anonymized on its own with the same parameters; the anonymized test split stands for the
released data. Utility follows the paper's protocol (recognizers trained on clear train data,
scored on anonymized test data). Privacy is measured against several attackers:

- ``naive``: trained on clear train data, scored on the anonymized test split;
- ``parrot``: trained on train data anonymized with the same method and parameters (an
  informed attacker, Kerckhoffs's principle), scored on the anonymized test split;
- ``linkage``: each anonymized test record matched to its nearest clear test record by cosine
  distance; accuracy is the sensitive label of that match, and top-k record hit rates are kept.

The worst case is the highest accuracy over every attacker and recognizer run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from . import __version__
from .anonymize import SelectiveMeanAnonymizer
from .attack import LinkageAttacker, make_recognizer
from .attack.recognizers import DEFAULT_MODELS, model_name
from .errors import BioanonError
from .metrics import (
    accuracy,
    advantage,
    chance_level,
    kl_from_uniform,
    mixture,
    top_k_accuracy,
    utility,
    wilson_interval,
)
from .report import Report
from .table import FeatureTable

Progress = Callable[[int, int, str], None]


def split_table(table: FeatureTable, interest: str, sensitive: str, test_size: float,
                random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Train/test record positions, stratified by (sensitive, interest) where possible."""
    if not 0.0 < test_size < 1.0:
        raise BioanonError(f"test_size={test_size} must lie strictly between 0 and 1")
    idx = np.arange(table.n_records)
    keys = (table.labels[sensitive].astype(str) + "\x1f"
            + table.labels[interest].astype(str)).to_numpy()
    for strat in (keys, table.labels[sensitive].astype(str).to_numpy()):
        _, counts = np.unique(strat, return_counts=True)
        n_test = int(np.ceil(test_size * len(idx)))
        if counts.min() >= 2 and n_test >= counts.size and len(idx) - n_test >= counts.size:
            return train_test_split(idx, test_size=test_size, stratify=strat,
                                    random_state=random_state)
    raise BioanonError(
        f"cannot split: some '{sensitive}' class has fewer than 2 records or there are more "
        "classes than test records; drop rare classes or change test_size"
    )


def anonymize_splits(anonymizer: Any, train: FeatureTable, test: FeatureTable,
                     tick: Callable[[str], None] = lambda _: None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Anonymize both splits with the same parameters.

    By default each split is anonymized on its own (``fit_transform``), as the owner would
    anonymize the data to release. Methods that learn a model on auxiliary data
    (``fit_on_auxiliary = True``) are fitted once on the training split and transform both.
    """
    if getattr(anonymizer, "fit_on_auxiliary", False):
        tick("fitting the anonymizer on the train split (auxiliary data)")
        fitted = clone(anonymizer).fit(train.X, train.labels)
        tick("anonymizing both splits")
        return (np.asarray(fitted.transform(train.X, train.labels)),
                np.asarray(fitted.transform(test.X, test.labels)))
    tick("anonymizing the train split")
    anon_train = clone(anonymizer).fit_transform(train.X, train.labels)
    tick("anonymizing the test split (the release)")
    return anon_train, clone(anonymizer).fit_transform(test.X, test.labels)


def _attack_record(mode: str, model: str, train_data: str, y_true: np.ndarray,
                   y_pred: np.ndarray, chance: float, proba: np.ndarray | None,
                   classes: np.ndarray | None, top_k: int) -> dict[str, Any]:
    acc = accuracy(y_true, y_pred)
    hits = int(np.sum(np.asarray(y_true) == np.asarray(y_pred)))
    rec: dict[str, Any] = {
        "mode": mode, "model": model, "train_data": train_data, "accuracy": acc,
        "mixture": mixture(acc), "ci": list(wilson_interval(hits, len(y_true))),
        "advantage": advantage(acc, chance), "n": int(len(y_true)),
    }
    if proba is not None and classes is not None:
        rec["kl_uniform"] = kl_from_uniform(proba)
        rec["top_k"] = top_k_accuracy(proba, classes, y_true, top_k)
    return rec


def evaluate(table: FeatureTable, interest: str, sensitive: str,
             additional: Mapping[str, float] | None = None, anonymizer: Any = None,
             models: Sequence[Any] = DEFAULT_MODELS, utility_model: Any = "forest",
             test_size: float = 0.3, top_k: int = 5, random_state: int = 0,
             progress: Progress | None = None) -> Report:
    """Anonymize a held-out split and measure utility and privacy.

    Parameters
    ----------
    table : FeatureTable
    interest : str
        Column of the attribute of interest.
    sensitive : str
        Column of the sensitive attribute (identity, gender, ...).
    additional : mapping {column: alpha}, optional
        Additional attributes and their weights in U = P + Σ alpha_i Q_i.
    anonymizer : estimator, optional
        Any bioanon anonymizer (cloned). Defaults to :class:`SelectiveMeanAnonymizer` with the
        paper's voice setting and this evaluation's seed.
    models : sequence of str or estimators
        Attack recognizers (see :data:`bioanon.attack.RECOGNIZERS`).
    utility_model : str or estimator
        Recognizer that judges utility (the paper used a random forest).
    test_size : float
        Fraction of records held out as the release.
    top_k : int
        Largest k of the top-k curves.
    random_state : int
        Seed of the split, the recognizers and (when it has none) the anonymizer. Reports
        carry it: it is an evaluation seed, not a release key.
    progress : callable (done, total, description), optional

    Returns
    -------
    Report

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32)
    >>> r = evaluate(t, "expression", "identity", models=["knn"],
    ...              anonymizer=SelectiveMeanAnonymizer("expression", g=8, r_p=0.1))
    >>> sorted(r["privacy"])[:3]
    ['attacks', 'chance', 'clear']
    """
    additional = dict(additional or {})
    for col in [interest, sensitive, *additional]:
        table.label(col)
    if sensitive == interest or sensitive in additional:
        raise BioanonError(f"'{sensitive}' cannot be both sensitive and useful; pick one role")
    if anonymizer is None:
        anonymizer = SelectiveMeanAnonymizer(interest=interest, additional=list(additional),
                                             g=32, t=0.8, w=10, r_p=0.01,
                                             random_state=random_state)
    models = list(models)
    steps = 3 + len(additional) + 1 + 2 * len(models) + 1
    done = 0

    def tick(desc: str) -> None:
        nonlocal done
        if progress is not None:
            progress(done, steps, desc)
        done += 1

    tick("splitting")
    tr, te = split_table(table, interest, sensitive, test_size, random_state)
    train, test = table.subset(tr), table.subset(te)

    anon_train, anon_test = anonymize_splits(anonymizer, train, test, tick)

    # ---------------------------------------------------------------- utility
    util: dict[str, Any] = {}
    for col in [interest, *additional]:
        tick(f"utility of '{col}'")
        rec = make_recognizer(utility_model, random_state).fit(train.X, train.labels[col])
        y = test.labels[col].to_numpy()
        util[col] = {
            "column": col, "model": model_name(utility_model),
            "clear": accuracy(y, rec.predict(test.X)),
            "anonymized": accuracy(y, rec.predict(anon_test)),
            "chance": chance_level(y),
        }
    add_scores = {c: (float(a), util[c]["anonymized"]) for c, a in additional.items()}
    add_clear = {c: (float(a), util[c]["clear"]) for c, a in additional.items()}
    utility_block = {
        "interest": util[interest],
        "additional": {c: {**util[c], "alpha": float(a)} for c, a in additional.items()},
        "U": utility(util[interest]["anonymized"], add_scores),
        "U_clear": utility(util[interest]["clear"], add_clear),
    }

    # ---------------------------------------------------------------- privacy
    y_tr = train.labels[sensitive].to_numpy()
    y_te = test.labels[sensitive].to_numpy()
    chance = chance_level(y_te)
    attacks: list[dict[str, Any]] = []
    clear_baseline: list[dict[str, Any]] = []
    for m in models:
        name = model_name(m)
        tick(f"naive attacker ({name})")
        naive = make_recognizer(m, random_state).fit(train.X, y_tr)
        clear_baseline.append(_attack_record(
            "clear", name, "clear", y_te, naive.predict(test.X), chance,
            naive.predict_proba(test.X), naive.classes_, top_k))
        attacks.append(_attack_record(
            "naive", name, "clear", y_te, naive.predict(anon_test), chance,
            naive.predict_proba(anon_test), naive.classes_, top_k))
        tick(f"parrot attacker ({name})")
        parrot = make_recognizer(m, random_state).fit(anon_train, y_tr)
        attacks.append(_attack_record(
            "parrot", name, "anonymized", y_te, parrot.predict(anon_test), chance,
            parrot.predict_proba(anon_test), parrot.classes_, top_k))

    tick("linkage attacker")
    link = LinkageAttacker(k=top_k).fit(test.X, y_te)
    link_rec = _attack_record("linkage", "cosine_nn", "clear test records", y_te,
                              link.predict(anon_test), chance, None, None, top_k)
    hit_rates = link.record_hit_rates(anon_test, np.arange(test.n_records), top_k)
    link_rec["record_top_k"] = hit_rates
    link_rec["record_chance_top_k"] = [min(1.0, k / test.n_records)
                                       for k in range(1, len(hit_rates) + 1)]
    attacks.append(link_rec)
    if progress is not None:
        progress(steps, steps, "done")

    worst = max(attacks, key=lambda a: a["accuracy"])
    params = anonymizer.public_params() if hasattr(anonymizer, "public_params") else {
        k: v for k, v in anonymizer.get_params(deep=False).items() if k != "random_state"}
    return Report({
        "bioanon_version": __version__,
        "dataset": {"n_records": table.n_records, "n_features": table.n_features,
                    "n_train": train.n_records, "n_test": test.n_records,
                    "source": str(table.meta.get("source", "in-memory table"))},
        "params": {
            "method": type(anonymizer).__name__,
            "anonymizer": _jsonable(params),
            "evaluation": {"interest": interest, "sensitive": sensitive,
                           "additional": additional, "test_size": test_size,
                           "models": [model_name(m) for m in models],
                           "utility_model": model_name(utility_model),
                           "top_k": top_k, "seed": random_state},
        },
        "utility": utility_block,
        "privacy": {
            "sensitive": sensitive, "n_classes": int(np.unique(y_te).size), "chance": chance,
            "attacks": attacks, "clear": clear_baseline,
            "worst_case": {"accuracy": worst["accuracy"], "mode": worst["mode"],
                           "model": worst["model"], "mixture": mixture(worst["accuracy"])},
        },
    })


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return repr(obj)
