"""Composition: a method followed by a post-step, as one anonymizer (``--method vp-mix+leace``).

The post-step is fitted on the method's release of the same records (with their labels), so
e.g. LEACE erases what linear trace of the sensitive attribute the mix left. Nested parameters
follow scikit-learn's convention (``method__g``, ``post__sensitive``), so ``clone``,
``set_params`` and ``tune`` grids work unchanged; on the command line ``--param g=8`` goes to the
method and ``--param leace.KEY=V`` to the post-step (:func:`~bioanon.anonymize.registry.
build_method`). Built by the registry from the name ``A+B``; not registered under a name of its
own.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import clone

from ..errors import BioanonError
from ..privacy import resolve_seed
from ..table import FeatureTable
from .base import Anonymizer, Release
from .params import Param


class _SearchSpace:
    """``search_space`` of a composition: the method's candidates under ``method__`` (an
    instance attribute computed from the steps; the class itself has none)."""

    def __get__(self, obj: Any, owner: Any = None) -> tuple[dict[str, Any], ...]:
        if obj is None or obj.method is None:
            return ()
        inner: tuple[dict[str, Any], ...] = getattr(obj.method, "search_space", ()) or ({},)
        return tuple({f"method__{k}": v for k, v in point.items()} for point in inner)


class ComposedAnonymizer(Anonymizer):
    """``method`` then ``post``, as one estimator (``--method A+B``).

    Parameters
    ----------
    method : Anonymizer
        The main method (cloned at fit).
    post : Anonymizer
        The post-step, fitted on each release of the method (cloned at release).
    random_state : int or None
        Secret key passed to the method (and the post-step) when set; ``None`` keeps theirs.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> from bioanon.anonymize import LeaceAnonymizer, VarianceMixAnonymizer
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> est = ComposedAnonymizer(VarianceMixAnonymizer("expression", g=8),
    ...                          LeaceAnonymizer("identity"), random_state=0)
    >>> est.fit_transform(t.X, t.labels).shape
    (120, 32)
    """

    params: ClassVar[dict[str, Param]] = {
        "method": Param("object", help="the main method (an anonymizer)"),
        "post": Param("object", help="the post-step fitted on the method's release"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed of both steps; None keeps theirs"),
    }
    needs_labels = True
    protects = "what the method protects, plus what the post-step adds (e.g. linear traces)"
    does_not_protect = "what neither step protects"
    search_space = _SearchSpace()

    def __init__(self, method: Any = None, post: Any = None,
                 random_state: int | None = None) -> None:
        self.method = method
        self.post = post
        self.random_state = random_state

    @property
    def fit_on_auxiliary(self) -> bool:  # type: ignore[override]
        """As the main method: fitted once on auxiliary data, or per release."""
        return bool(getattr(self.method, "fit_on_auxiliary", False))

    @property
    def method_name(self) -> str:  # type: ignore[override]
        """The composition's method name, e.g. ``vp-mix+leace``."""
        return (f"{getattr(self.method, 'method_name', type(self.method).__name__)}+"
                f"{getattr(self.post, 'method_name', type(self.post).__name__)}")

    def public_params(self) -> dict[str, Any]:
        """Both steps' publishable parameters (no random state)."""
        return {"method": getattr(self.method, "method_name", type(self.method).__name__),
                "method_params": self.method.public_params(),
                "post": getattr(self.post, "method_name", type(self.post).__name__),
                "post_params": self.post.public_params()}

    def parse_param(self, key: str, raw: Any) -> tuple[str, Any]:
        """Convert a grid key and value: ``g`` -> ``method__g``, ``leace.KEY`` -> ``post__KEY``
        (each converted by its step's constraint)."""
        from .registration import parse_value

        prefix, dot, rest = key.partition(".")
        post_name = getattr(self.post, "method_name", "")
        if dot and prefix == post_name:
            return f"post__{rest}", parse_value(type(self.post), rest, raw)
        if key.startswith(("method__", "post__")):
            step, _, rest = key.partition("__")
            return key, parse_value(type(getattr(self, step)), rest, raw)
        if isinstance(self.method, ComposedAnonymizer):
            inner, value = self.method.parse_param(key, raw)
            return f"method__{inner}", value
        return f"method__{key}", parse_value(type(self.method), key, raw)

    def _check_relations(self) -> None:
        for step in ("method", "post"):
            est = getattr(self, step)
            if not isinstance(est, Anonymizer):
                raise BioanonError(f"{step}={type(est).__name__} is not a bioanon anonymizer; "
                                   "build the composition with build_method('A+B')")
            est.check_params()

    def _steps(self) -> tuple[Anonymizer, Anonymizer]:
        method, post = clone(self.method), clone(self.post)
        if self.random_state is not None:
            for step in (method, post):
                if "random_state" in step.get_params(deep=False):
                    step.set_params(random_state=self.random_state)
        return method, post

    def _fit(self, X: np.ndarray, y: Any, table: FeatureTable | None) -> None:
        """Fit the method (on auxiliary data when it is fitted so)."""
        self.method_, self.post_ = self._steps()
        self.method_.fit(X if table is None else table, y)

    def _release(self, X: np.ndarray, y: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        """Release with the method, then fit the post-step on that release and apply it; the
        mixing matrix is the method's (the post-step mixes no records)."""
        arr, labels, tab = self.method_._input(X if table is None else table, y, reset=False)
        first = self.method_._release(arr, labels,
                                      resolve_seed(getattr(self.method_, "random_state", None)),
                                      tab)
        first = first if isinstance(first, Release) else Release(first)
        released = np.asarray(first.X, dtype=np.float32)
        post = clone(self.post_).fit(released, labels)
        out = post.release_result(released, labels)
        return Release(out.X, {**first.info, **out.info}, mixing=first.mixing)
