"""Method registry: method name -> estimator class, and building one from text options.

A family registers its class where it is defined
(:func:`bioanon.anonymize.registration.register`)::

    @register("noise")
    class GaussianNoiseAnonymizer(Anonymizer):
        params = {"sigma": Param("float", low=0, low_open=True, required=True), ...}

Every family listed in :func:`_discover` is imported on the first lookup, so adding a method
is one module and one line there (plus its test): the command line's ``--param``/``--grid``
conversions, the ``bioanon methods`` listing and the estimator checks all come from the class.

Examples
--------
>>> est = build_method("noise", {"sigma": "0.5"}, random_state=0)
>>> type(est).__name__, est.sigma
('GaussianNoiseAnonymizer', 0.5)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import BioanonError, suggest
from ..plain_text import plain_values
from .registration import _METHODS, _POST_STEPS, _REQUIRED, defaults, parse_value

if TYPE_CHECKING:
    from .base import Anonymizer

def _discover() -> None:
    """Import every module that registers a method (explicitly: one line per family; a test
    checks that every module calling ``register`` is listed here)."""
    from . import (  # noqa: F401
        baselines,
        basis_synthetic,
        dp_basis,
        dp_cells,
        dp_mix,
        dp_synthetic,
        erasure,
        ksame,
        mixing,
        peer_sdv,
        peer_smartnoise,
        selective_mean,
        synthetic,
        vp_mix,
    )
    from .sanitizer import estimator  # noqa: F401


def methods() -> dict[str, type[Anonymizer]]:
    """Every registered method, name -> class, in registration order."""
    _discover()
    return dict(_METHODS)


def post_steps() -> list[str]:
    """Names of the methods that may follow another one after a ``+`` (e.g. ``leace``)."""
    _discover()
    return list(_POST_STEPS)


def split_composition(name: str) -> tuple[str, list[str]]:
    """``"A+B+C"`` -> ``("A", ["B", "C"])``, every part checked (a one-line error).

    Examples
    --------
    >>> split_composition("vp-mix+leace")
    ('vp-mix', ['leace'])
    """
    first, *posts = [p.strip() for p in name.split("+")]
    if not first or not posts or not all(posts):
        raise BioanonError(f"method '{name}' is not of the form METHOD+POST; write e.g. "
                           "vp-mix+leace")
    get_method(first)
    allowed = post_steps()
    for p in posts:
        if p not in allowed:
            raise BioanonError(f"'{p}' cannot follow another method{suggest(p, allowed)}; "
                               f"after '+' choose from {', '.join(allowed)}")
    return first, posts


def get_method(name: str) -> type[Anonymizer]:
    """The class of method ``name`` (a one-line error suggesting the closest name).

    A composition ``A+B`` (method A, then post-step B) gives
    :class:`~bioanon.anonymize.compose.ComposedAnonymizer`.
    """
    if "+" in name:
        split_composition(name)
        from .compose import ComposedAnonymizer

        return ComposedAnonymizer
    known = methods()
    if name not in known:
        raise BioanonError(f"unknown method '{name}'{suggest(name, known)}; choose from "
                           f"{', '.join(known)}, or METHOD+{'|'.join(post_steps())}")
    return known[name]


def build_method(name: str, params: Mapping[str, Any] | None = None, *,
                 interest: str | None = None, sensitive: str | None = None,
                 additional: Sequence[str] | None = None,
                 random_state: int | None = None) -> Anonymizer:
    """Build method ``name`` from parameter values (text is converted by the constraints)
    and the column roles; every constraint is checked before anything is fitted.

    Role options fill the parameters declared with that role (``Param(role="interest")``)
    unless ``params`` sets them.

    ``A+B`` builds method A followed by post-step B (fitted on A's release); ``params`` keys
    ``B.KEY`` go to B, the others to A, and each step gets the role options it declares.

    >>> est = build_method("vp-mix+leace", {"g": "8"}, interest="digit", sensitive="speaker")
    >>> est.method.g, est.post.sensitive
    (8, 'speaker')
    """
    if "+" in name:
        return _build_composition(name, params or {}, interest=interest, sensitive=sensitive,
                                  additional=additional, random_state=random_state)
    cls = get_method(name)
    kwargs = {k: parse_value(cls, k, v) for k, v in (params or {}).items()}
    roles = {"interest": interest, "sensitive": sensitive,
             "additional": None if additional is None else list(additional)}
    for key, spec in cls.params.items():
        if spec.role and key not in kwargs and roles.get(spec.role) is not None:
            kwargs[key] = roles[spec.role]
    for key in _REQUIRED.get(name, ()):
        if key not in kwargs:
            spec = cls.params[key]
            how = f"{spec.role}=COL" if spec.role else f"{key}=VALUE"
            raise BioanonError(f"method '{name}' needs {key} ({spec.range_text()}); add {how}",
                               parameter=spec.role or f"params.{key}")
    if "random_state" in defaults(cls):
        kwargs["random_state"] = random_state
    est = cls(**kwargs)
    est.check_params()
    return est


def _build_composition(name: str, params: Mapping[str, Any], **roles: Any) -> Anonymizer:
    from .compose import ComposedAnonymizer

    first, posts = split_composition(name)
    for key in params:
        prefix = key.split(".", 1)[0]
        if "." in key and prefix not in posts:
            raise BioanonError(f"parameter '{key}': '{prefix}' is not a step of '{name}'; write "
                               f"{' or '.join(f'{p}.KEY=VALUE' for p in posts)} for a "
                               "post-step, KEY=VALUE for the method")
    seed = roles.pop("random_state")
    own = {k: v for k, v in params.items() if "." not in k}
    est: Anonymizer = build_method(first, own, random_state=None, **roles)
    for p in posts:
        mine = {k[len(p) + 1:]: v for k, v in params.items() if k.startswith(f"{p}.")}
        post = build_method(p, mine, random_state=None, **roles)
        est = ComposedAnonymizer(est, post, random_state=seed)
    est.check_params()
    return est


#: what a method can declare it can do (class attributes of
#: :class:`~bioanon.anonymize.base.Anonymizer`): every list of methods is read from these
CAPABILITIES = ("dp", "bucketable", "streamable")


def capabilities(cls: type[Any]) -> dict[str, Any]:
    """What method class ``cls`` declares it can do: ``dp`` (its units and accountant, or
    None), ``bucketable`` and ``streamable`` (a stand-in class without them can do none).

    >>> capabilities(get_method("dp-mix"))["dp"]["units"], capabilities(get_method("noise"))
    (['record'], {'dp': None, 'bucketable': False, 'streamable': False})
    """
    dp = getattr(cls, "dp", None)
    return {"dp": None if dp is None else dp.to_dict(),
            "bucketable": bool(getattr(cls, "bucketable", False)),
            "streamable": bool(getattr(cls, "streamable", False))}


def methods_that(capability: str) -> list[str]:
    """The registered methods that declare ``capability`` (one of :data:`CAPABILITIES`), in
    registration order.

    >>> "dp-basis" in methods_that("streamable"), "noise" in methods_that("dp")
    (True, False)
    """
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}; one of {CAPABILITIES}")
    return [name for name, cls in methods().items() if capabilities(cls)[capability]]


def methods_covering(unit: str) -> list[str]:
    """The registered DP methods whose declaration (:class:`~bioanon.anonymize.base.DPCapability`)
    covers privacy unit ``unit``, in registration order.

    >>> "dp-basis" in methods_covering("identity"), "dp-mix" in methods_covering("identity")
    (True, False)
    """
    declared = {name: getattr(cls, "dp", None) for name, cls in methods().items()}
    return [name for name, dp in declared.items() if dp is not None and unit in dp.units]


def describe(cls: type[Anonymizer]) -> dict[str, Any]:
    """JSON-ready description of a method: parameters (type, default, range), what it
    protects and what it does not, as plain text (no reST markup), what it can do
    (:func:`capabilities`) and, for a DP method, its formal guarantee in words
    (``differential_privacy``: from the same declaration)."""
    dflt = defaults(cls)
    dp = getattr(cls, "dp", None)
    guarantee = {} if dp is None else {"differential_privacy": dp.guarantee(dflt)}
    out_params = {}
    for key, spec in cls.params.items():
        if key == "random_state":  # --seed; listed as "seeded"
            continue
        value = dflt.get(key)
        out_params[key] = {**spec.describe(),
                           "default": list(value) if isinstance(value, tuple) else value,
                           "required": key in _REQUIRED.get(cls.method_name, ())}
    return plain_values({
        "name": cls.method_name, "class": f"{cls.__module__}.{cls.__name__}",
        "summary": (inspect.getdoc(cls) or "").splitlines()[0],
        "needs_labels": cls.needs_labels, "fit_on_auxiliary": cls.fit_on_auxiliary,
        "seeded": cls.seeded, "post_step": cls.method_name in _POST_STEPS,
        "protects": cls.protects, "does_not_protect": cls.does_not_protect,
        **capabilities(cls), **guarantee, "release_model": _release_model(cls),
        "params": out_params})


def _release_model(cls: type[Anonymizer]) -> dict[str, Any] | None:
    """The model its release reproduces at the default setting (read by the model-aware
    attackers; :meth:`Anonymizer.release_model`), or None: no closed form."""
    try:
        model = cls().release_model()
    except Exception:  # noqa: BLE001 - a method without defaults declares nothing listable
        return None
    return None if model is None else {**model.as_dict(), "words": model.describe()}
