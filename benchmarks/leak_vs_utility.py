"""Model-aware membership against utility: a lean harness for issue 35's methods.

One setting, one dataset, a few seeds: the split of bioanon's judge
(:func:`bioanon.evaluation.split.split_table`, or :func:`~bioanon.evaluation.split.group_split`
where the dataset keeps groups whole), each split released on its own as the judge does
(the held-out 25% is "the release"), and three figures:

- **CAS**: a forest (the judge's utility model) trained on the training split's release and
  scored on the clear held-out records, against the same forest trained on clear records;
- **recognition**: the sensitive attribute predicted from the release by a forest trained on
  clear records (naive) and on the training split's release (parrot), beside chance;
- **model-aware record membership** (the attacker of issue 34 as a stand-in until the judge
  has it): members are the released split's clear records, non-members the training split's
  records (held-out records of the same people). The attacker knows the method's model family:
  it fits a label-aware Gaussian (class means; a pooled covariance with Ledoit-Wolf shrinkage,
  or per-class diagonal variances) on the release and on its clear reference records, and
  scores each candidate by the log-likelihood ratio given its label, in full dimension and in
  the release's top principal directions (k = classes − 1, 16, 32) and, where the method
  states a public basis, in that basis. The reference is cross-fitted: the training split is
  cut in two folds and a non-member is scored against the reference fitted on the fold
  without it (a member against a fold drawn at random). Advantage TPR − FPR with attacker and
  threshold chosen on one half of the candidates and scored on the other, both ways, and its
  95% interval (:func:`bioanon.metrics.advantage.crossfit_advantage`, the judge's function).

Usage (from the repository root)::

    BIOANON_DATA=../shared/datasets python benchmarks/leak_vs_utility.py --dataset fsdd \
        --method basis-synthetic --param rank=16 --seeds 1 2 [--json out.json]

``--grid NAME`` runs a named grid of settings (see ``GRIDS``) and prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.covariance import ledoit_wolf_shrinkage
from sklearn.ensemble import RandomForestClassifier

from bioanon.anonymize.registry import build_method
from bioanon.errors import BioanonError
from bioanon.evaluation.seeds import derive_seed
from bioanon.evaluation.split import group_split, split_table
from bioanon.metrics.advantage import crossfit_advantage
from bioanon.table import FeatureTable

#: fewest identities for halves and intervals by identity (as the judge)
MIN_IDENTITY_UNITS = 20


# ---------------------------------------------------------------------- datasets
@dataclass
class Data:
    name: str
    interest: str
    sensitive: str
    group: str | None
    load: Callable[[], FeatureTable]


def _fsdd() -> FeatureTable:
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd()


def _har() -> FeatureTable:
    from bioanon.datasets.sp_sw_har import load_sp_sw_har

    return load_sp_sw_har(features="stats")


def _yale() -> FeatureTable:
    from bioanon.datasets.yale_faces import load_yale_faces

    return load_yale_faces(features="eigen", subset="expression")


def _synthetic300() -> FeatureTable:
    from bioanon.datasets import make_biometric

    return make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                          random_state=0)


DATA = {
    "fsdd": Data("fsdd", "digit", "speaker", None, _fsdd),
    "har-subject": Data("har-subject", "activity", "subject", "execution", _har),
    "yale": Data("yale", "expression", "subject", None, _yale),
    "synthetic300": Data("synthetic300", "expression", "identity", None, _synthetic300),
}


# ---------------------------------------------------------------------- the attacker
def _codes(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.searchsorted(classes, labels)


class Gauss:
    """A label-aware Gaussian: class means and a pooled (Ledoit-Wolf shrunk) covariance, or
    per-class diagonal variances, or per-class covariances shrunk towards the pooled one."""

    def __init__(self, kind: str = "pooled") -> None:
        self.kind = kind

    def fit(self, X: np.ndarray, y: np.ndarray, C: int) -> Gauss:
        X = np.asarray(X, dtype=np.float64)
        counts = np.bincount(y, minlength=C).astype(float)
        means = np.zeros((C, X.shape[1]))
        np.add.at(means, y, X)
        present = counts > 0
        means[present] /= counts[present, None]
        means[~present] = X.mean(axis=0)
        R = X - means[y]
        self.means_ = means
        d = X.shape[1]
        if self.kind == "diag":
            var = np.zeros((C, d))
            np.add.at(var, y, R * R)
            pooled = var.sum(0) / max(X.shape[0] - C, 1)
            var = np.where(counts[:, None] > 1, var / np.maximum(counts - 1, 1)[:, None],
                           pooled)
            self.var_ = 0.9 * var + 0.1 * pooled + 1e-6
            return self
        lam = ledoit_wolf_shrinkage(R, assume_centered=True) if d > 1 else 0.0
        S = R.T @ R / max(X.shape[0] - C, 1)
        mu = np.trace(S) / d
        S = (1 - lam) * S + lam * mu * np.eye(d)
        if self.kind == "pooled":
            self.chol_ = [np.linalg.cholesky(S + 1e-9 * mu * np.eye(d))]
            return self
        chols = []
        for c in range(C):  # per-class covariance, half pooled (k small: in a basis only)
            Rc = R[y == c]
            Sc = Rc.T @ Rc / max(Rc.shape[0] - 1, 1) if Rc.shape[0] > 1 else S
            chols.append(np.linalg.cholesky(0.5 * Sc + 0.5 * S + 1e-9 * mu * np.eye(d)))
        self.chol_ = chols
        return self

    def loglik(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        D = np.asarray(X, dtype=np.float64) - self.means_[y]
        if self.kind == "diag":
            v = self.var_[y]
            return -0.5 * np.sum(D * D / v + np.log(v), axis=1)
        out = np.empty(D.shape[0])
        for c, L in enumerate(self.chol_):  # a loop over classes (one for pooled)
            rows = slice(None) if len(self.chol_) == 1 else (y == c)
            if len(self.chol_) > 1 and not np.any(rows):
                continue
            Z = np.linalg.solve(L, D[rows].T)
            out[rows] = -0.5 * np.sum(Z * Z, axis=0) - np.sum(np.log(np.diag(L)))
        return out


class Cells:
    """A mixture per class: the class cut into 2^b cells by the signs of the deviations
    along b given within-class directions, a mean per cell, one pooled variance per feature;
    the log-likelihood of the mixture (weights: the cells' shares)."""

    def __init__(self, V: np.ndarray) -> None:
        self.V = V

    def fit(self, X: np.ndarray, y: np.ndarray, C: int) -> Cells:
        b = self.V.shape[0]
        K = 1 << b
        cm = Gauss("diag").fit(X, y, C).means_
        cell = y * K + ((X - cm[y]) @ self.V.T > 0).astype(int) @ (1 << np.arange(b))
        cnt = np.bincount(cell, minlength=C * K).astype(float)
        means = np.zeros((C * K, X.shape[1]))
        np.add.at(means, cell, X)
        means = np.where(cnt[:, None] > 0, means / np.maximum(cnt, 1)[:, None],
                         np.repeat(cm, K, axis=0))
        R = X - means[cell]
        self.var_ = R.var(axis=0) + 1e-6
        self.means_, self.K = means, K
        self.logw_ = np.log((cnt + 0.5) / (np.repeat(np.bincount(y, minlength=C), K) + 0.5 * K))
        return self

    def loglik(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        K = self.K
        idx = y[:, None] * K + np.arange(K)[None, :]
        D = X[:, None, :] - self.means_[idx]
        ll = -0.5 * np.sum(D * D / self.var_, axis=2) + self.logw_[idx]
        top = ll.max(axis=1)
        return top + np.log(np.exp(ll - top[:, None]).sum(axis=1))


def _within_directions(X: np.ndarray, y: np.ndarray, C: int, b: int) -> np.ndarray:
    R = X - Gauss("diag").fit(X, y, C).means_[y]
    _, _, vt = np.linalg.svd(R, full_matrices=False)
    return vt[:b]


def _top_directions(X: np.ndarray, k: int) -> np.ndarray:
    Xc = np.asarray(X, dtype=np.float64) - X.mean(axis=0)
    _, _, vt = np.linalg.svd(Xc, full_matrices=False)
    return vt[:k]


def model_aware_scores(cand: np.ndarray, cand_y: np.ndarray, released: np.ndarray,
                       rel_y: np.ndarray, ref: np.ndarray, ref_y: np.ndarray,
                       cand_fold: np.ndarray, ref_fold: np.ndarray, C: int,
                       basis: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each attacker's log-likelihood ratio (release model − reference model) per candidate,
    the reference model of fold f fitted on the reference records outside fold f."""
    loc, sd = ref.mean(axis=0), ref.std(axis=0)
    sd[sd == 0] = 1.0

    def z(A: np.ndarray) -> np.ndarray:
        return (np.asarray(A, dtype=np.float64) - loc) / sd

    cz, rz, fz = z(cand), z(released), z(ref)
    views: dict[str, tuple[np.ndarray | None, str]] = {"full, pooled": (None, "pooled"),
                                                       "full, per-class diag": (None, "diag")}
    d = cand.shape[1]
    for k in sorted({max(C - 1, 1), 16, 32}):
        if k < d:
            P = _top_directions(rz, k)
            views[f"release PCs k={k}, pooled"] = (P, "pooled")
            views[f"release PCs k={k}, class"] = (P, "class")
    if basis is not None:
        B = np.asarray(basis, dtype=np.float64)
        views[f"stated basis k={B.shape[0]}, pooled"] = (B, "pooled")
    out: dict[str, np.ndarray] = {}
    for b in (2, 3):  # mixtures of cells (the release's within-class sign cells)
        for name, P in ((f"cells 2^{b}, all d", None),
                        (f"cells 2^{b}, release PCs k=32", _top_directions(rz, 32)
                         if d > 32 else None)):
            if P is None and "k=32" in name:
                continue
            R_, C_, F_ = (rz, cz, fz) if P is None else (rz @ P.T, cz @ P.T, fz @ P.T)
            V = _within_directions(R_, rel_y, C, b)
            s = Cells(V).fit(R_, rel_y, C).loglik(C_, cand_y)
            for f in np.unique(cand_fold):
                rows = cand_fold == f
                s[rows] -= Cells(V).fit(F_[ref_fold != f], ref_y[ref_fold != f], C).loglik(
                    C_[rows], cand_y[rows])
            out[name] = s
    for name, (P, kind) in views.items():
        def proj(A: np.ndarray, P: np.ndarray | None = P) -> np.ndarray:
            return A if P is None else A @ P.T

        rel_model = Gauss(kind).fit(proj(rz), rel_y, C)
        s = rel_model.loglik(proj(cz), cand_y)
        for f in np.unique(cand_fold):
            rows = cand_fold == f
            ref_model = Gauss(kind).fit(proj(fz[ref_fold != f]), ref_y[ref_fold != f], C)
            s[rows] -= ref_model.loglik(proj(cz[rows]), cand_y[rows])
        out[name] = s
    return out


# ---------------------------------------------------------------------- one run
def _release(est: Any, table: FeatureTable, seed: int) -> np.ndarray:
    e = clone(est)
    if "random_state" in e.get_params(deep=False) and e.get_params()["random_state"] is None:
        e.set_params(random_state=derive_seed(seed, "anonymizer"))
    out = e.fit_transform(table, table.labels)
    return np.asarray(out.X if isinstance(out, FeatureTable) else out, dtype=np.float32)


def _forest(seed: int) -> RandomForestClassifier:
    return RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=seed)


def split(table: FeatureTable, data: Data, seed: int) -> tuple[FeatureTable, FeatureTable]:
    if data.group is None:
        tr, te = split_table(table, data.interest, data.sensitive, 0.25, seed)
    else:
        tr, te = group_split(table, data.group, data.sensitive, 0.25, seed)
    return table.subset(tr), table.subset(te)


def evaluate(table: FeatureTable, data: Data, est: Any, seed: int,
             clear_cache: dict[Any, Any] | None = None,
             basis: np.ndarray | None = None, cas: bool = True) -> dict[str, Any]:
    """CAS, recognition and model-aware record membership of one setting at one seed
    (``cas=False``: membership only, no forest; CAS and recognition are NaN)."""
    t0 = time.perf_counter()
    train, test = split(table, data, seed)
    anon_test = _release(est, test, seed)
    y_tr = train.labels[data.interest].astype(str).to_numpy()
    y_te = test.labels[data.interest].astype(str).to_numpy()
    s_tr = train.labels[data.sensitive].astype(str).to_numpy()
    s_te = test.labels[data.sensitive].astype(str).to_numpy()
    cache = clear_cache if clear_cache is not None else {}
    nan = float("nan")
    clear = cas_value = naive_acc = parrot_acc = nan
    if cas:
        clear, cas_value, naive_acc, parrot_acc = _utility(est, train, test, anon_test, y_tr,
                                                           y_te, s_tr, s_te, seed, cache)
    _, cnt = np.unique(s_te, return_counts=True)
    chance = float(cnt.max() / cnt.sum())
    # membership: members = test (released), non-members = train (held out, same people)
    classes = np.unique(np.r_[y_tr, y_te])
    C = classes.size
    rng = np.random.default_rng(derive_seed(seed, "leak/folds") % 2**31)
    if data.group is None:
        ref_fold = rng.permutation(train.n_records) % 2
    else:
        g = train.labels[data.group].astype(str).to_numpy()
        ug, gi = np.unique(g, return_inverse=True)
        ref_fold = (rng.permutation(ug.size) % 2)[gi]
    cand = np.vstack([test.X, train.X])
    cand_y = _codes(np.r_[y_te, y_tr], classes)
    member = np.r_[np.ones(test.n_records, bool), np.zeros(train.n_records, bool)]
    cand_fold = np.r_[rng.integers(0, 2, test.n_records), ref_fold]
    scores = model_aware_scores(cand, cand_y, anon_test, _codes(y_te, classes), train.X,
                                _codes(y_tr, classes), cand_fold, ref_fold, C, basis)
    units, unit = None, "records"
    people = np.r_[s_te, s_tr]
    if data.group is not None:
        groups = np.r_[test.labels[data.group].astype(str).to_numpy(),
                       train.labels[data.group].astype(str).to_numpy()]
        ug, gi = np.unique(groups, return_inverse=True)
        scores = {k: np.bincount(gi, weights=v) / np.bincount(gi) for k, v in scores.items()}
        member = np.bincount(gi, weights=member.astype(float)) / np.bincount(gi) > 0.5
        unit = "groups"
    elif np.unique(people).size >= MIN_IDENTITY_UNITS:
        units, unit = people, "records (halves by identity)"
    adv = crossfit_advantage(scores, member, None, units,
                             np.random.default_rng(derive_seed(seed, "leak/halves") % 2**31),
                             unit)
    per = {k: crossfit_advantage({k: v}, member, None, units,
                                 np.random.default_rng(derive_seed(seed, "leak/halves")
                                                       % 2**31), unit).value
           for k, v in scores.items()}
    return {"seed": seed, "clear": clear, "cas": cas_value, "cas_ratio": cas_value / clear,
            "naive": naive_acc, "parrot": parrot_acc, "chance": chance,
            "membership": adv.value, "membership_ci": list(adv.ci),
            "attacker": " | ".join(dict.fromkeys(adv.attackers)), "per_attacker": per,
            "n_members": int(member.sum()), "n_nonmembers": int((~member).sum()),
            "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0]}


def _utility(est: Any, train: FeatureTable, test: FeatureTable, anon_test: np.ndarray,
             y_tr: np.ndarray, y_te: np.ndarray, s_tr: np.ndarray, s_te: np.ndarray, seed: int,
             cache: dict[Any, Any]) -> tuple[float, float, float, float]:
    """(clear accuracy, CAS, naive and parrot recognition) with the judge's forest; the
    clear-trained forests are cached per seed."""
    anon_train = _release(est, train, seed)
    if ("clear", seed) not in cache:
        f_clear = _forest(seed).fit(train.X, y_tr)
        cache[("clear", seed)] = float(np.mean(f_clear.predict(test.X) == y_te))
        cache[("naive", seed)] = _forest(seed).fit(train.X, s_tr)
    clear = cache[("clear", seed)]
    cas = float(np.mean(_forest(seed).fit(anon_train, y_tr).predict(test.X) == y_te))
    naive = float(np.mean(cache[("naive", seed)].predict(anon_test) == s_te))
    parrot = float(np.mean(_forest(seed).fit(anon_train, s_tr).predict(anon_test) == s_te))
    return clear, cas, naive, parrot


def describe(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean over seeds (the interval of the first seed's judge-sized game beside it)."""
    keys = ["clear", "cas", "cas_ratio", "naive", "parrot", "chance", "membership"]
    out = {k: float(np.mean([r[k] for r in rows])) for k in keys}
    out["membership_ci"] = [float(np.mean([r["membership_ci"][i] for r in rows]))
                            for i in (0, 1)]
    out["per_attacker"] = {k: float(np.mean([r["per_attacker"][k] for r in rows]))
                           for k in rows[0]["per_attacker"]}
    out["seeds"] = [r["seed"] for r in rows]
    out["runs"] = rows
    return out


def build(data: Data, method: str, params: dict[str, str], table: FeatureTable
          ) -> tuple[Any, FeatureTable, np.ndarray | None]:
    """The estimator (``public_data=aux``: a sixth of the people held aside as public
    records, the rest evaluated), the table it is evaluated on, and its stated basis."""
    own = {k: v for k, v in params.items() if k != "public_data"}
    est = build_method(method, own, interest=data.interest, sensitive=data.sensitive)
    if params.get("public_data") == "aux":
        ids = table.labels[data.sensitive].to_numpy()
        people = np.unique(ids)
        aux = np.random.default_rng(0).choice(people, max(1, people.size // 6), replace=False)
        mask = np.isin(ids, aux)
        est.set_params(public_data=table.X[mask])
        table = table.subset(np.flatnonzero(~mask))
    basis = None
    if hasattr(est, "stated_basis"):
        try:
            basis = est.stated_basis(table.X.shape[1])
        except BioanonError:  # no stated form (a random basis is drawn from the seed)
            basis = None
    return est, table, basis


def run(data_name: str, method: str, params: dict[str, str], seeds: list[int],
        table: FeatureTable | None = None) -> dict[str, Any]:
    data = DATA[data_name]
    table = data.load() if table is None else table
    est, tab, basis = build(data, method, params, table)
    rows = [evaluate(tab, data, est, s, basis=basis) for s in seeds]
    out = describe(rows)
    out.update({"dataset": data_name, "method": method, "params": params})
    return out


def line(r: dict[str, Any]) -> str:
    lo, hi = r["membership_ci"]
    lab = f"{r['method']}({','.join(f'{k}={v}' for k, v in r['params'].items())})"
    best = max(r["per_attacker"], key=lambda k: r["per_attacker"][k])
    return (f"{r['dataset']:<12} {lab:<70.70} CAS {r['cas']:.3f}/{r['clear']:.3f} = "
            f"{r['cas_ratio']:.3f} | MIA {r['membership']:+.3f} [{lo:+.3f},{hi:+.3f}] "
            f"(best single: {best} {r['per_attacker'][best]:+.3f}) | rec naive "
            f"{r['naive']:.3f} parrot {r['parrot']:.3f} chance {r['chance']:.3f}")


def _params(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        k, _, v = it.partition("=")
        out[k] = v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="fsdd", choices=list(DATA))
    ap.add_argument("--method", action="append", default=[])
    ap.add_argument("--param", action="append", default=[],
                    help="KEY=VALUE for the last --method (repeat); ';' separates settings")
    ap.add_argument("--setting", action="append", default=[],
                    help="METHOD:KEY=VALUE,KEY=VALUE (repeatable; several settings)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    settings: list[tuple[str, dict[str, str]]] = []
    for s in args.setting:
        m, _, rest = s.partition(":")
        settings.append((m, _params([p for p in rest.split(",") if p])))
    if args.method:
        settings.append((args.method[-1], _params(args.param)))
    data = DATA[args.dataset]
    print(f"load average {os.getloadavg()}", flush=True)
    table = data.load()
    results = []
    for method, params in settings:
        r = run(args.dataset, method, params, args.seeds, table)
        results.append(r)
        print(line(r), f"[{sum(x['seconds'] for x in r['runs']):.0f} s, load "
              f"{os.getloadavg()[0]:.1f}]", flush=True)
    if args.json:
        prev = json.loads(args.json.read_text()) if args.json.exists() else []
        args.json.write_text(json.dumps(prev + results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
