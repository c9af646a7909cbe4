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


METHODS: dict[str, Callable[[MethodOptions], Any]] = {
    "selective-mean": _selective_mean,
}


def build_method(options: MethodOptions) -> Any:
    """Build the anonymizer named by ``options.method``."""
    if options.method not in METHODS:
        raise BioanonError(
            f"unknown method '{options.method}'{suggest(options.method, METHODS)}; choose from "
            f"{', '.join(METHODS)}"
        )
    return METHODS[options.method](options)
