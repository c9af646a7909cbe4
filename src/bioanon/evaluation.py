"""The evaluation protocol: utility kept and privacy lost, measured on held-out records.

Closed-set protocol (section 5.4 of the evaluation-methodology paper): per identity, 75% of its
records train and 25% test (``test_size``). When the sensitive attribute is not the identity
(gender, age group...), pass ``group`` (the identity column): whole identities then go to one
side, so that a recognizer cannot answer by recognizing the person. Each split is anonymized on
its own with the same parameters (or, for methods with ``fit_on_auxiliary``, by one model fitted
on the train split); the anonymized test split stands for the released data.

Utility is measured in three views per useful attribute: trained on clear → scored on
anonymized (the paper's ``anonymized``), trained on anonymized → scored on clear
(``anonymized_to_clear``, the classification accuracy score) and trained and scored on
anonymized (``anonymized_to_anonymized``).

Privacy is measured by a panel of attackers (:mod:`bioanon.attack.threat`): naive, parrot,
p%-parrot, reverse and linkage, each with every recognizer; the worst case names the attacker
and recognizer that reached it. Optionally the strongest trained attacker is run again on
smaller sets of identities chosen by the selection strategies (:mod:`bioanon.attack.selection`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ._version import __version__
from .anonymize import SelectiveMeanAnonymizer
from .attack import ModelCache, make_recognizer, run_panel, training_set
from .attack.parallel import is_parallel, parallel_map
from .attack.recognizers import DEFAULT_MODELS, model_name, parse_models, single_threaded
from .attack.selection import (
    _identity_matrix,
    identity_counts,
    metadata_columns,
    parse_strategies,
    selection_curves,
)
from .attack.threat import MODES, parse_modes
from .errors import BioanonError
from .metrics import accuracy, chance_level, mixture, utility
from .report import Report
from .report.preview import preview_html
from .table import FeatureTable

Progress = Callable[[int, int, str], None]


def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values.astype(str), sort=True)[0]


def split_table(table: FeatureTable, interest: str, sensitive: str, test_size: float,
                random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Closed-set split: per value of ``sensitive``, a share ``test_size`` of its records test.

    Every identity appears on both sides (at least one record each). Within an identity the
    records are shuffled, ordered by interest value and taken at even steps, so the interest
    classes are spread over both sides too.

    Raises
    ------
    BioanonError
        When some identity has fewer than 2 records.
    """
    if not 0.0 < test_size < 1.0:
        raise BioanonError(f"test_size={test_size} must lie strictly between 0 and 1")
    ident = _codes(table.labels[sensitive])
    counts = np.bincount(ident)
    if counts.min() < 2:
        rare = table.labels[sensitive].astype(str).to_numpy()[ident == np.argmin(counts)][0]
        raise BioanonError(
            f"'{sensitive}' value '{rare}' has only {counts.min()} record; the closed-set split "
            "needs at least 2 per identity (1 to train, 1 to test); drop such identities"
        )
    rng = np.random.default_rng(random_state)
    interest_codes = _codes(table.labels[interest])
    order = np.lexsort((rng.random(ident.size), interest_codes, ident))  # by identity, interest
    test = np.zeros(ident.size, dtype=bool)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for s, n in zip(starts, counts, strict=True):  # one loop per identity
        n_test = int(min(max(round(test_size * n), 1), n - 1))
        offset = rng.random()
        picks = np.floor((np.arange(n_test) + offset) * n / n_test).astype(int)
        test[order[s + np.minimum(picks, n - 1)]] = True
    idx = np.arange(ident.size)
    return idx[~test], idx[test]


