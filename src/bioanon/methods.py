"""Method registry: build any anonymizer from one set of user options.

The command line (and any front end) collects :class:`MethodOptions` and calls
:func:`build_method`. Each anonymizer family registers one builder in :data:`METHODS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BioanonError, suggest


@dataclass
class MethodOptions:
    """Every option a method may read; each builder uses the ones it needs."""

    method: str = "selective-mean"
    interest: str | None = None
    additional: dict[str, float] = field(default_factory=dict)
    sensitive: str | None = None
    seed: int | None = None
    # selective mean
    g: int = 32
    t: float = 0.8
    w: float = 10.0
    rp: float = 0.01
    rq: dict[str, float] = field(default_factory=dict)
    rs: float = 0.0
    relevance: str = "forest"
    allow_replacement: bool = False
    # k-anonymity family and baselines
    k: int | None = None
    sigma: float | None = None
    block: int | None = None
    epsilon: float | None = None
    # learned methods
    decoupler: Path | None = None
    sampler: str | None = None
    # anything else, from --param KEY=VALUE
    extra: dict[str, str] = field(default_factory=dict)

    def need(self, name: str, flag: str | None = None) -> Any:
        """Return an option the method cannot do without, or raise naming the flag."""
        value = getattr(self, name)
        if value is None:
            raise BioanonError(f"method '{self.method}' needs {flag or '--' + name}; add it")
        return value


def _selective_mean(o: MethodOptions) -> Any:
    from .anonymize import SelectiveMeanAnonymizer

    interest = o.need("interest")
    unknown = sorted(set(o.rq) - set(o.additional))
    if unknown:
        raise BioanonError(f"--rq names {unknown} which are not --additional columns; add them "
                           "with --additional")
    anon = SelectiveMeanAnonymizer(
        interest=interest, additional={c: o.rq.get(c, 0.0) for c in o.additional},
        sensitive=o.sensitive, g=o.g, t=o.t, w=o.w, r_p=o.rp, r_s=o.rs,
        relevance=o.relevance, allow_replacement=o.allow_replacement, random_state=o.seed,
        **_extra(o, {"include_self": _bool}))
    anon._check_params()
    return anon


# ---------------------------------------------------------------------- k-anonymity family
def _extra(o: MethodOptions, allowed: dict[str, Callable[[str], Any]]) -> dict[str, Any]:
    """Parse ``--param KEY=VALUE`` items this method accepts; refuse the others."""
    out = {}
    for key, raw in o.extra.items():
        if key not in allowed:
            hint = f"; it accepts {', '.join(sorted(allowed))}" if allowed else \
                "; it takes no --param"
            raise BioanonError(f"method '{o.method}' has no parameter '{key}'"
                               f"{suggest(key, allowed)}{hint}")
        try:
            out[key] = allowed[key](raw)
        except (TypeError, ValueError):
            raise BioanonError(f"--param {key}={raw} has the wrong form for method "
                               f"'{o.method}'") from None
    return out


def _floats(raw: str) -> list[float]:
    return [float(v) for v in raw.split(",")]


def _channels(raw: str) -> list[Any]:
    return [int(v) if v.strip().lstrip("-").isdigit() else v.strip() for v in raw.split(",")]


def _threshold(raw: str) -> Any:
    return None if raw.lower() in ("none", "off") else raw if raw == "auto" else float(raw)


def _bool(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


_CLUSTER_PARAMS: dict[str, Callable[[str], Any]] = {
    "clusterer": str, "linkage": str, "n_components": int, "distinct": str}


def _k(o: MethodOptions) -> int:
    from .anonymize.clustering import check_k

    return check_k(None, o.need("k"))


def _ksame(o: MethodOptions) -> Any:
    from .anonymize import KSameAnonymizer

    anon = KSameAnonymizer(k=_k(o), random_state=o.seed, **_extra(o, _CLUSTER_PARAMS))
    anon._check_params()
    return anon


def _ksame_select(o: MethodOptions) -> Any:
    from .anonymize import KSameSelectAnonymizer

    anon = KSameSelectAnonymizer(interest=o.need("interest"), k=_k(o), random_state=o.seed,
                                 **_extra(o, _CLUSTER_PARAMS))
    anon._check_params()
    return anon


def _cluster_mix(o: MethodOptions) -> Any:
    from .anonymize import ClusterMixAnonymizer

    extra = _extra(o, {**_CLUSTER_PARAMS, "delta": float, "risk_threshold": _threshold,
                       "threshold_percentile": float, "beta": float, "max_rounds": int,
                       "per_interest": _bool})
    per_interest = extra.pop("per_interest", False)
    anon = ClusterMixAnonymizer(k=_k(o), sensitive=o.sensitive,
                                interest=o.need("interest") if per_interest else None,
                                random_state=o.seed, **extra)
    anon._check_params()
    return anon


def _noise(o: MethodOptions) -> Any:
    from .anonymize import GaussianNoiseAnonymizer

    anon = GaussianNoiseAnonymizer(sigma=o.need("sigma"), random_state=o.seed,
                                   **_extra(o, {"scale": str}))
    anon._check_params()
    return anon


def _laplace(o: MethodOptions) -> Any:
    from .anonymize import LaplaceAnonymizer

    anon = LaplaceAnonymizer(epsilon=o.need("epsilon"), random_state=o.seed,
                             **_extra(o, {"bounds": _floats, "clip_quantile": float,
                                          "budget": str}))
    anon._check_params()
    return anon


def _image(o: MethodOptions, cls_name: str, **params: Any) -> Any:
    from . import anonymize

    extra = {"image_shape": str, "band": _floats, "fill": float, "m": int,
             "value_range": float}
    allowed = {"image_shape": str, **{k: extra[k] for k in params.pop("_extra", ())}}
    anon = getattr(anonymize, cls_name)(**params, **_extra(o, allowed))
    anon._check_params()
    return anon


def _blur(o: MethodOptions) -> Any:
    return _image(o, "BlurAnonymizer", sigma=o.need("sigma"))


def _pixelate(o: MethodOptions) -> Any:
    return _image(o, "PixelateAnonymizer", block=o.need("block"))


def _mask(o: MethodOptions) -> Any:
    return _image(o, "EyeBandMaskAnonymizer", _extra=("band", "fill"))


def _dp_pix(o: MethodOptions) -> Any:
    return _image(o, "DPPixAnonymizer", block=o.need("block"), epsilon=o.need("epsilon"),
                  random_state=o.seed, _extra=("m", "value_range"))


def _keep(o: MethodOptions) -> Any:
    from .anonymize import KeepChannelsAnonymizer

    extra = _extra(o, {"channels": _channels, "n_channels": int, "fill": _fill})
    if "channels" not in extra:
        raise BioanonError("method 'keep' needs --param channels=0,1,2 (positions or names of "
                           "the channels to keep)")
    anon = KeepChannelsAnonymizer(**extra)
    anon._check_params()
    return anon


def _fill(raw: str) -> Any:
    return raw if raw == "mean" else float(raw)


def _motion(o: MethodOptions) -> Any:
    from .anonymize import MotionExtractAnonymizer

    return MotionExtractAnonymizer(**_extra(o, {"n_channels": int}))


#: ``--param KEY=VALUE`` options of the sanitizer and how to read them.
SANITIZER_PARAMS: dict[str, Callable[[str], Any]] = {
    "latent_dim": int, "sensitive_dim": int, "beta": float, "alpha_vae": float,
    "alpha_aligner": float, "alpha_dcorr": float, "alpha_adversary": float, "hidden": int,
    "architecture": str, "epochs": int, "batch_size": int, "lr": float, "warmup": float,
    "projection_dim": int, "mean_share": float, "output": str,
    "image_shape": lambda v: tuple(int(x) for x in v.lower().split("x")),
}


def _sanitizer(o: MethodOptions) -> Any:
    from .anonymize.sanitizer import SanitizerAnonymizer

    sensitive = o.need("sensitive")
    kwargs = _extra(o, SANITIZER_PARAMS)
    anon = SanitizerAnonymizer(
        sensitive=sensitive, sampler=o.sampler or "dp-sample",
        epsilon=1.0 if o.epsilon is None else o.epsilon,
        decoupler=None if o.decoupler is None else str(o.decoupler),
        random_state=o.seed, **kwargs)
    anon._check_params()
    if o.decoupler is not None and not Path(o.decoupler).is_file():
        raise BioanonError(f"decoupler file '{o.decoupler}' not found; train one with "
                           "bioanon train-decoupler")
    return anon


# ---------------------------------------------------------------------- frontier methods
def _vp_mix(o: MethodOptions) -> Any:
    from .anonymize import VarianceMixAnonymizer

    interest = o.need("interest")
    # retention of the record's own value is off unless asked for (--param r_p=0.01): it
    # brings back the own weight the reverse attacker learns; --rp's default is not used
    extra = _extra(o, {"restoration": float, "purity": float, "r_p": float,
                       "shrinkage": float})
    anon = VarianceMixAnonymizer(
        interest=interest, additional={c: o.rq.get(c, 0.0) for c in o.additional} or None,
        sensitive=o.sensitive, g=o.g, t=extra.get("purity", 1.0),
        restoration=extra.get("restoration", 0.5), shrinkage=extra.get("shrinkage", 0.0),
        w=o.w, r_p=extra.get("r_p", 0.0), r_s=o.rs,
        relevance=o.relevance, allow_replacement=o.allow_replacement, random_state=o.seed)
    anon._check_params()
    return anon


def _synthetic(o: MethodOptions) -> Any:
    from .anonymize import SyntheticAnonymizer

    anon = SyntheticAnonymizer(interest=o.need("interest"), additional=list(o.additional) or None,
                               random_state=o.seed,
                               **_extra(o, {"n_components": int, "covariance": str,
                                            "reg": float}))
    anon._check_params()
    return anon


def _leace(o: MethodOptions) -> Any:
    from .anonymize import LeaceAnonymizer

    _extra(o, {})
    return LeaceAnonymizer(sensitive=o.need("sensitive"))


#: Methods that may follow another one after a ``+`` (``--method vp-mix+leace``).
POST_STEPS: dict[str, Callable[[MethodOptions], Any]] = {"leace": _leace}


def _composed(o: MethodOptions) -> Any:
    """``A+B``: method A, then post-step B fitted on A's release. ``--param B.KEY=V`` goes to B."""
    from dataclasses import replace

    from .anonymize import ComposedAnonymizer

    first, *posts = [p.strip() for p in o.method.split("+")]
    if not posts or not first or not all(posts):
        raise BioanonError(f"method '{o.method}' is not of the form METHOD+POST, e.g. "
                           "vp-mix+leace")
    for p in posts:
        if p not in POST_STEPS:
            raise BioanonError(f"'{p}' is not a post-step{suggest(p, POST_STEPS)}; after '+' "
                               f"choose from {', '.join(POST_STEPS)}")
    prefixes = {f"{p}." for p in posts}
    own = {k: v for k, v in o.extra.items() if not any(k.startswith(x) for x in prefixes)}
    est = build_method(replace(o, method=first, extra=own))
    for p in posts:
        mine = {k[len(p) + 1:]: v for k, v in o.extra.items() if k.startswith(f"{p}.")}
        est = ComposedAnonymizer(est, POST_STEPS[p](replace(o, method=p, extra=mine)))
    return est


METHODS: dict[str, Callable[[MethodOptions], Any]] = {
    "selective-mean": _selective_mean,
    "ksame": _ksame,
    "ksame-select": _ksame_select,
    "cluster-mix": _cluster_mix,
    "noise": _noise,
    "laplace": _laplace,
    "blur": _blur,
    "pixelate": _pixelate,
    "mask": _mask,
    "dp-pix": _dp_pix,
    "keep": _keep,
    "motion-extract": _motion,
    "sanitizer": _sanitizer,
    "vp-mix": _vp_mix,
    "synthetic": _synthetic,
    "leace": _leace,
}


def build_method(options: MethodOptions) -> Any:
    """Build the anonymizer named by ``options.method`` (``A+B``: A then post-step B)."""
    if "+" in options.method:
        return _composed(options)
    if options.method not in METHODS:
        raise BioanonError(
            f"unknown method '{options.method}'{suggest(options.method, METHODS)}; choose from "
            f"{', '.join(METHODS)}, or METHOD+leace"
        )
    return METHODS[options.method](options)
