"""The k-Same family against blur and pixelation on Yale faces, and every method on FSDD.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 BIOANON_DATA=../shared/datasets \
        .venv/bin/python benchmarks/ksame_vs_blur.py [--part yale|fsdd|all]

(one BLAS thread: on the shared 2-core machine, threads oversubscribe and run 20× slower)

Yale faces (15 subjects): the face area (rows 35..227, columns 90..250 of the 243×320 photos)
downsampled 4× to 48×40 pixels, values 0..255.

- Privacy: rank-1 of a PCA (eigenface, 40 components) nearest-neighbour recognizer on
  person-specific sets, as Gross et al.: the gallery is every subject's 'normal' image, each
  probe set is one other condition (one image per subject); subjects whose probe image is
  byte-identical to their gallery image (README: identical_to) are left out of that probe set.
  The eigenspace is fitted on the clear images of the conditions that are neither gallery nor
  probe (the parrot attacker fits it on those images anonymized the same way). Methods are
  applied to each probe set (and, for reverse/parrot, to the gallery). Rates are averaged over
  the 10 probe sets. Attackers: naive (clear gallery, released probes), reverse (released
  gallery, clear probes), parrot (released gallery and probes).
- Utility: expression (6 classes, 90 images) by a linear SVM with 5-fold cross-validation
  grouped by subject (the duplicate normal/sad pair of subject04 stays in one fold), (a) as
  the paper: trained and tested on the released images; (b) trained on clear images, tested
  on released ones.
- Information loss: mean Euclidean distance (pixels 0..255) on the expression set.

FSDD (3,000 recordings, 400 MFCC features): every method through bioanon.evaluate (interest
digit, sensitive speaker; attackers naive/parrot with forest, linear SVM, kNN, and linkage),
next to the selective-mean anonymizer (g=64, t=0.8, w=10, r_p=0.01).

Writes benchmarks/results/ksame_vs_blur_{yale,fsdd}.json and a PNG of the Yale privacy figure.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from bioanon.anonymize import (
    BlurAnonymizer,
    ClusterMixAnonymizer,
    EyeBandMaskAnonymizer,
    GaussianNoiseAnonymizer,
    KSameAnonymizer,
    KSameSelectAnonymizer,
    LaplaceAnonymizer,
    PixelateAnonymizer,
    SelectiveMeanAnonymizer,
)
from bioanon.datasets.home import data_home
from bioanon.metrics import information_loss, is_k_anonymous, rank1

RESULTS = Path(__file__).parent / "results"
SHAPE = (48, 40)
N_COMPONENTS = 40


# ---------------------------------------------------------------------- Yale faces
def load_yale(root: Path) -> tuple[np.ndarray, pd.DataFrame]:
    from PIL import Image

    folder = root / "yale_faces"
    labels = pd.read_csv(folder / "labels.csv").fillna({"expression": "", "identical_to": ""})
    imgs = []
    for f in labels["file"]:
        im = np.asarray(Image.open(folder / f).convert("L"), dtype=np.float64)[35:227, 90:250]
        imgs.append(im.reshape(SHAPE[0], 4, SHAPE[1], 4).mean(axis=(1, 3)).ravel())
    return np.asarray(imgs), labels


def yale_methods() -> list[tuple[str, str, object]]:
    out: list[tuple[str, str, object]] = [("clear", "-", None)]
    for k in (2, 3, 5, 8):
        out.append(("ksame", f"k={k}", KSameAnonymizer(k=k)))
    for k in (2, 3, 5, 8):
        out.append(("ksame-select", f"k={k}",
                    KSameSelectAnonymizer("expression", k=k)))
    for s in (1, 2, 4, 6, 8):
        out.append(("blur", f"sigma={s}", BlurAnonymizer(sigma=s, image_shape=SHAPE)))
    for p in (2, 3, 4, 6, 8):
        out.append(("pixelate", f"p={p}", PixelateAnonymizer(block=p, image_shape=SHAPE)))
    out.append(("mask", "eye band", EyeBandMaskAnonymizer(band=(0.3, 0.55),
                                                          image_shape=SHAPE)))
    return out


def release(anon: object, X: np.ndarray, labels: pd.DataFrame | None = None) -> np.ndarray:
    if anon is None:
        return X
    return np.asarray(clone(anon).fit_transform(X, labels), dtype=np.float64)


def yale_privacy(X: np.ndarray, lab: pd.DataFrame, name: str, anon: object,
                 gallery_cond: str = "normal") -> dict[str, float]:
    rates: dict[str, list[float]] = {"clear": [], "naive": [], "reverse": [], "parrot": []}
    gal = lab.index[lab["condition"] == gallery_cond].to_numpy()
    gal_ids = lab.loc[gal, "subject"].to_numpy()
    gal_files = dict(zip(lab.loc[gal, "subject"], lab.loc[gal, "file"], strict=True))
    for cond in sorted(set(lab["condition"]) - {gallery_cond}):
        probe = lab.index[lab["condition"] == cond].to_numpy()
        keep = [i for i in probe
                if lab.loc[i, "subject"] in gal_files
                and Path(gal_files[lab.loc[i, "subject"]]).stem.split("_", 1)[1]
                not in lab.loc[i, "identical_to"]]
        probe = np.asarray(keep)
        aux = lab.index[~lab["condition"].isin([gallery_cond, cond])].to_numpy()
        p_ids = lab.loc[probe, "subject"].to_numpy()
        if name == "ksame-select":  # the probe set has one expression: k-Same within it
            sel = KSameAnonymizer(k=anon.k)  # type: ignore[attr-defined]
            probe_rel, gal_rel = release(sel, X[probe]), release(sel, X[gal])
            aux_rel = release(sel, X[aux])
        else:
            probe_rel, gal_rel = release(anon, X[probe]), release(anon, X[gal])
            aux_rel = release(anon, X[aux])
        clear_pca = PCA(N_COMPONENTS, random_state=0).fit(X[aux])
        parrot_pca = PCA(N_COMPONENTS, random_state=0).fit(aux_rel)
        rates["clear"].append(rank1(X[gal], gal_ids, X[probe], p_ids, clear_pca))
        rates["naive"].append(rank1(X[gal], gal_ids, probe_rel, p_ids, clear_pca))
        rates["reverse"].append(rank1(gal_rel, gal_ids, X[probe], p_ids, clear_pca))
        rates["parrot"].append(rank1(gal_rel, gal_ids, probe_rel, p_ids, parrot_pca))
    return {m: float(np.mean(v)) for m, v in rates.items()}


def yale_utility(X: np.ndarray, lab: pd.DataFrame, anon: object) -> dict[str, float]:
    expr = lab.index[lab["condition_group"] == "expression"].to_numpy()
    Xe, le = X[expr], lab.loc[expr].reset_index(drop=True)
    y, groups = le["expression"].to_numpy(), le["subject"].to_numpy()
    R = release(anon, Xe, le)
    paper, clear_trained = [], []
    for tr, te in GroupKFold(n_splits=5).split(Xe, y, groups):
        svm = make_pipeline(StandardScaler(), SVC(kernel="linear"))
        paper.append(np.mean(clone(svm).fit(R[tr], y[tr]).predict(R[te]) == y[te]))
        clear_trained.append(np.mean(clone(svm).fit(Xe[tr], y[tr]).predict(R[te]) == y[te]))
    out = {"expression_cv_released": float(np.mean(paper)),
           "expression_clear_trained": float(np.mean(clear_trained)),
           "information_loss": information_loss(Xe, R)}
    if isinstance(anon, KSameAnonymizer | KSameSelectAnonymizer):
        out["k_anonymous"] = bool(is_k_anonymous(R, anon.k))
    return out


def run_yale(root: Path) -> list[dict]:
    X, lab = load_yale(root)
    rows = []
    for name, param, anon in yale_methods():
        t0 = time.perf_counter()
        row = {"method": name, "param": param, **yale_privacy(X, lab, name, anon),
               **yale_utility(X, lab, anon), "seconds": round(time.perf_counter() - t0, 1)}
        if name.startswith("ksame"):
            row["bound_1_over_k"] = 1.0 / anon.k  # type: ignore[attr-defined]
        rows.append(row)
        print(f"{name:13s} {param:9s} rank1 clear {row['clear']:.2f} naive {row['naive']:.2f} "
              f"reverse {row['reverse']:.2f} parrot {row['parrot']:.2f} | expr cv-released "
              f"{row['expression_cv_released']:.2f} clear-trained "
              f"{row['expression_clear_trained']:.2f} | IL {row['information_loss']:.0f}",
              flush=True)
    rows.extend(yale_multi_image(X, lab))
    return rows


def yale_multi_image(X: np.ndarray, lab: pd.DataFrame, k: int = 5) -> list[dict]:
    """k-Same on all non-gallery images at once (about 10 per subject): identity rank-1,
    plain and with clusters of k different subjects (``distinct``)."""
    gal = lab.index[lab["condition"] == "normal"].to_numpy()
    rest = lab.index[lab["condition"] != "normal"].to_numpy()
    pca = PCA(N_COMPONENTS, random_state=0).fit(X[rest])
    rows = []
    for param, anon in ((f"k={k}", KSameAnonymizer(k=k)),
                        (f"k={k} distinct subjects", KSameAnonymizer(k=k, distinct="subject"))):
        R = release(anon, X[rest], lab.loc[rest].reset_index(drop=True))
        r = rank1(X[gal], lab.loc[gal, "subject"].to_numpy(), R,
                  lab.loc[rest, "subject"].to_numpy(), pca)
        print(f"ksame {param} on a multi-image set (not person-specific): naive identity "
              f"rank-1 {r:.2f} (1/k = {1 / k:.2f}), IL {information_loss(X[rest], R):.0f}",
              flush=True)
        rows.append({"method": "ksame (multi-image set)", "param": param, "naive": r,
                     "bound_1_over_k": 1.0 / k, "information_loss": information_loss(X[rest], R)})
    return rows


def plot_yale(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4), sharey=True)
    for ax, mode in zip(axes, ("naive", "reverse", "parrot"), strict=True):
        for name, marker in (("ksame", "o"), ("ksame-select", "s"), ("blur", "^"),
                             ("pixelate", "v")):
            sel = [r for r in rows if r["method"] == name]
            ax.plot(range(len(sel)), [r[mode] for r in sel], marker + "-", label=name)
        ks = [2, 3, 5, 8]
        ax.plot(range(4), [1 / k for k in ks], "k:", label="1/k (k-Same levels)")
        ax.set_title(f"{mode} attacker (PCA rank-1)")
        ax.set_xlabel("level (k: 2,3,5,8 | blur σ: 1,2,4,6,8 | pixel p: 2,3,4,6,8)")
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("rank-1 recognition")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---------------------------------------------------------------------- FSDD
def fsdd_methods() -> list[tuple[str, str, object]]:
    return [
        ("selective-mean", "g=64 t=0.8 w=10 r_p=0.01",
         SelectiveMeanAnonymizer("digit", g=64, t=0.8, w=10, r_p=0.01, random_state=0)),
        ("ksame", "k=2", KSameAnonymizer(k=2)),
        ("ksame", "k=5", KSameAnonymizer(k=5)),
        ("ksame", "k=8", KSameAnonymizer(k=8)),
        ("ksame-select", "k=5", KSameSelectAnonymizer("digit", k=5)),
        ("ksame", "k=5 distinct speakers", KSameAnonymizer(k=5, distinct="speaker")),
        ("ksame-select", "k=5 distinct speakers",
         KSameSelectAnonymizer("digit", k=5, distinct="speaker")),
        ("cluster-mix", "k=5 mdav delta=0.05 risk loop",
         ClusterMixAnonymizer(k=5, sensitive="speaker", delta=0.05, random_state=0)),
        ("cluster-mix", "k=5 distinct delta=0.05 risk loop",
         ClusterMixAnonymizer(k=5, sensitive="speaker", distinct="speaker", delta=0.05,
                              random_state=0)),
        ("noise", "sigma=0.5 std", GaussianNoiseAnonymizer(0.5, scale="std", random_state=0)),
        ("noise", "sigma=1 std", GaussianNoiseAnonymizer(1.0, scale="std", random_state=0)),
        ("laplace", "eps=100 per feature",
         LaplaceAnonymizer(epsilon=100, budget="feature", random_state=0)),
    ]


def run_fsdd(root: Path) -> list[dict]:
    from bioanon import evaluate
    from bioanon.datasets.fsdd import load_fsdd

    table = load_fsdd(root)
    rows = []
    for name, param, anon in fsdd_methods():
        t0 = time.perf_counter()
        rep = evaluate(table, "digit", "speaker", anonymizer=anon,
                       models=["forest", "linear_svm", "knn"], random_state=0)
        doc = rep.data if hasattr(rep, "data") else dict(rep)
        att = doc["privacy"]["attacks"]
        best = {m: max(a["accuracy"] for a in att if a["mode"] == m)
                for m in ("naive", "parrot", "linkage")}
        released = np.asarray(clone(anon).fit_transform(table.X, table.labels))
        row = {"method": name, "param": param,
               "digit_clear": doc["utility"]["interest"]["clear"],
               "digit_anonymized": doc["utility"]["interest"]["anonymized"],
               "speaker_chance": doc["privacy"]["chance"],
               **{f"speaker_{m}": v for m, v in best.items()},
               "worst_case": doc["privacy"]["worst_case"]["accuracy"],
               "worst_case_attacker": f"{doc['privacy']['worst_case']['mode']}/"
                                      f"{doc['privacy']['worst_case']['model']}",
               "information_loss": information_loss(table.X, released),
               "seconds": round(time.perf_counter() - t0, 1)}
        rows.append(row)
        print(f"{name:14s} {param:30s} digit {row['digit_anonymized']:.3f} "
              f"(clear {row['digit_clear']:.3f}) speaker naive {row['speaker_naive']:.3f} "
              f"parrot {row['speaker_parrot']:.3f} linkage {row['speaker_linkage']:.3f} "
              f"worst {row['worst_case']:.3f} ({row['worst_case_attacker']}) "
              f"IL {row['information_loss']:.1f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["yale", "fsdd", "all"], default="all")
    args = ap.parse_args()
    root = data_home()
    RESULTS.mkdir(exist_ok=True)
    if args.part in ("yale", "all"):
        rows = run_yale(root)
        (RESULTS / "ksame_vs_blur_yale.json").write_text(json.dumps(rows, indent=2))
        plot_yale(rows, RESULTS / "ksame_vs_blur_yale.png")
    if args.part in ("fsdd", "all"):
        rows = run_fsdd(root)
        (RESULTS / "ksame_vs_blur_fsdd.json").write_text(json.dumps(rows, indent=2))
    print(f"wrote results to {RESULTS}")


if __name__ == "__main__":
    main()