def group_split(table: FeatureTable, group: str, sensitive: str, test_size: float,
                random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Split by whole groups (identities): a share ``test_size`` of the groups of each value of
    ``sensitive`` go to test, so every sensitive class appears on both sides.

    Raises
    ------
    BioanonError
        When a group has several sensitive values or a sensitive class has fewer than 2 groups.
    """
    if not 0.0 < test_size < 1.0:
        raise BioanonError(f"test_size={test_size} must lie strictly between 0 and 1")
    labels = table.labels
    per_group = labels.groupby(group)[sensitive].nunique()
    if (per_group > 1).any():
        bad = per_group.index[per_group > 1][0]
        raise BioanonError(f"group '{bad}' of '{group}' has several '{sensitive}' values; the "
                           "group column must be an identity whose sensitive value is fixed")
    sens_of = labels.groupby(group)[sensitive].first()
    rng = np.random.default_rng(random_state)
    test_groups: list[Any] = []
    for value, groups in sens_of.groupby(sens_of, sort=True):  # one loop per sensitive class
        names = np.asarray(sorted(groups.index, key=str), dtype=object)
        if names.size < 2:
            raise BioanonError(f"'{sensitive}' value '{value}' has only {names.size} '{group}' "
                               "group; a grouped split needs at least 2 per class")
        n_test = int(min(max(round(test_size * names.size), 1), names.size - 1))
        test_groups.extend(rng.choice(names, size=n_test, replace=False))
    test = labels[group].isin(test_groups).to_numpy()
    idx = np.arange(table.n_records)
    return idx[~test], idx[test]


def anonymize_splits(anonymizer: Any, train: FeatureTable, test: FeatureTable,
                     tick: Callable[[str], None] = lambda _: None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Anonymize both splits with the same parameters.

    The splits are passed as FeatureTables, so methods can read the table's meta (an image
    method its ``image_shape``). By default each split is anonymized on its own
    (``fit_transform``), as the owner would anonymize the data to release. Methods that learn
    a model on auxiliary data (``fit_on_auxiliary = True``) are fitted once on the training
    split and transform both.
    """
    if getattr(anonymizer, "fit_on_auxiliary", False):
        tick("fitting the anonymizer on the train split (auxiliary data)")
        fitted = clone(anonymizer).fit(train, train.labels)
        tick("anonymizing both splits")
        return (_features(fitted.transform(train, train.labels)),
                _features(fitted.transform(test, test.labels)))
    tick("anonymizing the train split")
    anon_train = _features(clone(anonymizer).fit_transform(train, train.labels))
    tick("anonymizing the test split (the release)")
    return anon_train, _features(clone(anonymizer).fit_transform(test, test.labels))


def _features(released: Any) -> np.ndarray:
    """The feature matrix of an anonymizer's output (a FeatureTable or an array)."""
    return np.asarray(released.X if isinstance(released, FeatureTable) else released)


def _utility_fit(model: Any, seed: int, X: np.ndarray, y: np.ndarray,
                 probes: Sequence[np.ndarray], single: bool) -> list[np.ndarray]:
    est = make_recognizer(model, seed)
    if single:
        single_threaded(est)
    est.fit(X, y)
    return [est.predict(P) for P in probes]


def utility_views(train: FeatureTable, test: FeatureTable, anon_train: np.ndarray,
                  anon_test: np.ndarray, columns: Sequence[str], model: Any = "forest",
                  seed: int = 0, n_jobs: int | None = -1) -> dict[str, dict[str, Any]]:
    """Accuracy of each useful attribute in the three views (plus clear → clear).

    ``anonymized`` = trained on clear, scored on anonymized (the paper's view);
    ``anonymized_to_clear`` = trained on anonymized, scored on clear (classification accuracy
    score); ``anonymized_to_anonymized`` = trained and scored on anonymized.
    """
    jobs = []
    for col in columns:
        y = train.labels[col].to_numpy()
        jobs.append((model, seed, train.X, y, [test.X, anon_test]))
        jobs.append((model, seed, anon_train, y, [test.X, anon_test]))
    single = is_parallel(n_jobs, len(jobs))
    outs = list(parallel_map(_utility_fit, [(*job, single) for job in jobs], n_jobs, len(jobs)))
    util: dict[str, dict[str, Any]] = {}
    for i, col in enumerate(columns):
        y = test.labels[col].to_numpy()
        (clear_clear, clear_anon), (anon_clear, anon_anon) = outs[2 * i], outs[2 * i + 1]
        util[col] = {
            "column": col, "model": model_name(model),
            "clear": accuracy(y, clear_clear),
            "anonymized": accuracy(y, clear_anon),
            "anonymized_to_clear": accuracy(y, anon_clear),
            "anonymized_to_anonymized": accuracy(y, anon_anon),
            "chance": chance_level(y),
        }
    return util


def evaluate(table: FeatureTable, interest: str, sensitive: str,
             additional: Mapping[str, float] | None = None, anonymizer: Any = None,
             models: str | Sequence[Any] = DEFAULT_MODELS, utility_model: Any = "forest",
             test_size: float = 0.25, top_k: int = 5, random_state: int = 0,
             progress: Progress | None = None, *, attackers: str | Sequence[str] = "all",
             selection: str | Sequence[str] | None = None,
             identities: Sequence[int] | str | None = None, n_random: int = 10,
             metadata: Sequence[str] | None = None, group: str | None = None,
             n_jobs: int | None = -1, cache: ModelCache | None = None) -> Report:
    """Anonymize a held-out split and measure utility and privacy against the attack panel.

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
    models : "all", comma-separated names, or a sequence of names / estimators
        Attack recognizers (see :data:`bioanon.attack.RECOGNIZERS`).
    utility_model : str or estimator
        Recognizer that judges utility (the paper used a random forest).
    test_size : float
        Share of each identity's records held out as the release (closed set; 0.25).
    top_k : int
        Largest k of the top-k curves.
    random_state : int
        Seed of the split, the recognizers, the mixes, the selections and (when it has none)
        the anonymizer. Reports carry it: it is an evaluation seed, not a release key.
    progress : callable (done, total, description), optional
    attackers : "all" or names from :data:`bioanon.attack.MODES`
        naive, parrot, parrot25, parrot50, parrot75, reverse, linkage.
    selection : "auto", "all", "none"/None, or strategy names
        Identity-selection strategies (random, classification, metadata, distinctive,
        center); "auto" runs those that apply. Needs the sensitive attribute to be the
        identity (or at least 4 classes); classes are subsampled in both splits.
    identities : sequence of int or "3,6,12", optional
        Identity counts of the selection curves (default: 50%, 25%, ... down to 3).
    n_random : int
        Repeats of the random selection.
    metadata : sequence of str, optional
        Per-identity attribute columns of the metadata strategy (default: every label column
        with one value per identity, other than the interest and additional attributes).
    group : str, optional
        Column of groups kept whole on one side of the split: the identity, for a sensitive
        attribute shared by several identities such as gender; or a recording session
        (``execution``), for a closed-set identity split without overlapping windows of one
        session on both sides. Each group must have a single sensitive value.
    n_jobs : int or None
        Parallel fits (joblib; -1: all cores).
    cache : ModelCache, optional
        Keeps clear-trained attack models for later evaluations of the same table and seed.

    Returns
    -------
    Report

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32)
    >>> r = evaluate(t, "expression", "identity", models=["knn"], n_jobs=1,
    ...              anonymizer=SelectiveMeanAnonymizer("expression", g=8, r_p=0.1))
    >>> sorted(r["privacy"])[:3]
    ['attacks', 'chance', 'clear']
    """
    additional = dict(additional or {})
    for col in [interest, sensitive, *additional]:
        table.label(col)
    if sensitive == interest or sensitive in additional:
        raise BioanonError(f"'{sensitive}' cannot be both sensitive and useful; pick one role")
    modes = parse_modes(attackers)
    models = parse_models(models)
    strategies, strict = parse_strategies(selection)
    if group is not None:
        table.label(group)
        if group in (sensitive, interest, *additional):
            raise BioanonError(f"group '{group}' must differ from the sensitive and useful "
                               "columns; pass the identity column")
    if top_k < 1:
        raise BioanonError(f"top_k={top_k} must be at least 1")
    if anonymizer is None:
        anonymizer = SelectiveMeanAnonymizer(interest=interest, additional=list(additional),
                                             g=32, t=0.8, w=10, r_p=0.01,
                                             random_state=random_state)
    n_ids = int(table.labels[sensitive].nunique())
    counts = identity_counts(n_ids, identities) if strategies else []
    meta_cols: list[str] = []
    skipped: dict[str, str] = {}
    if "metadata" in strategies:
        if metadata is not None:
            for c in metadata:
                table.label(c)
            meta_cols = list(metadata)
        else:
            meta_cols = metadata_columns(table.labels, sensitive,
                                         exclude=[interest, *additional])
        if not meta_cols:
            if strict:
                raise BioanonError(f"the metadata strategy needs label columns with one value "
                                   f"per '{sensitive}' (age, gender...); add them or drop it")
            skipped["metadata"] = f"no label column has one value per '{sensitive}'"
            strategies = [s for s in strategies if s != "metadata"]
    if strategies and not counts:
        if strict:
            raise BioanonError(f"'{sensitive}' has only {n_ids} values; identity selection "
                               "needs at least 4 (drop --selection)")
        skipped.update({s: f"only {n_ids} values of '{sensitive}'; nothing smaller to select"
                        for s in strategies})
        strategies = []

    state = {"done": 0, "total": 5 + (1 if strategies else 0)}

    def tick(desc: str, extra: int = 0) -> None:
        state["total"] += extra
        if progress is not None:
            progress(state["done"], state["total"], desc)
        state["done"] += 1

    tick("splitting")
    if group is None:
        tr, te = split_table(table, interest, sensitive, test_size, random_state)
    else:
        tr, te = group_split(table, group, sensitive, test_size, random_state)
    train, test = table.subset(tr), table.subset(te)
    anon_train, anon_test = anonymize_splits(anonymizer, train, test, tick)
    anon_train = np.asarray(anon_train, dtype=np.float32)
    anon_test = np.asarray(anon_test, dtype=np.float32)
    if anon_train.shape != train.X.shape or anon_test.shape != test.X.shape:
        raise BioanonError(
            f"the anonymizer returned shape {anon_test.shape} for {test.X.shape} records × "
            "features; the attack panel compares clear and anonymized records and needs one "
            "anonymized record per record in the same feature space"
        )

    # ---------------------------------------------------------------- utility
    tick("utility (three views)")
    util = utility_views(train, test, anon_train, anon_test, [interest, *additional],
                         utility_model, random_state, n_jobs)

    def u_of(view: str) -> float:
        return utility(util[interest][view],
                       {c: (float(a), util[c][view]) for c, a in additional.items()})

    utility_block = {
        "interest": util[interest],
        "additional": {c: {**util[c], "alpha": float(a)} for c, a in additional.items()},
        "U": u_of("anonymized"),
        "U_clear": u_of("clear"),
        "U_anonymized_to_clear": u_of("anonymized_to_clear"),
        "U_anonymized_to_anonymized": u_of("anonymized_to_anonymized"),
    }

    # ---------------------------------------------------------------- privacy
    y_tr = train.labels[sensitive].astype(str).to_numpy()
    y_te = test.labels[sensitive].astype(str).to_numpy()
    chance = chance_level(y_te)
    n_classes = int(np.unique(y_te).size)
    base = state["done"]

    def panel_progress(done: int, total: int, desc: str) -> None:
        if progress is not None:
            progress(base + done, state["total"] - 1 + total, f"attack panel: {desc}")

    panel = run_panel(train.X, anon_train, y_tr, test.X, anon_test, y_te, chance, modes,
                      models, seed=random_state, top_k=top_k, n_jobs=n_jobs, cache=cache,
                      progress=panel_progress)
    attacks = panel["attacks"]
    worst = max(attacks, key=lambda a: a["accuracy"])
    privacy: dict[str, Any] = {
        "sensitive": sensitive, "n_classes": n_classes, "chance": chance,
        "top_k_chance": [min(1.0, k / n_classes) for k in range(1, top_k + 1)],
        "attacks": attacks, "clear": panel["clear"],
        "worst_case": {"accuracy": worst["accuracy"], "mode": worst["mode"],
                       "model": worst["model"], "train_data": worst["train_data"],
                       "attacker": f"{worst['mode']} attacker with {worst['model']}",
                       "ci": worst["ci"], "advantage": worst["advantage"],
                       "mixture": mixture(worst["accuracy"])},
        "timing": panel["timing"],
    }

    # ---------------------------------------------------------------- identity selection
    if strategies or skipped:
        privacy["selection"] = _selection_block(
            train, test, sensitive, strategies, counts, skipped, meta_cols, attacks,
            anon_train, anon_test, y_tr, y_te, chance, n_ids, n_random, random_state, n_jobs,
            lambda d: progress(state["total"] - 1, state["total"], d) if progress else None)
    if progress is not None:
        progress(state["total"], state["total"], "done")

    params = anonymizer.public_params() if hasattr(anonymizer, "public_params") else {
        k: v for k, v in anonymizer.get_params(deep=False).items() if k != "random_state"}
    figures = {}
    sheet = preview_html(test, anon_test, by=sensitive, random_state=random_state)
    if sheet is not None:
        figures["What the release looks like (held-out originals above, released below; "
                "this report shows originals: keep it private)"] = sheet
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
                           "split": ("closed set: per identity" if group is None else
                                     f"grouped by '{group}' (each group on one side)"),
                           "group": group,
                           "attackers": modes,
                           "models": [model_name(m) for m in models],
                           "utility_model": model_name(utility_model),
                           "selection": strategies, "identities": counts,
                           "n_random": n_random, "top_k": top_k, "seed": random_state},
        },
        "utility": utility_block,
        "privacy": privacy,
    }, figures)


