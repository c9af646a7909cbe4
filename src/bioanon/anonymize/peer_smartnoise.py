"""The DP peer users would pick instead: SmartNoise's synthesizers (``smartnoise-dp``).

A thin adapter so that OpenDP SmartNoise's differentially private synthesizers
(``snsynth``: DP-CTGAN, PATE-CTGAN; Rosenblatt et al. 2020) are judged by the same evaluation,
at the same ε, and timed in the same run as bioanon's DP methods. One synthesizer is fitted
on the feature columns plus the interest label (a categorical column); it samples records in
batches until every class has as many as the input (its own labels kept, in input order).
A class the synthesizer rarely produces (mode collapse) is filled by drawing its synthetic
records again (with replacement; post-processing). The features are clipped to the public
box ``bounds`` (or the box of ``public_data``) and
scaled by SmartNoise's ``MinMaxTransformer`` with those bounds declared, so SmartNoise spends
no budget on preprocessing and the guarantee is strict (record unit, δ = 1/n² given to its
DP-SGD accountant; DP-CTGAN stops training when the accountant reaches ε, checked before each
epoch, as SmartNoise ships it). AIM and MST need every column discretized: 400 continuous columns
are out of their reach, so they are not offered.

SmartNoise pins packages the project's own environment does not take (numpy, opacus, torch):
it lives in its own virtual environment (``pip install 'bioanon[peer-dp]'`` there, or
``python3.11 -m venv peer && peer/bin/pip install smartnoise-synth``), named by the parameter
``python`` or the environment variable ``BIOANON_PEER_PYTHON``. The adapter then runs the
synthesizer in that interpreter: the clipped features and label codes go through a private
temporary directory (mode 0700, deleted after), the seed on the command line, never in a
file. Without either, ``snsynth`` is imported in process; if it is missing a one-line
:class:`~bioanon.errors.BioanonError` says how to install it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..errors import BioanonError
from ..privacy import check_epsilon, public_bounds
from ..table import FeatureTable
from .base import Anonymizer, DPCapability
from .params import Param, epsilon_param
from .registration import register
from .strata import strata

SYNTHESIZERS = ("dpctgan", "patectgan")
_ROUNDS = 8

#: run by the peer's interpreter: python WORKER DIR SYNTH EPS EPOCHS SEED
WORKER = r'''
import sys, warnings
import numpy as np, pandas as pd
warnings.filterwarnings("ignore")
from snsynth import Synthesizer
from snsynth.transform import (ChainTransformer, LabelTransformer, MinMaxTransformer,
                               OneHotEncoder, TableTransformer)
folder, name, eps, epochs, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
np.random.seed(seed % 2**32)
try:
    import torch
    torch.manual_seed(seed)
except ImportError:
    pass
data = np.load(folder + "/in.npz")
X, y, lo, hi, need = data["X"], data["y"], data["lo"], data["hi"], data["need"]
cols = [f"f{j}" for j in range(X.shape[1])]
frame = pd.DataFrame(X, columns=cols)
frame["label"] = [f"c{v}" for v in y]
tt = TableTransformer([MinMaxTransformer(lower=float(a), upper=float(b), negative=True)
                       for a, b in zip(lo, hi)]
                      + [ChainTransformer([LabelTransformer(), OneHotEncoder()])])
batch = max(10, min(500, (X.shape[0] // 2) // 10 * 10))  # a batch below the record count
kw = {"batch_size": batch, "delta": float(data["delta"])}
if name == "dpctgan":
    kw["epochs"] = epochs
synth = Synthesizer.create(name, epsilon=eps, verbose=False, **kw)
synth.fit(frame, transformer=tt, preprocessor_eps=0.0)
parts = []
for _ in range(int(data["rounds"])):
    out = synth.sample(int(max(need.sum(), 1) * 2))
    parts.append(out)
    got = pd.concat(parts)["label"].value_counts()
    if all(got.get(f"c{k}", 0) >= n for k, n in enumerate(need)):
        break
out = pd.concat(parts)
np.savez(folder + "/out.npz", X=out[cols].to_numpy(dtype=np.float64),
         y=np.array([int(str(v)[1:]) if str(v).startswith("c") else -1
                     for v in out["label"]]))
'''


def _python(explicit: str | None) -> str | None:
    return explicit or os.environ.get("BIOANON_PEER_PYTHON") or None


@register("smartnoise-dp")
class SmartNoiseAnonymizer(Anonymizer):
    """SmartNoise's DP-CTGAN or PATE-CTGAN at a declared ε: the DP peer, for comparison.

    Parameters
    ----------
    interest : str
        Label column kept (modelled as a categorical column of the synthesizer).
    synthesizer : {"dpctgan", "patectgan"}, default "dpctgan"
    epsilon : float, default 4
        The privacy budget ε of the synthesizer (SmartNoise's accounting, record unit).
    bounds : (lo, hi), optional
        Public clipping box; default the box of ``public_data``.
    public_data : array (m, d), optional
        Records of people not in the release (the box, 1% / 99% quantiles widened by 10%).
    epochs : int, default 30
        DP-CTGAN's training epochs.
    python : str, optional
        The interpreter of the environment SmartNoise is installed in (default the
        environment variable ``BIOANON_PEER_PYTHON``, else this process).
    random_state : int or None
        Secret seed (numpy's and torch's in the synthesizer's process); never published.

    Examples
    --------
    >>> SmartNoiseAnonymizer("digit", epsilon=4.0).get_params()["synthesizer"]
    'dpctgan'
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="label column kept"),
        "synthesizer": Param("str", options=SYNTHESIZERS, help="SmartNoise synthesizer"),
        "epsilon": epsilon_param(),
        "bounds": Param("floats", none=True, help="public clipping box lo,hi"),
        "public_data": Param("object", none=True, help="public records (the box)"),
        "epochs": Param("int", low=1, help="DP-CTGAN training epochs"),
        "python": Param("path", none=True,
                        help="interpreter of SmartNoise's environment (BIOANON_PEER_PYTHON)"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    dp = DPCapability(("record",), "SmartNoise's own (DP-SGD or PATE accounting)",
                      delta="1/n^2, n the records (passed to SmartNoise's DP-SGD accountant)",
                      basis="none (all d features)")
    protects = ("every record's features and label by SmartNoise's (epsilon, delta)-DP "
                "accounting (record unit) when the box is public")
    does_not_protect = ("identities with several records (record unit only); utility of "
                        "many continuous columns (a GAN trained with DP-SGD); needs the "
                        "optional smartnoise-synth in its own environment (bioanon[peer-dp])")

    def __init__(self, interest: str = "interest", synthesizer: str = "dpctgan",
                 epsilon: float = 4.0, bounds: Any = None, public_data: Any = None,
                 epochs: int = 30, python: str | None = None,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.synthesizer = synthesizer
        self.epsilon = epsilon
        self.bounds = bounds
        self.public_data = public_data
        self.epochs = epochs
        self.python = python
        self.random_state = random_state

    def _check_relations(self) -> None:
        if self.bounds is None and self.public_data is None:
            raise BioanonError("smartnoise-dp needs a public box: pass bounds=(lo, hi) or "
                               "public_data (records of people not in the release)")

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        strata(labels, self.interest, [], X.shape[0])
        self.epsilon_ = check_epsilon(self.epsilon)
        self.delta_ = 1.0 / max(X.shape[0], 2) ** 2  # passed to SmartNoise's accountant
        self.privacy_unit_ = "record"

    def _box(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        if self.bounds is not None:
            lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (d,)).copy()
                      for b in self.bounds)
            return lo, hi
        return public_bounds(np.asarray(self.public_data, dtype=np.float64), quantile=0.01,
                             margin=0.1)

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> np.ndarray:
        n, d = X.shape
        _, strat = strata(labels, self.interest, [], n)
        lo, hi = self._box(d)
        hi = np.where(hi > lo, hi, lo + 1e-6)
        Xc = np.clip(np.asarray(X, dtype=np.float64), lo, hi)
        need = np.bincount(strat)
        with tempfile.TemporaryDirectory(prefix="bioanon-peer-") as folder:
            os.chmod(folder, 0o700)
            np.savez(Path(folder) / "in.npz", X=Xc, y=strat, lo=lo, hi=hi, need=need,
                     rounds=_ROUNDS, delta=1.0 / max(n, 2) ** 2)
            self._run(folder, seed)
            with np.load(Path(folder) / "out.npz") as res:
                Xs, ys = res["X"], res["y"]
        out = np.empty((n, d), dtype=np.float32)
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        for k in range(need.size):  # a loop over classes: each class's first samples
            rows = np.flatnonzero(strat == k)
            mine = Xs[ys == k]
            if mine.shape[0] == 0:
                raise BioanonError(f"SmartNoise sampled no record of class {k} in {_ROUNDS} "
                                   "rounds; the class is too rare for the synthesizer")
            if mine.shape[0] < rows.size:  # a collapsed class: its samples drawn again
                mine = mine[rng.integers(0, mine.shape[0], rows.size)]
            out[rows] = mine[:rows.size]
        return out

    def _run(self, folder: str, seed: int) -> None:
        args = [folder, self.synthesizer, repr(float(self.epsilon)), str(int(self.epochs)),
                str(int(seed) % (2**31))]
        python = _python(self.python)
        if python is None:
            try:
                import snsynth  # noqa: F401
            except ImportError:
                raise BioanonError("smartnoise-dp needs smartnoise-synth; install it in its "
                                   "own environment (python3.11 -m venv peer && peer/bin/pip "
                                   "install smartnoise-synth) and set BIOANON_PEER_PYTHON="
                                   "peer/bin/python") from None
            python = sys.executable
        done = subprocess.run([python, "-c", WORKER, *args], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise BioanonError(f"SmartNoise failed in {python}: {last}")

    def public_params(self) -> dict[str, Any]:
        """Publishable parameters (the public records are named, not written)."""
        params = super().public_params()
        params["public_data"] = None if self.public_data is None else "given (not written)"
        return params


__all__ = ["SmartNoiseAnonymizer"]
