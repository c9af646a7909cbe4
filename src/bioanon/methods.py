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
        relevance=o.relevance, allow_replacement=o.allow_replacement, random_state=o.seed)
    anon._check_params()
    return anon


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
    kwargs: dict[str, Any] = {}
    for key, raw in o.extra.items():
        if key not in SANITIZER_PARAMS:
            raise BioanonError(f"--param {key} is not a sanitizer option"
                               f"{suggest(key, SANITIZER_PARAMS)}; known: "
                               f"{', '.join(SANITIZER_PARAMS)}")
        try:
            kwargs[key] = SANITIZER_PARAMS[key](raw)
        except ValueError:
            raise BioanonError(f"--param {key}={raw} has the wrong type; e.g. "
                               f"{key}={'64x64' if key == 'image_shape' else '8'}") from None
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


METHODS: dict[str, Callable[[MethodOptions], Any]] = {
    "selective-mean": _selective_mean,
    "sanitizer": _sanitizer,
}


def build_method(options: MethodOptions) -> Any:
    """Build the anonymizer named by ``options.method``."""
    if options.method not in METHODS:
        raise BioanonError(
            f"unknown method '{options.method}'{suggest(options.method, METHODS)}; choose from "
            f"{', '.join(METHODS)}"
        )
    return METHODS[options.method](options)