def _selection_block(train: FeatureTable, test: FeatureTable, sensitive: str,
                     strategies: list[str], counts: list[int], skipped: dict[str, str],
                     meta_cols: list[str], attacks: list[dict[str, Any]],
                     anon_train: np.ndarray, anon_test: np.ndarray, y_tr: np.ndarray,
                     y_te: np.ndarray, chance: float, n_ids: int, n_random: int, seed: int,
                     n_jobs: int | None, note: Callable[[str], Any]) -> dict[str, Any]:
    """Identity-count curves of the strongest trained attacker of the panel."""
    block: dict[str, Any] = {"strategies": {}, "skipped": skipped, "counts": counts}
    trained = [a for a in attacks if MODES[a["mode"]].anonymized_fraction is not None]
    if not strategies or not trained:
        return block
    best = max(trained, key=lambda a: a["accuracy"])
    mode, model = best["mode"], best["model"]
    note(f"identity selection ({mode} attacker with {model})")
    spec = MODES[mode]
    X_fit = training_set(train.X, anon_train, y_tr, float(spec.anonymized_fraction), seed)
    X_probe = anon_test if spec.probes == "anonymized" else test.X  # reverse: clear probes
    meta = None
    if "metadata" in strategies:
        ids = np.unique(y_tr)
        labels = train.labels.assign(**{sensitive: y_tr})
        meta = _identity_matrix(labels, sensitive, meta_cols, ids)
    curves = selection_curves(X_fit, y_tr, X_probe, y_te, model=model, strategies=strategies,
                              counts=counts, anon_train=anon_train, metadata=meta,
                              n_random=n_random, seed=seed, n_jobs=n_jobs)
    block.update({
        "attacker": {"mode": mode, "model": model, "train_data": best["train_data"]},
        "full": {"n_identities": n_ids, "accuracy": best["accuracy"], "chance": chance},
        "metadata_columns": meta_cols if "metadata" in strategies else [],
        "strategies": curves,
    })
    return block


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
