"""Issue 43's last candidate, measured before choosing: DP kernel mean embeddings (DP-MERF).

Harder et al. (2021) release, for each class, the mean of a random-Fourier-feature map of the
records (an approximate Gaussian-kernel mean embedding) with Gaussian noise, then fit synthetic
data to the noisy embeddings at no further privacy cost. This script measures that idea at the
size issue 43 is about (a few thousand records), under strict DP at ε = 4, beside the Gaussian
release the search certifies there (``dp-synthetic``, low rank 32, the public box, centre and
clip; docs/levels-and-floor.md).

What is released and what it costs (record unit, bioanon's neighbours: one record's features
change, the labels and class sizes are public; zCDP):

- the map is ``φ(x) = [cos(Wz), sin(Wz)] / √D`` of the record standardised by the **public**
  people's mean and spread (``z``), ``W`` drawn from N(0, 1/ℓ²) with ℓ the public records'
  median pairwise distance, so that ``‖φ(x)‖ = 1`` for every record: a class sum moves by at
  most ``‖φ(x) − φ(x')‖ ≤ 2`` in L2 when one record's features change, and ``N(0, σ²)``
  noise with ``σ = 2/√(2ρ_e)`` is ρ_e-zCDP;
- the synthetic records (as many per class as the class holds: the labels are released as
  they are, as by every method) start from public information only and are moved by Adam to
  make each class's mean embedding match its noisy one. That is post-processing.

Two ways to start, each a row:

- ``hybrid``: from the Gaussian release made with the rest of the budget (ρ split
  ``(1 − share)·ρ`` to the Gaussian, ``share·ρ`` to the embedding; the Gaussian's ε is the
  one whose ρ is its part). The embedding corrects what one Gaussian per class misses.
- ``pure``: from the public people's records of the same class, resampled, with a little
  noise; the whole budget goes to the embedding, as in DP-MERF.

The rows without noise (``--epsilon`` 1e6 for every part) say what the model keeps, as
``dp_epsilon_sweep.py --diagnose`` says of the Gaussian. Utility is the consumer's pick
(:func:`bioanon.evaluation.consumer.consumer_panel`: forest, logistic regression, shrunk LDA;
the pick by 3-fold cross-validation on the release alone) scored on the clear held-out
records, against the clear training records' own pick. FSDD's split is
``dp_epsilon_sweep.py``'s: a sixth of the speakers (one) is the public part, the rest split
75/25 into the training records released and the held-out records scored.

No attacker is run: every row is ε = 4 by its proof, the Gaussian's and the embedding's
mechanisms composed, and a row is worth judging empirically only where it keeps more than
the Gaussian it would replace. None did (docs/dp-cells.md, "DP kernel mean embeddings").

Usage (from the repository root; 5 to 40 s a row on one core)::

    BIOANON_DATA=../shared/datasets python benchmarks/dp_kernel_embedding.py
        [--seeds 0 1 2] [--epsilon 4] [--no-noise] [--bandwidth-scale S]
        [--rows START,SHARE,D ...] [--out benchmarks/results/dp_kernel_embedding.json]
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
from dp_epsilon_sweep import load, resolve, split_auxiliary

from bioanon.anonymize.dp_synthetic import DPSyntheticAnonymizer
from bioanon.evaluation.consumer import consumer_panel
from bioanon.evaluation.split import split_table
from bioanon.privacy import public_bounds, zcdp_epsilon

#: the Gaussian family strict DP certifies on FSDD at ε = 4 (docs/levels-and-floor.md)
GAUSSIAN = {"covariance": "lowrank", "rank": 32, "center": "aux", "clip": "aux:0.9",
            "mean_share": 0.7}
#: (start, share of ρ to the embedding, D random frequencies) of each row; share 0 is the
#: Gaussian alone
ROWS = (("gaussian", 0.0, 0), ("hybrid", 0.3, 50), ("hybrid", 0.3, 200),
        ("hybrid", 0.5, 200), ("pure", 1.0, 200), ("pure", 1.0, 1000))
MODELS = ("forest", "logreg", "lda")
STEPS = 300
LEARNING_RATE = 0.05
#: L2 sensitivity of a class sum of unit-norm maps when one record's features change
SENSITIVITY = 2.0
#: no noise: every part at this ε (the estimator's largest)
NO_NOISE = 1e6


def fourier_map(Z: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``[cos(ZWᵀ), sin(ZWᵀ)] / √D``: every row of unit L2 norm."""
    P = Z @ W.T
    return np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(W.shape[0])


