"""The global decoupler (section 3.1): a β-VAE whose first k latents carry the sensitive attribute.

Trained on auxiliary data only, with the objective of equation (5)::

    α1 (recon + β KL) + α2 CE(g_u(z_S), y_S) + α3 dcorr²(z_S, z_NS) + α4 confusion(h_v, z_NS)

The adversary h_v minimises CE(h_v(z_NS), y_S) with its own optimizer; the encoder minimises
the cross-entropy of h_v's output against the uniform distribution. This is the stable form
of the paper's ``− α4 min_v L4``: maximising h_v's cross-entropy directly (gradient reversal)
lets the encoder hide y_S by flipping it, which a fresh attacker reads back. On planted data
a post-hoc logistic regression read y_S from z_NS at 0.74 with reversal, 0.63 without any
adversary and 0.56 with this confusion loss (chance 0.5).

dcorr and the adversary act on the posterior means, which are what gets released; the aligner
acts on sampled z_S. Reconstruction uses a Gaussian likelihood with each feature's variance
set to its batch error, and β rises from 0 over the first ``warmup`` share of the steps; both
keep the posterior from collapsing at β = 5. Against this summed (per-record) ELBO the
paper's α2 = α4 = 1 leave the aligner and the adversary too weak to move anything, so the
defaults are α2 = α4 = 10 (α1 = 1, α3 = 100).

Features are standardized with the auxiliary mean and scale, which travel with the model. The
file also carries public bounds of z_S measured on the auxiliary data (the box of DP
obfuscation, the centre and radius of DP sampling): computed without the owner's data, so they
cost the owner no privacy.

Torch is imported only when a decoupler is trained, loaded or used.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import BioanonError, install_hint
from ...io import atomic_path

FORMAT = "bioanon-decoupler"
FORMAT_VERSION = 1
Progress = Callable[[int, int, str], None]


def import_torch() -> Any:
    """Import torch or explain how to install it."""
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        raise BioanonError(f"the sanitizer needs PyTorch; {install_hint('deep')}") from None
    from .networks import set_threads

    set_threads()
    return torch


DEFAULT_CONFIG: dict[str, Any] = {
    "latent_dim": 32, "sensitive_dim": 8, "beta": 5.0, "alpha_vae": 1.0, "alpha_aligner": 10.0,
    "alpha_dcorr": 100.0, "alpha_adversary": 10.0, "hidden": 256, "architecture": "mlp",
    "image_shape": None, "epochs": 60, "batch_size": 256, "lr": 2e-3, "warmup": 0.3,
}


#: the most weights a decoupler may hold (400 MB of float32; training keeps about four times
#: that: the gradients and Adam's two moments)
MAX_WEIGHTS = 100_000_000
#: the most training epochs (the default is 60): a typo such as epochs=60000000000 trained
#: until stopped, with no sign it would not end
MAX_EPOCHS = 100_000


def _refuse_oversized(c: dict[str, Any], n_features: int) -> None:
    """Refuse a latent or hidden size whose networks would not fit in memory (a typo such as
    latent_dim=1000000000 once failed inside torch's allocator, as an internal error)."""
    m, h = c["latent_dim"], c["hidden"]
    # encoder and decoder (the conv heads map the latent to at most 64·8·8 cells), adversary
    body = 4096 if c["architecture"] == "conv" else h
    weights = 2 * n_features * h + h * h + 2 * m * body + 128 * m
    if weights > MAX_WEIGHTS:
        raise BioanonError(
            f"latent_dim={m} and hidden={h} make a decoupler of {weights / 1e6:,.0f} million "
            f"weights on {n_features} features, more than the {MAX_WEIGHTS // 10**6} million "
            "bioanon trains in memory; lower the latent size or the hidden width (e.g. "
            "latent_dim=32 and hidden=256)",
            parameter=("latent_dim", "hidden"))


def check_config(cfg: dict[str, Any], n_features: int) -> dict[str, Any]:
    """Validate the training configuration; return it with plain Python types."""
    unknown = sorted(set(cfg) - set(DEFAULT_CONFIG))
    if unknown:
        raise BioanonError(f"unknown decoupler options {unknown}; known: {sorted(DEFAULT_CONFIG)}")
    c = {**DEFAULT_CONFIG, **cfg}
    for key in ("latent_dim", "sensitive_dim", "hidden", "epochs", "batch_size"):
        if int(c[key]) != c[key] or int(c[key]) < 1:
            raise BioanonError(f"{key}={c[key]} must be a positive integer")
        c[key] = int(c[key])
    if c["epochs"] > MAX_EPOCHS:
        raise BioanonError(f"epochs={c['epochs']} is out of range; use at most {MAX_EPOCHS:,} "
                           "training epochs (the default is 60)", parameter="epochs")
    if not c["sensitive_dim"] < c["latent_dim"]:
        raise BioanonError(f"sensitive_dim={c['sensitive_dim']} must be smaller than "
                           f"latent_dim={c['latent_dim']} (z_NS would be empty)")
    _refuse_oversized(c, n_features)
    for key in ("beta", "alpha_vae", "alpha_aligner", "alpha_dcorr", "alpha_adversary"):
        c[key] = float(c[key])
        if c[key] < 0:
            raise BioanonError(f"{key}={c[key]} must be non-negative")
    c["warmup"] = float(c["warmup"])
    if not 0.0 <= c["warmup"] < 1.0:
        raise BioanonError(f"warmup={c['warmup']} must lie in [0, 1): the share of epochs over "
                           "which β rises from 0")
    c["lr"] = float(c["lr"])
    if not 0 < c["lr"] <= 1:  # lr=1e300 overflowed torch's float: an internal error
        raise BioanonError(f"lr={c['lr']:g} is out of range; use a learning rate in (0, 1], "
                           "e.g. 0.002")
    if c["architecture"] not in ("mlp", "conv"):
        raise BioanonError(f"architecture '{c['architecture']}' is unknown; use mlp or conv")
    if c["architecture"] == "conv":
        shape = c["image_shape"]
        if shape is None:
            side = int(round(np.sqrt(n_features)))
            if side * side != n_features:
                raise BioanonError("the conv decoupler needs image_shape=(height, width) for "
                                   f"{n_features} non-square pixel features")
            shape = (side, side)
        shape = (int(shape[0]), int(shape[1]))
        if shape[0] * shape[1] != n_features or max(shape) > 64 or min(shape) < 1:
            raise BioanonError(f"image_shape={shape} must multiply to the {n_features} features "
                               "and be at most 64×64, each side at least 1")
        c["image_shape"] = list(shape)
    else:
        c["image_shape"] = None
    return c


class Decoupler:
    """A trained global decoupler: standardization, networks, and public latent bounds.

    Build one with :func:`train_decoupler` or :meth:`load`. ``encode`` returns the posterior
    means z = (z_S, z_NS); ``decode`` maps latents back to features.
    """

    def __init__(self, net: Any, config: dict[str, Any], info: dict[str, Any]) -> None:
        self.net = net
        self.config = config
        self.info = info

    # ------------------------------------------------------------------ properties
    @property
    def n_features(self) -> int:
        return int(self.info["n_features"])

    @property
    def sensitive(self) -> str:
        return str(self.info["sensitive"])

    @property
    def k(self) -> int:
        return int(self.config["sensitive_dim"])

    def _tensor(self, X: np.ndarray) -> Any:
        torch = import_torch()
        mean = np.asarray(self.info["mean"], dtype=np.float32)
        scale = np.asarray(self.info["scale"], dtype=np.float32)
        return torch.from_numpy(((np.asarray(X, dtype=np.float32) - mean) / scale)
                                .astype(np.float32))

    # ------------------------------------------------------------------ use
    def check_features(self, n_features: int, feature_names: Sequence[str] | None = None,
                       sensitive: str | None = None) -> None:
        """Raise if data or labels differ from those the decoupler was trained for."""
        if n_features != self.n_features:
            raise BioanonError(
                f"the decoupler was trained on {self.n_features} features but the data has "
                f"{n_features}; train a decoupler on auxiliary data with these features "
                "(bioanon train-decoupler)")
        names = self.info.get("feature_names")
        if names and feature_names is not None and list(map(str, feature_names)) != names:
            bad = next(i for i, (a, b) in enumerate(zip(names, feature_names, strict=False))
                       if a != str(b))
            raise BioanonError(
                f"feature {bad} is '{feature_names[bad]}' but the decoupler was trained with "
                f"'{names[bad]}'; use data with the decoupler's features")
        if sensitive is not None and sensitive != self.sensitive:
            raise BioanonError(
                f"the decoupler was trained to isolate '{self.sensitive}', not '{sensitive}'; "
                f"use sensitive={self.sensitive} or train a decoupler for '{sensitive}'",
                parameter="sensitive")

    def encode(self, X: np.ndarray, batch: int = 4096) -> np.ndarray:
        """Posterior means (n, latent_dim) of the records ``X`` (n, d)."""
        torch = import_torch()
        x = self._tensor(X)
        self.net.eval()
        with torch.no_grad():
            parts = [self.net.encode(x[i:i + batch])[0] for i in range(0, x.shape[0], batch)]
        return (torch.cat(parts).numpy().astype(np.float64) if parts
                else np.zeros((0, self.config["latent_dim"])))

    def decode(self, Z: np.ndarray, batch: int = 4096) -> np.ndarray:
        """Features (n, d) in the original units from latents (n, latent_dim)."""
        torch = import_torch()
        z = torch.from_numpy(np.asarray(Z, dtype=np.float32))
        self.net.eval()
        with torch.no_grad():
            parts = [self.net.decoder(z[i:i + batch]) for i in range(0, z.shape[0], batch)]
        out = (torch.cat(parts).numpy() if parts
               else np.zeros((0, self.n_features), dtype=np.float32))
        mean = np.asarray(self.info["mean"], dtype=np.float32)
        scale = np.asarray(self.info["scale"], dtype=np.float32)
        return (out * scale + mean).astype(np.float32)

    def split(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(z_S, z_NS) of latents ``Z``."""
        return Z[:, :self.k], Z[:, self.k:]

    def summary(self) -> dict[str, Any]:
        """Public description (no weights): configuration and training diagnostics."""
        keep = ("n_features", "sensitive", "classes", "n_train", "train_seconds", "final")
        return {"config": dict(self.config), **{k: self.info[k] for k in keep if k in self.info}}

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> Path:
        """Write the decoupler (weights + metadata) atomically with ``torch.save``."""
        torch = import_torch()
        payload = {"format": FORMAT, "version": FORMAT_VERSION, "config": self.config,
                   "info": self.info, "state": self.net.state_dict()}
        with atomic_path(path) as tmp:
            torch.save(payload, tmp)
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Decoupler:
        """Read a decoupler written by :meth:`save` (tensors and plain values only)."""
        torch = import_torch()
        path = Path(path)
        if not path.is_file():
            raise BioanonError(f"decoupler file '{path}' not found; train one with "
                               "bioanon train-decoupler")
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
        except Exception:  # noqa: BLE001 - any unreadable file is a user error here
            raise BioanonError(f"'{path}' is not a readable decoupler file; train one with "
                               "bioanon train-decoupler") from None
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise BioanonError(f"'{path}' is not a bioanon decoupler file; train one with "
                               "bioanon train-decoupler")
        if payload.get("version") != FORMAT_VERSION:
            raise BioanonError(f"'{path}' has decoupler format version "
                               f"{payload.get('version')}, this bioanon reads {FORMAT_VERSION}; "
                               "retrain it")
        try:
            config, info = payload["config"], payload["info"]
            net = _build_net(config, info)
            net.load_state_dict(payload["state"])
        except BioanonError:
            raise
        except Exception as exc:  # noqa: BLE001 - a tampered or damaged file is a user error
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
            raise BioanonError(f"'{path}' is a damaged decoupler file ({reason}); retrain it "
                               "with bioanon train-decoupler") from None
        net.eval()
        return cls(net, config, info)


def _build_net(config: dict[str, Any], info: dict[str, Any]) -> Any:
    import_torch()
    from .networks import DecouplerNet

    shape = config["image_shape"]
    return DecouplerNet(int(info["n_features"]), len(info["classes"]), config["latent_dim"],
                        config["sensitive_dim"], config["hidden"], config["architecture"],
                        None if shape is None else (int(shape[0]), int(shape[1])))


def train_decoupler(X: np.ndarray, y: Any, sensitive: str,
                    feature_names: Sequence[str] | None = None,
                    config: dict[str, Any] | None = None, random_state: int | None = None,
                    progress: Progress | None = None) -> Decoupler:
    """Train a global decoupler on auxiliary records.

    Parameters
    ----------
    X : array (n, d)
        Auxiliary features (public data from the same distribution as the owner's).
    y : array (n,)
        The auxiliary sensitive labels y_S.
    sensitive : str
        Name of the sensitive column (stored, and checked when the decoupler is used).
    feature_names : sequence of str, optional
        Stored and checked against tables the decoupler is later applied to.
    config : dict, optional
        Overrides of :data:`DEFAULT_CONFIG` (latent_dim m, sensitive_dim k, beta, the alpha
        weights, hidden, architecture, image_shape, epochs, batch_size, lr).
    random_state : int or None
        Seeds weight initialisation and batches (training is not secret: the decoupler sees
        only auxiliary data). ``None`` draws from OS entropy.
    progress : callable (done, total, text), optional

    Returns
    -------
    Decoupler
    """
    torch = import_torch()
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or X.shape[0] < 2:
        raise BioanonError(f"the decoupler needs a 2-D feature matrix with at least 2 records "
                           f"(got {X.shape[0] if X.ndim == 2 else 0} sample(s))")
    if not np.all(np.isfinite(X)):
        raise BioanonError("the auxiliary features contain NaN or infinite values; clean them")
    n, d = X.shape
    cfg = check_config(dict(config or {}), d)
    y = np.asarray(y)
    if y.shape[0] != n:
        raise BioanonError(f"{y.shape[0]} sensitive labels for {n} records; one per record")
    classes, codes = np.unique(y.astype(str), return_inverse=True)
    if classes.size < 2:
        raise BioanonError(f"sensitive column '{sensitive}' has a single class in the auxiliary "
                           "data; the aligner needs at least two")
    seed = int(np.random.SeedSequence(random_state).generate_state(1)[0])
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)
    info: dict[str, Any] = {
        "n_features": d, "sensitive": str(sensitive), "classes": classes.tolist(),
        "feature_names": None if feature_names is None else [str(f) for f in feature_names],
        "mean": mean.astype(float).tolist(), "scale": scale.astype(float).tolist(),
        "n_train": n,
    }
    net = _build_net(cfg, info)
    xt = torch.from_numpy(((X - mean) / scale).astype(np.float32))
    yt = torch.from_numpy(codes.astype(np.int64))
    adv_params = list(net.adversary.parameters())
    main_params = [p for name, p in net.named_parameters() if not name.startswith("adversary.")]
    opt = torch.optim.Adam(main_params, lr=cfg["lr"])
    opt_adv = torch.optim.Adam(adv_params, lr=3 * cfg["lr"])
    bs = min(cfg["batch_size"], n)
    epochs = cfg["epochs"]
    history: list[dict[str, float]] = []
    step, ramp = 0, cfg["warmup"] * epochs * (n // bs)
    start = time.perf_counter()
    net.train()
    for epoch in range(epochs):
        order = torch.randperm(n, generator=gen)
        sums: dict[str, float] = {}
        batches = 0
        # KL warm-up: β rises linearly from 0 over the first ``warmup`` share of the epochs,
        # which avoids the posterior collapsing before the decoder has learned anything
        for i in range(0, n - bs + 1, bs):  # drop the last partial batch (dcorr needs n ≥ 2)
            idx = order[i:i + bs]
            beta = cfg["beta"] * min(1.0, step / ramp) if ramp > 0 else cfg["beta"]
            step += 1
            parts = net.losses(xt[idx], yt[idx], beta)
            loss = (cfg["alpha_vae"] * parts["elbo"] + cfg["alpha_aligner"] * parts["aligner"]
                    + cfg["alpha_dcorr"] * parts["dcorr"]
                    + cfg["alpha_adversary"] * parts["confusion"])
            opt.zero_grad()
            opt_adv.zero_grad()
            (loss + parts["adversary"]).backward()  # the two terms touch disjoint weights
            torch.nn.utils.clip_grad_norm_(main_params, 10.0)
            opt.step()
            opt_adv.step()
            for key, val in parts.items():
                sums[key] = sums.get(key, 0.0) + float(val.detach())
            batches += 1
        history.append({k: v / max(batches, 1) for k, v in sums.items()})
        if progress is not None:
            progress(epoch + 1, epochs, f"epoch {epoch + 1}/{epochs} "
                     f"loss {history[-1]['elbo']:.1f}")
    net.eval()
    info["train_seconds"] = time.perf_counter() - start
    info["final"] = history[-1] if history else {}
    info["history"] = history
    dec = Decoupler(net, cfg, info)
    _public_bounds(dec, X)
    return dec


def _public_bounds(dec: Decoupler, X_aux: np.ndarray) -> None:
    """Bounds of z_S on the auxiliary data: box (1st/99th percentiles), centre and radius."""
    z_s, _ = dec.split(dec.encode(X_aux))
    low, high = np.percentile(z_s, [1, 99], axis=0)
    high = np.maximum(high, low + 1e-3)
    center = z_s.mean(axis=0)
    radius = float(np.percentile(np.linalg.norm(z_s - center, axis=1), 95))
    dec.info.update({"z_low": low.tolist(), "z_high": high.tolist(),
                     "z_center": center.tolist(), "z_radius": max(radius, 1e-3)})
