"""SanitizerAnonymizer: decouple with a global decoupler, then resample the sensitive latents.

``fit`` trains the decoupler on the records it is given, which play the auxiliary role (or
loads a trained one from ``decoupler``); ``transform`` sanitizes the owner's records: encode,
replace z_S by the chosen sampler, merge with z_NS and decode (or release the latents).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ...errors import BioanonError
from ...privacy import check_epsilon, os_rng
from ...table import FeatureTable
from ..base import Anonymizer, Release, label_values
from ..params import Param, epsilon_param
from ..registration import register
from .decoupler import DEFAULT_CONFIG, Decoupler, check_config, train_decoupler
from .dp import MEAN_SHARE, PROTECTS, RonGaussSampler, dp_obfuscate, suppress

SAMPLERS = ("suppress", "dp-obfuscate", "dp-sample")
OUTPUTS = ("features", "latents")


def _pos_int(help: str, none: bool = False) -> Param:
    return Param("int", low=1, none=none, help=help)


def _nonneg(help: str) -> Param:
    return Param("float", low=0, help=help)


@register("sanitizer", required=("sensitive",))
class SanitizerAnonymizer(Anonymizer):
    """Decouple-and-sample sanitizer (Sanitizer paper, sections 3.1–3.2).

    Parameters
    ----------
    sensitive : str
        Label column of the sensitive attribute y_S.
    sampler : {"suppress", "dp-obfuscate", "dp-sample"}, default "dp-sample"
        How z_S is replaced: zeros; clipped z_S plus Laplace noise (ε per record); or fresh
        samples of a class-conditional Gaussian learned with RON-Gauss (ε for the whole set).
    epsilon : float, default 1.0
        Differential privacy budget of the DP samplers (ignored by ``suppress``).
    decoupler : str, path or Decoupler, optional
        A trained decoupler to use. ``None`` trains one in ``fit`` on the records given there,
        which must then be auxiliary data, never the data to release.
    latent_dim, sensitive_dim, beta, alpha_vae, alpha_aligner, alpha_dcorr, alpha_adversary,
    hidden, architecture, image_shape, epochs, batch_size, lr, warmup
        Decoupler training options: m = 32, k = 8, β = 5 and α3 = 100 as in the paper;
        α2 = α4 = 10 (see :mod:`.decoupler` for why not 1).
    projection_dim : int, optional
        Dimension p of RON-Gauss's random projection; default ``max(1, k // 2)``.
    mean_share : float, default 0.3
        Share of ε spent on the means and class sizes (0.7 on the covariances).
    output : {"features", "latents"}, default "features"
        Decode the merged latents back to features, or release (z̃_S, z_NS).
    random_state : int or None
        Seeds the decoupler's training only. DP noise is always drawn from fresh
        operating-system entropy, so no seed can reproduce or undo it.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=40, n_features=32)
    >>> s = SanitizerAnonymizer("identity", epochs=2, latent_dim=8, sensitive_dim=2,
    ...                         random_state=0).fit(t.X, t.labels)
    >>> s.transform(t.X, t.labels).shape
    (160, 32)
    """

    fit_on_auxiliary = True
    needs_labels = True
    seeded = False  # DP noise always comes from fresh OS entropy
    protects = PROTECTS + " (epsilon-DP with the dp-* samplers)"
    does_not_protect = "sensitive information left in z_NS; suppress gives no DP guarantee"
    params: ClassVar[dict[str, Param]] = {
        "sensitive": Param("column", role="sensitive", help="sensitive label column"),
        "sampler": Param("str", options=SAMPLERS, help="how z_S is replaced"),
        "epsilon": epsilon_param("DP budget of the dp-* samplers"),
        "decoupler": Param("path", none=True, help="trained decoupler file"),
        "latent_dim": _pos_int(help="latent size m"),
        "sensitive_dim": _pos_int(help="sensitive latent size k, below latent_dim"),
        "beta": _nonneg(help="beta-VAE weight"),
        "alpha_vae": _nonneg(help="reconstruction weight"),
        "alpha_aligner": _nonneg(help="aligner weight"),
        "alpha_dcorr": _nonneg(help="distance-correlation weight"),
        "alpha_adversary": _nonneg(help="adversary weight"),
        "hidden": _pos_int(help="hidden units"),
        "architecture": Param("str", options=("mlp", "conv"), help="decoupler network"),
        "image_shape": Param("shape", none=True, help="image shape of the conv decoupler"),
        "epochs": _pos_int(help="training epochs"),
        "batch_size": _pos_int(help="training batch size"),
        "lr": Param("float", low=0, high=1, low_open=True, help="learning rate"),
        "warmup": Param("float", low=0, high=1, high_open=True,
                        help="share of epochs over which beta rises"),
        "projection_dim": _pos_int(none=True, help="RON-Gauss projection p <= k"),
        "mean_share": Param("float", low=0, high=1, low_open=True, high_open=True,
                            help="share of epsilon on means and class sizes"),
        "output": Param("str", options=OUTPUTS, help="decoded features or latents"),
        "random_state": Param("int", low=0, none=True,
                              help="seeds the decoupler's training only"),
    }

    def __init__(self, sensitive: str = "identity", sampler: str = "dp-sample",
                 epsilon: float = 1.0, decoupler: Any = None, latent_dim: int = 32,
                 sensitive_dim: int = 8, beta: float = 5.0, alpha_vae: float = 1.0,
                 alpha_aligner: float = 10.0, alpha_dcorr: float = 100.0,
                 alpha_adversary: float = 10.0, hidden: int = 256, architecture: str = "mlp",
                 image_shape: tuple[int, int] | None = None, epochs: int = 60,
                 batch_size: int = 256, lr: float = 2e-3, warmup: float = 0.3,
                 projection_dim: int | None = None,
                 mean_share: float = MEAN_SHARE, output: str = "features",
                 random_state: int | None = None) -> None:
        self.sensitive = sensitive
        self.sampler = sampler
        self.epsilon = epsilon
        self.decoupler = decoupler
        self.latent_dim = latent_dim
        self.sensitive_dim = sensitive_dim
        self.beta = beta
        self.alpha_vae = alpha_vae
        self.alpha_aligner = alpha_aligner
        self.alpha_dcorr = alpha_dcorr
        self.alpha_adversary = alpha_adversary
        self.hidden = hidden
        self.architecture = architecture
        self.image_shape = image_shape
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.warmup = warmup
        self.projection_dim = projection_dim
        self.mean_share = mean_share
        self.output = output
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _config(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in DEFAULT_CONFIG}

    def _check_relations(self) -> None:
        if self.decoupler is not None and not isinstance(self.decoupler, str | os.PathLike
                                                         | Decoupler):
            raise BioanonError("decoupler must be a file path or a Decoupler")
        if isinstance(self.decoupler, str | os.PathLike) and not os.path.isfile(self.decoupler):
            raise BioanonError(f"decoupler file '{os.fspath(self.decoupler)}' not found; train "
                               "one with bioanon train-decoupler")
        if not self.sensitive_dim < self.latent_dim:
            raise BioanonError(f"sensitive_dim={self.sensitive_dim} must be smaller than "
                               f"latent_dim={self.latent_dim} (z_NS would be empty)")

    def _projection_dim(self, k: int) -> int:
        p = max(1, k // 2) if self.projection_dim is None else int(self.projection_dim)
        if not 1 <= p <= k:
            raise BioanonError(f"projection_dim={p} must lie in [1, sensitive_dim={k}]")
        return p

    # ------------------------------------------------------------------ estimator API
    def fit(self, X: Any, y: Any = None, progress: Any = None) -> SanitizerAnonymizer:
        """Train the decoupler on these (auxiliary) records, or load and check a trained one.

        Parameters
        ----------
        X : array (n, d) or FeatureTable
            Auxiliary records (public data from the owner's distribution).
        y : DataFrame with the sensitive column
        progress : callable (done, total, text), optional
            Called after every training epoch.
        """
        self._progress = progress
        try:
            super().fit(X, y)
        finally:
            del self._progress
        return self

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        names = None if table is None else table.feature_names
        if self.decoupler is None:
            check_config(self._config(), X.shape[1])
            y = label_values(labels, self.sensitive, X.shape[0])
            self.decoupler_ = train_decoupler(X, y, self.sensitive, names, self._config(),
                                              self.random_state, self._progress)
            self.decoupler_source_ = "trained in fit on the records given there"
        else:
            dec = (self.decoupler if isinstance(self.decoupler, Decoupler)
                   else Decoupler.load(self.decoupler))
            dec.check_features(X.shape[1], names, self.sensitive)
            self.decoupler_ = dec
            self.decoupler_source_ = "loaded"
        self._projection_dim(self.decoupler_.k)

    def sanitize(self, X: Any, labels: Any = None
                 ) -> tuple[np.ndarray, np.ndarray | None]:
        """Sanitize records; return (released array, synthetic sensitive labels or None).

        ``dp-sample`` also draws the synthetic labels ỹ_S that go with the new z̃_S; they
        let a receiver learn p(x, y_S) (use case UC3) and are independent of the records'
        own labels.
        """
        check_is_fitted(self, "decoupler_")
        self.check_params()
        names = X.feature_names if isinstance(X, FeatureTable) else None
        X, labels, _ = self._input(X, labels, reset=False)
        dec: Decoupler = self.decoupler_
        dec.check_features(X.shape[1], names)
        n = X.shape[0]
        z = dec.encode(X)
        z_s, z_ns = dec.split(z)
        info = dec.info
        y_new = None
        if self.sampler == "suppress":
            z_s_new = suppress(z_s)
        elif self.sampler == "dp-obfuscate":
            z_s_new = dp_obfuscate(z_s, info["z_low"], info["z_high"], self.epsilon, os_rng())
        else:
            y = label_values(labels, self.sensitive, n)
            rng = os_rng()
            model = RonGaussSampler(self.epsilon, self._projection_dim(dec.k),
                                    info["z_center"], info["z_radius"],
                                    mean_share=float(self.mean_share)).fit(z_s, y, rng)
            z_s_new, y_new = model.sample(n, rng)
        merged = np.concatenate([z_s_new, z_ns], axis=1)
        out = (dec.decode(merged) if self.output == "features"
               else merged.astype(np.float32))
        return out, y_new

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        """Sanitize the owner's records (labels needed by ``dp-sample`` only); the synthetic
        sensitive labels of ``dp-sample`` come back in ``info["synthetic_sensitive"]``."""
        out, y_new = self.sanitize(X if table is None else table, labels)
        return Release(out, {} if y_new is None else {"synthetic_sensitive": y_new})

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Input feature names, or ``z0..z{m-1}`` when latents are released."""
        if self.output == "latents":
            check_is_fitted(self, "decoupler_")
            m = int(self.decoupler_.config["latent_dim"])
            return np.asarray([f"z{j}" for j in range(m)], dtype=object)
        return super().get_feature_names_out(input_features)

    # ------------------------------------------------------------------ publication
    def privacy_statement(self) -> dict[str, Any]:
        """What the differential privacy guarantee covers, the budget and its split."""
        if self.sampler == "suppress":
            return {"mechanism": "suppression (z_S := 0)", "epsilon": None,
                    "protects": "no DP guarantee: z_S is replaced by zeros; any sensitive "
                                "information left in z_NS is released as it is"}
        eps = check_epsilon(self.epsilon)
        if self.sampler == "dp-obfuscate":
            return {"mechanism": "DP obfuscation (clip to a public box, Laplace noise of "
                                 "scale ||b - a||_1 / epsilon)",
                    "epsilon": eps, "split": {"per_record_laplace": 1.0},
                    "neighbouring": "any two values of one record's z_S (local DP)",
                    "assumes": "the decoupler and the clipping box come from auxiliary data",
                    "protects": PROTECTS}
        share = float(self.mean_share)
        k = int(self.sensitive_dim) if not hasattr(self, "decoupler_") else self.decoupler_.k
        return {"mechanism": "RON-Gauss DP sampling: random orthonormal projection, per-class "
                             "Laplace-noised means/sizes and covariances, fresh samples",
                "epsilon": eps, "epsilon_mean": share * eps,
                "epsilon_covariance": (1.0 - share) * eps,
                "split": {"mean_and_class_sizes": share, "covariance": 1.0 - share},
                "composition": "basic (sequential) composition",
                "neighbouring": "add or remove one record of the released dataset",
                "projection_dim": self._projection_dim(k),
                "assumes": "the decoupler, clipping centre and radius come from auxiliary "
                           "data; the set of sensitive class names is public",
                "protects": PROTECTS}

    def public_params(self) -> dict[str, Any]:
        """Publishable parameters plus the privacy statement (never a seed or the noise)."""
        params = super().public_params()
        if self.image_shape is not None:
            params["image_shape"] = [int(v) for v in self.image_shape]
        dec = self.decoupler
        params["decoupler"] = (None if dec is None else
                               os.path.basename(os.fspath(dec)) if not isinstance(dec, Decoupler)
                               else "Decoupler")
        params["privacy"] = self.privacy_statement()
        source = getattr(self, "decoupler_source_", None)
        params["decoupler_training"] = (
            "loaded from a decoupler file trained on auxiliary data" if source == "loaded"
            else "trained in fit on the records passed to fit (the auxiliary role: in an "
                 "evaluation the training split; for a release pass a decoupler trained on "
                 "auxiliary data)")
        return params