def match_embeddings(Z: np.ndarray, y: np.ndarray, targets: dict[Any, np.ndarray],
                     W: np.ndarray, steps: int = STEPS, lr: float = LEARNING_RATE
                     ) -> np.ndarray:
    """Move the points ``Z`` (Adam, ``steps`` steps) so that each class's mean of
    :func:`fourier_map` approaches ``targets[class]``; whole-array per class."""
    Z = Z.copy()
    D = W.shape[0]
    m1, m2 = np.zeros_like(Z), np.zeros_like(Z)
    members = {c: np.flatnonzero(y == c) for c in targets}
    for it in range(1, steps + 1):
        G = np.zeros_like(Z)
        for c, idx in members.items():
            P = Z[idx] @ W.T
            C, S = np.cos(P), np.sin(P)
            r = np.hstack([C, S]).mean(axis=0) / np.sqrt(D) - targets[c]
            # d‖mean φ − t‖² / dz_i, times the class size (each point's step on one scale)
            G[idx] = (-S * r[:D] + C * r[D:]) @ W * (2.0 / np.sqrt(D))
        m1 = 0.9 * m1 + 0.1 * G
        m2 = 0.999 * m2 + 0.001 * G * G
        Z -= lr * (m1 / (1 - 0.9 ** it)) / (np.sqrt(m2 / (1 - 0.999 ** it)) + 1e-8)
    return Z


def median_distance(Z: np.ndarray, rng: np.random.Generator, n: int = 400) -> float:
    """The median pairwise distance of (a sample of) the public records."""
    S = Z[rng.choice(len(Z), min(n, len(Z)), replace=False)]
    sq = (S * S).sum(axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * S @ S.T, 0)
    return float(np.sqrt(np.median(d2[np.triu_indices(len(S), 1)])))


