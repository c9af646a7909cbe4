"""CAS / clear and record-level membership of the ``dp-synthetic`` release at ε ∈ {1, 2, 4}.

Datasets: FSDD (digit / speaker), SP-SW-HAR stats (activity / subject, whole executions kept
together through ``group="execution"``), Yale expression (expression / subject) and the
300-person synthetic population (expression / identity). δ = 1/n² (the estimator's default,
n the records it is fitted on).

Public side information, so that the guarantee holds strictly: a random sixth of the people
(at least one) is set aside as **auxiliary** data; the clipping box
(:func:`bioanon.privacy.public_bounds`) comes from them only, and the evaluation runs on the
other people. The settings measured at each ε: the first two of the method's search space
(the box from the auxiliary people, the box's midpoint as centre, a declared clip) and two
tuned on **public** information only: centre = the auxiliary people's mean (``center=aux``),
clip = a quantile of their norms (``clip=aux:0.5`` → :func:`public_clip`), class covariances
shrunk to the pooled one (``pool``) and the budget split (``mean_share``). All are listed;
picking the better one on the same split flatters it slightly. ``basis=aux:K`` projects on the
auxiliary people's top K principal directions (:func:`public_basis`). Utility: CAS of the
evaluation's utility model (trained on the release, scored on clear held-out records) against
the same model trained on clear data. Privacy: the strongest of the record-level membership
attackers of :mod:`bioanon.attack.membership` (AUC, 95% interval; 0.5 is no disclosure; with
a group column, HAR's executions, the group level).

``--diagnose`` instead splits the loss at each ε: CAS of the same setting with no noise
(the model's loss: Gaussian per class, clipping, basis), noise on the means only, on the
second moments only, and both (the release). ``--certificate`` adds, for the best setting at
the largest ε per dataset, every risk of the certificate (recognition, membership, inference,
each with its attacker, 95% interval and status), judged as ``benchmarks/method_risks.py``
judges a method.

``--method dp-basis`` measures the release modelled in a small basis instead
(:mod:`bioanon.anonymize.dp_basis`, its ``BASIS_SETTINGS``): strict, the box, centre, public
part of the basis and clip radii from the auxiliary people; ``--diagnose`` then adds a column
with the residual's noise only.

Usage::

    BIOANON_DATA=... python benchmarks/dp_epsilon_sweep.py [--method dp-synthetic|dp-basis]
        [--datasets fsdd har yale synthetic]
        [--epsilons 1 2 4] [--setting K=V,...] [--diagnose] [--certificate]
        [--out benchmarks/results/dp_epsilon_sweep.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.anonymize.dp_basis import DPBasisAnonymizer
from bioanon.anonymize.dp_synthetic import DPSyntheticAnonymizer, public_basis, public_clip
from bioanon.evaluation import Evaluation
from bioanon.privacy import public_bounds
from bioanon.table import FeatureTable

#: the settings measured: two of dp-synthetic's search space (each at the user's epsilon)
#: and two tuned on public (auxiliary) information only
SETTINGS: tuple[dict[str, Any], ...] = (
    *DPSyntheticAnonymizer.search_space[:2],
    {"covariance": "lowrank", "rank": 32, "clip": "aux:0.9", "center": "aux",
     "mean_share": 0.7},
    {"covariance": "class", "rank": 8, "clip": "aux:0.5", "center": "aux", "pool": 0.8,
     "mean_share": 0.3},
)
#: dp-basis (``--method dp-basis``): strict, the box, centre, the public part of the basis and
#: the clips from the auxiliary people (``public_data=aux``); the first two are its
#: ``public_search_space``'s, tuned on FSDD/HAR at evaluation seed 0 (confirm with another)
BASIS_SETTINGS: tuple[dict[str, Any], ...] = (
    # k and the split of rho by the stated rule (rank_rule, share_rule: d and the classes)
    {"public_data": "aux"},
    {"public_data": "aux", "covariance": "class", "pool": 0.5, "clip_quantile": 0.7},
    {"public_data": "aux", "basis": "dp-lda", "rank": 16},
    {"public_data": "aux", "basis": "dp-lda", "rank": 16, "covariance": "class", "pool": 0.5,
     "mean_share": 0.5, "clip_quantile": 0.7},
    {"public_data": "aux", "basis": "public", "rank": 32},
    {"public_data": "aux", "basis": "dp-pca", "means": "basis", "rank": 16,
     "covariance": "class", "pool": 0.5, "mean_share": 0.4, "resid_share": 0.1},
)
#: the DP peer: SmartNoise's DP-CTGAN, the box from the auxiliary people
PEER_SETTINGS: tuple[dict[str, Any], ...] = ({"public_data": "aux", "epochs": 30},)
DEFAULTS = {"dp-synthetic": SETTINGS, "dp-basis": BASIS_SETTINGS,
            "smartnoise-dp": PEER_SETTINGS}
#: risks judged by --certificate (as benchmarks/method_risks.py)
CERT_MODELS, CERT_ATTACKERS = "logreg,knn", "naive,parrot,reverse,linkage"


class _BasisNoiseSwitch(DPBasisAnonymizer):
    """dp-basis with the noise of some mechanisms switched off (diagnosis only: not
    private). "means": the class sums only; "moments": the basis (DP PCA) and the second
    moments in it only; "residual": the residual only."""

    noise = "both"
    GROUPS = {"means": ("sums", "full_sums", "rsums"), "moments": ("moments", "basis"),
              "residual": ("rsq", "energy")}

    def sigmas(self, c_basis: float, c_resid: float, c_pca: float = 0.0
               ) -> dict[str, float]:
        out = super().sigmas(c_basis, c_resid, c_pca)
        if self.noise == "both":
            return out
        keep = self.GROUPS.get(self.noise, ())
        return {k: (v if k in keep or (k == "basis_sums" and "sums" in keep) else 0.0)
                for k, v in out.items()}


class _NoiseSwitch(DPSyntheticAnonymizer):
    """The same estimator with the noise of one mechanism switched off (diagnosis only:
    such a release is not private)."""

    noise = "both"

    def _sigmas(self, d: int) -> tuple[float, float]:
        s, m = super()._sigmas(d)
        return {"both": (s, m), "none": (0.0, 0.0), "means": (s, 0.0),
                "moments": (0.0, m)}[self.noise]


def resolve(setting: dict[str, Any], aux: FeatureTable, bounds: Any,
            interest: str | None = None) -> dict[str, Any]:
    """Replace the ``aux`` markers of a setting by what the auxiliary people give
    (``public_labels=aux``: their ``interest`` labels, for ``basis=public-lda``)."""
    out = dict(setting)
    if out.get("public_labels") == "aux" and interest is not None:
        out["public_labels"] = aux.labels[interest].to_numpy()
    if out.get("public_data") == "aux":  # the method derives box, centre, basis, clips itself
        out["public_data"] = aux.X
        return out
    if out.get("center") == "aux":
        out["center"] = aux.X.mean(axis=0)
    if isinstance(out.get("basis"), str) and out["basis"].startswith("aux:"):
        out["basis"] = public_basis(aux.X, bounds, int(out["basis"][4:]))
    if isinstance(out.get("clip"), str) and out["clip"].startswith("aux:"):
        out["clip"] = public_clip(aux.X, bounds, float(out["clip"][4:]), out.get("center"),
                                  out.get("basis"))
    return out


def _label(setting: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in setting.items())


def load(name: str) -> tuple[FeatureTable, str, str, str | None]:
    """Table, interest, sensitive, group column."""
    if name == "fsdd":
        from bioanon.datasets import load_fsdd

        return load_fsdd(), "digit", "speaker", None
    if name == "har":
        from bioanon.datasets import load_sp_sw_har

        return load_sp_sw_har(features="stats"), "activity", "subject", "execution"
    if name == "yale":
        from bioanon.datasets import load_yale_faces

        return load_yale_faces(features="pixels", subset="expression", size=32), \
            "expression", "subject", None
    from bioanon.datasets import make_biometric

    return (make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                           random_state=0), "expression", "identity", None)


def split_auxiliary(table: FeatureTable, sensitive: str, seed: int = 0
                    ) -> tuple[FeatureTable, FeatureTable]:
    """(auxiliary people, the rest): a random sixth of the identities, at least one."""
    ids = table.labels[sensitive].to_numpy()
    people = np.unique(ids)
    aux = np.random.default_rng(seed).choice(people, max(1, people.size // 6), replace=False)
    mask = np.isin(ids, aux)
    return table.subset(np.flatnonzero(mask)), table.subset(np.flatnonzero(~mask))


def build(method: str, interest: str, eps: float, bounds: Any, params: dict[str, Any],
          random_state: int | None, noise: str | None = None) -> Any:
    """The DP estimator of a setting: dp-synthetic with the public box, or dp-basis (which
    takes the box, centre, basis and clips from ``public_data``); ``noise`` switches the
    noise of some mechanisms off (a diagnosis, not a release)."""
    if method == "smartnoise-dp":  # the peer (its own environment: BIOANON_PEER_PYTHON)
        from bioanon.anonymize.peer_smartnoise import SmartNoiseAnonymizer

        return SmartNoiseAnonymizer(interest, epsilon=eps, random_state=random_state,
                                    **params)
    if method == "dp-basis":
        est: Any = (DPBasisAnonymizer if noise is None else _BasisNoiseSwitch)(
            interest, epsilon=eps, random_state=random_state, **params)
    else:
        est = (DPSyntheticAnonymizer if noise is None else _NoiseSwitch)(
            interest, epsilon=eps, bounds=bounds, random_state=random_state, **params)
    if noise is not None:
        est.noise = noise
    return est


def measure(name: str, epsilons: list[float],
            settings: tuple[dict[str, Any], ...] = SETTINGS, eval_seed: int = 0,
            method: str = "dp-synthetic") -> list[dict[str, Any]]:
    table, interest, sensitive, group = load(name)
    aux, main = split_auxiliary(table, sensitive)
    bounds = public_bounds(aux.X, quantile=0.01, margin=0.1)
    rows = []
    for eps, setting in ((e, s) for e in epsilons for s in settings):
        t0 = time.perf_counter()
        est = build(method, interest, eps, bounds, resolve(setting, aux, bounds, interest), 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            ev = Evaluation(main, interest, sensitive, anonymizer=est,
                            models=["logreg", "knn"], attackers="naive", group=group,
                            verification=False, n_jobs=1, random_state=eval_seed).evaluate()
        est.fit(main.X, main.labels)  # the accounting of a release of the whole table
        u = ev.utility()[interest]
        levels = {m.level: m for m in ev.membership()}
        row = {"dataset": name, "eval_seed": eval_seed, "interest": interest,
               "sensitive": sensitive,
               "n_records": main.n_records, "n_features": main.n_features,
               "auxiliary_people": int(np.unique(aux.labels[sensitive]).size),
               "epsilon": eps, "epsilon_accounted": est.epsilon_, "delta": est.delta_,
               "privacy_unit": est.privacy_unit_, "method": method, "setting": setting,
               "rho_split": getattr(est, "rho_split_", None),
               "clip_used": None if getattr(est, "clip", None) is None else float(est.clip),
               "cas": u.cas.value, "cas_ci": list(u.cas.ci), "clear": u.clear.value,
               "clear_ci": list(u.clear.ci), "ratio": u.cas.value / u.clear.value,
               "membership": None, "membership_by_level": {
                   lv: {"attacker": r.attacker, "auc": r.auc, "ci": list(r.ci)}
                   for lv, r in levels.items()}, "seconds": round(time.perf_counter() - t0, 1),
               "load_average": os.getloadavg()[0]}
        # record level; with a group column (HAR executions) the group level stands for it
        first = "record" if "record" in levels else next(iter(levels), None)
        if first is not None:
            r = levels[first]
            row["membership"] = {"level": first, "attacker": r.attacker, "auc": r.auc,
                                 "ci": list(r.ci),
                                 "baseline": 0.5, "n_members": r.n_members,
                                 "n_non_members": r.n_nonmembers}
        rows.append(row)
        mem = row["membership"]
        print(f"{name:10s} {method} eps={eps:<4g} {_label(setting):60s} CAS {row['cas']:.3f} / "
              f"clear {row['clear']:.3f} = "
              f"{row['ratio']:.2f}  membership AUC "
              + (f"{mem['auc']:.3f} [{mem['ci'][0]:.3f}, {mem['ci'][1]:.3f}] ({mem['level']}, "
                 f"{mem['attacker']})"
                 if mem else f"n/a (levels measured: {sorted(levels)})")
              + f"  delta {row['delta']:.1e}  {row['seconds']}s load {row['load_average']:.1f}",
              flush=True)
    return rows


def diagnose(name: str, epsilons: list[float], settings: tuple[dict[str, Any], ...],
             eval_seed: int = 0, seeds: int = 2, method: str = "dp-synthetic"
             ) -> list[dict[str, Any]]:
    """CAS / clear with the noise of each mechanism on or off (same split and utility model
    as the evaluation; mean over ``seeds`` noise seeds)."""
    from bioanon.evaluation.split import group_split, split_table
    from bioanon.evaluation.utility import utility_views

    table, interest, sensitive, group = load(name)
    aux, main = split_auxiliary(table, sensitive)
    bounds = public_bounds(aux.X, quantile=0.01, margin=0.1)
    tr, te = (split_table(main, interest, sensitive, 0.25, eval_seed) if group is None
              else group_split(main, group, sensitive, 0.25, eval_seed))
    train, test = main.subset(tr), main.subset(te)
    rows = []
    for eps, setting in ((e, s) for e in epsilons for s in settings):
        params = resolve(setting, aux, bounds, interest)
        row: dict[str, Any] = {"dataset": name, "method": method, "epsilon": eps,
                               "setting": setting, "load_average": os.getloadavg()[0]}
        switches = ("none", "means", "moments", "both") + (
            ("residual",) if method == "dp-basis" else ())
        for noise in switches:
            ratios = []
            for seed in range(seeds):
                est = build(method, interest, eps, bounds, params, seed, noise)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    released = est.fit_transform(train.X, train.labels)
                u = utility_views(train, test, released, test.X, [interest], "forest",
                                  eval_seed, 1)[interest]
                ratios.append(u["cas"] / u["clear"])
            row[noise] = float(np.mean(ratios))
        rows.append(row)
        resid = f"  residual only {row['residual']:.3f}" if "residual" in row else ""
        print(f"{name:10s} {method} eps={eps:<4g} {_label(setting):60s} CAS/clear: no noise "
              f"{row['none']:.3f}  means only {row['means']:.3f}  moments only "
              f"{row['moments']:.3f}{resid}  both {row['both']:.3f}  (mean of {seeds} seeds, "
              f"load {row['load_average']:.1f})", flush=True)
    return rows


def certificate(name: str, eps: float, setting: dict[str, Any], eval_seed: int = 1,
                method: str = "dp-synthetic") -> dict[str, Any]:
    """Every risk of the certificate for one setting (as benchmarks/method_risks.py)."""
    table, interest, sensitive, group = load(name)
    aux, main = split_auxiliary(table, sensitive)
    bounds = public_bounds(aux.X, quantile=0.01, margin=0.1)
    est = build(method, interest, eps, bounds, resolve(setting, aux, bounds, interest), None)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ev = Evaluation(main, interest, sensitive, anonymizer=est, models=CERT_MODELS,
                        attackers=CERT_ATTACKERS, random_state=eval_seed, n_jobs=1,
                        verification=False, selection=None, group=group).evaluate()
    u = ev.utility()[interest]
    risks = {r.name: {"statistic": r.statistic, "value": r.value, "ci": list(r.ci),
                      "attacker": r.attacker, "status": r.status} for r in ev.risks()}
    row = {"dataset": name, "method": method, "epsilon": eps, "setting": setting,
           "eval_seed": eval_seed,
           "cas": u.cas.value, "clear": u.clear.value, "ratio": u.cas.value / u.clear.value,
           "risks": risks, "met": all(r["status"] in ("met", "accepted")
                                      for r in risks.values()),
           "seconds": round(time.perf_counter() - t0, 1), "load_average": os.getloadavg()[0]}
    cells = "  ".join(f"{k} {r['value']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] "
                      f"({r['attacker']}) {r['status']}" for k, r in risks.items())
    print(f"{name:10s} {method} certificate eps={eps:g} {_label(setting)}: CAS/clear "
          f"{row['ratio']:.2f}  {cells}  {row['seconds']}s load {row['load_average']:.1f}",
          flush=True)
    return row


def _value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["fsdd", "har", "yale", "synthetic"])
    ap.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 2.0, 4.0])
    ap.add_argument("--setting", action="append", default=None, metavar="K=V,...",
                    help="a setting to measure instead of the default two (repeatable), "
                         "e.g. covariance=class,rank=16,clip=0.3")
    ap.add_argument("--eval-seed", type=int, default=0,
                    help="seed of the evaluation split (a fresh one confirms a choice)")
    ap.add_argument("--diagnose", action="store_true",
                    help="split the loss: no noise / means only / moments only / both")
    ap.add_argument("--certificate", action="store_true",
                    help="every risk of the certificate for the best setting at max epsilon")
    ap.add_argument("--method", nargs="+", default=["dp-synthetic"], choices=list(DEFAULTS),
                    help="the DP methods measured in this run, each at its strict settings "
                         "(dp-basis: BASIS_SETTINGS; smartnoise-dp, the peer: PEER_SETTINGS, "
                         "needs BIOANON_PEER_PYTHON)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/dp_epsilon_sweep.json"))
    args = ap.parse_args()
    custom = None if not args.setting else tuple(
        {k: _value(v) for k, v in (kv.split("=", 1) for kv in text.split(","))}
        for text in args.setting)
    rows: list[dict[str, Any]] = []
    certs: list[dict[str, Any]] = []
    for name, method in ((d, m) for d in args.datasets for m in args.method):
        settings = custom or DEFAULTS[method]
        try:
            if args.diagnose:
                rows += diagnose(name, args.epsilons, settings, args.eval_seed,
                                 method=method)
                continue
            mine = measure(name, args.epsilons, settings, args.eval_seed, method)
            rows += mine
            if args.certificate:
                top = max(args.epsilons)
                best = max((r for r in mine if r["epsilon"] == top), key=lambda r: r["ratio"])
                certs.append(certificate(name, top, best["setting"], method=method))
        except Exception as exc:  # a dataset out of reach is reported, the others still run
            print(f"{name} {method}: not measured ({type(exc).__name__}: {exc})", flush=True)
            rows.append({"dataset": name, "method": method,
                         "error": f"{type(exc).__name__}: {exc}"})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"methods": args.method,
                                    "settings": {m: list(custom or DEFAULTS[m])
                                                 for m in args.method},
                                    "rows": rows,
                                    "certificate": certs}, indent=2, default=float))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