def one_row(start: str, share: float, D: int, epsilon: float, seed: int,
            parts: dict[str, Any]) -> dict[str, Any]:
    aux, train, y, interest, bounds = (parts[k] for k in
                                       ("aux", "train", "y", "interest", "bounds"))
    rng = np.random.default_rng([seed, 43])
    whole = DPSyntheticAnonymizer(interest, epsilon=epsilon, bounds=bounds,
                                  **resolve(GAUSSIAN, aux, bounds, interest))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole.fit(train.X, train.labels)  # ρ and δ of the whole budget
    rho, delta = whole.rho_, whole.delta_
    noisy = epsilon < NO_NOISE
    eps_gauss = (epsilon if share == 0 else
                 zcdp_epsilon((1 - share) * rho, delta) if noisy and share < 1 else None)
    mu, sd = aux.X.mean(axis=0), aux.X.std(axis=0) + 1e-9
    if start == "pure":
        ya = aux.labels[interest].to_numpy()
        X0 = np.empty_like(train.X)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            pool = aux.X[ya == c]
            X0[idx] = pool[rng.integers(0, len(pool), idx.size)]
        X0 = X0 + rng.normal(0, 0.1, X0.shape) * sd
    else:
        est = DPSyntheticAnonymizer(interest, epsilon=eps_gauss or NO_NOISE, bounds=bounds,
                                    random_state=int(rng.integers(2**31)),
                                    **resolve(GAUSSIAN, aux, bounds, interest))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X0 = np.asarray(est.fit_transform(train.X, train.labels))
    sigma = None
    released = X0
    if share > 0:
        Zp = (aux.X - mu) / sd
        scale = parts.get("bandwidth_scale", 1.0) * median_distance(Zp, rng)
        W = rng.normal(0, 1 / scale, size=(D, train.n_features))
        phi = fourier_map((train.X - mu) / sd, W)
        sigma = SENSITIVITY / np.sqrt(2 * share * rho) if noisy else 0.0
        targets = {c: (phi[y == c].sum(axis=0) + rng.normal(0, sigma, phi.shape[1]))
                   / np.count_nonzero(y == c) for c in np.unique(y)}
        released = match_embeddings((X0 - mu) / sd, y, targets, W) * sd + mu
    return {"start": start, "share": share, "D": D, "epsilon": epsilon,
            "bandwidth_scale": parts.get("bandwidth_scale", 1.0),
            "epsilon_gaussian": eps_gauss, "delta": delta, "rho": rho,
            "sigma_embedding": sigma, "released": released}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--no-noise", action="store_true",
                    help="also the rows without noise (what each model keeps)")
    ap.add_argument("--bandwidth-scale", type=float, default=1.0,
                    help="the kernel's length scale as a multiple of the public median "
                         "distance")
    ap.add_argument("--rows", nargs="+", default=None, metavar="START,SHARE,D",
                    help="the rows to run (default: every row of ROWS)")
    ap.add_argument("--out", default="benchmarks/results/dp_kernel_embedding.json")
    args = ap.parse_args()
    table, interest, sensitive, _ = load("fsdd")
    aux, main_part = split_auxiliary(table, sensitive)
    tr, te = split_table(main_part, interest, sensitive, 0.25, 0)
    train, test = main_part.subset(tr), main_part.subset(te)
    parts = {"aux": aux, "train": train, "interest": interest,
             "y": train.labels[interest].to_numpy(),
             "bounds": public_bounds(aux.X, quantile=0.01, margin=0.1),
             "bandwidth_scale": args.bandwidth_scale}
    grid = ROWS if args.rows is None else tuple(
        (a, float(b), int(c)) for a, b, c in (r.split(",") for r in args.rows))
    y_test = test.labels[interest].to_numpy()
    epsilons = [args.epsilon] + ([NO_NOISE] if args.no_noise else [])
    rows = []
    for eps in epsilons:
        for start, share, D in grid:
            for seed in args.seeds:
                t0, c0 = time.perf_counter(), time.process_time()
                row = one_row(start, share, D, eps, seed, parts)
                panel = consumer_panel(train.X, parts["y"], row.pop("released"), test.X,
                                       y_test, seed=0, n_jobs=1, models=MODELS)
                row.update(seed=seed, pick=panel["pick"], cas=panel["cas"]["value"],
                           cas_ci=panel["cas"]["ci"], clear=panel["clear"]["value"],
                           ratio=panel["cas"]["value"] / panel["clear"]["value"],
                           by_model={m["model"]: m["release_to_clear"]["value"]
                                     for m in panel["models"]},
                           seconds=round(time.perf_counter() - t0, 1),
                           cpu_seconds=round(time.process_time() - c0, 1),
                           load_average=round(os.getloadavg()[0], 2),
                           n_records=train.n_records, n_features=train.n_features)
                rows.append(row)
                print(f"eps={'none' if eps >= NO_NOISE else f'{eps:g}':5s} {start:8s} "
                      f"share={share:.1f} D={D:<5d} seed={seed}  pick {row['pick']:6s} "
                      f"CAS {row['cas']:.3f} / clear {row['clear']:.3f} = "
                      f"{row['ratio']:.3f}  {row['seconds']}s load {row['load_average']}",
                      flush=True)
    summary = {}
    for r in rows:
        key = f"{'none' if r['epsilon'] >= NO_NOISE else r['epsilon']}|{r['start']}|" \
              f"{r['share']}|{r['D']}"
        summary.setdefault(key, []).append(r["ratio"])
    print("mean CAS / clear over seeds:")
    for key, vals in summary.items():
        print(f"  {key:28s} {np.mean(vals):.3f} (min {min(vals):.3f}, max {max(vals):.3f})")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "mean_ratio": {k: float(np.mean(v))
                                                            for k, v in summary.items()}},
                              indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
