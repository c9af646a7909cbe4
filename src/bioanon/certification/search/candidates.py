"""The settings a search tries: each method that applies, at its search space."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...anonymize.base import Anonymizer
from ...anonymize.registry import build_method
from ...anonymize.registry import methods as registered_methods
from ...errors import BioanonError
from ...table import FeatureTable


@dataclass(frozen=True)
class Candidate:
    """One method at one setting (public parameters only; roles are filled when built).

    ``hidden`` holds values the setting takes from public side data (a clipping box, a
    centre: :mod:`bioanon.certification.dp_budget`); they override ``params`` when the anonymizer is
    built and appear in no label, row, manifest or report (``params`` says ``public``).
    """

    method: str
    params: dict[str, Any]
    hidden: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def label(self) -> str:
        """``method(k=v, ...)`` for tables and charts."""
        inner = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in self.params.items())
        return f"{self.method}({inner})"


def _applies(cls: type[Anonymizer], table: FeatureTable, decoupler: Any) -> str | None:
    """Why method ``cls`` does not apply to ``table`` (None when it does)."""
    if not cls.search_space:
        return "no search_space declared (not searched)"
    if cls.fit_on_auxiliary:
        if decoupler is None:
            return "needs a decoupler trained on auxiliary data (pass decoupler=)"
        return None
    if "image_shape" in cls.params and "image_shape" not in table.meta:
        return "an image method: the table has no image_shape (not pixels)"
    return None


def _parts(name: str, known: Mapping[str, Any]) -> list[str]:
    """The registered methods a name stands for: itself, or the steps of ``A+B``."""
    from ...anonymize.registry import get_method, split_composition

    if "+" in name:
        first, posts = split_composition(name)
        return [first, *posts]
    if name not in known:
        get_method(name)  # raises the one-line error with a suggestion
    return [name]


def candidates(table: FeatureTable, methods: Sequence[str] | None = None,
               decoupler: Any = None) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """The candidate settings for ``table`` and the methods left out, with their reasons.

    With ``methods`` None, every registered method that applies; named methods that do not
    apply are refused (one line), so a user's choice is never silently dropped. Candidates are
    interleaved across methods (every method's first setting, then every second one ...), so
    that a short budget still covers every method.
    """
    known = registered_methods()
    skipped: list[dict[str, Any]] = []
    chosen: list[str] = []
    spaces_of: dict[str, tuple[dict[str, Any], ...]] = {}
    if methods is not None:
        for name in methods:
            parts = _parts(name, known)  # one-line error (with a suggestion) for a bad name
            for part in parts:
                why = _applies(known[part], table, decoupler)
                if why is not None:
                    raise BioanonError(f"method '{name}' cannot be searched on this table: "
                                       f"{why}; drop it from methods=", parameter="methods")
            chosen.append(name)
            # a composition A+B is searched over A's settings (plain keys go to A)
            spaces_of[name] = known[parts[0]].search_space
    else:
        for name, cls in known.items():
            why = _applies(cls, table, decoupler)
            if why is None:
                chosen.append(name)
                spaces_of[name] = cls.search_space
            else:
                skipped.append({"method": name, "reason": why})
    spaces = [_settings(n, spaces_of[n], table, known) for n in chosen]
    out = [c for depth in range(max((len(s) for s in spaces), default=0))
           for s in spaces if depth < len(s) for c in s[depth:depth + 1]]
    if decoupler is not None:
        out = [Candidate(c.method, {**c.params, "decoupler": decoupler})
               if known[_parts(c.method, known)[0]].fit_on_auxiliary else c for c in out]
    return out, skipped


def _settings(name: str, space: Sequence[Mapping[str, Any]], table: FeatureTable,
              known: Mapping[str, Any]) -> list[Candidate]:
    """Method ``name``'s settings as they act on ``table`` (the method's ``setting_for``: a
    parameter with no effect there dropped, a stated layout filled in), each once."""
    cls = known.get(_parts(name, known)[0])
    out: list[Candidate] = []
    for p in space:
        params = cls.setting_for(dict(p), table) if cls is not None else dict(p)
        if all(params != c.params for c in out):
            out.append(Candidate(name, params))
    return out


def build_candidate(c: Candidate, interest: str, sensitive: str,
                    additional: Sequence[str] | None, random_state: int | None) -> Any:
    """The anonymizer of a candidate with the roles filled in (checked, not fitted)."""
    return build_method(c.method, {**c.params, **c.hidden}, interest=interest,
                        sensitive=sensitive, additional=list(additional or []),
                        random_state=random_state)


@dataclass(frozen=True)
class SearchSpace:
    """Where a search's candidates come from and how each is judged (what differs between
    the release paths; the default: every applicable method's ``search_space``, judged as
    it is).

    Attributes
    ----------
    decoupler : optional
        A trained decoupler, for the sanitizer to be searched.
    budget : bioanon.certification.dp_budget.DPBudget, optional
        A declared differential-privacy budget: only the DP methods are searched, each
        setting at exactly its ε and δ (public side data, when given, fix the bounds).
    judge_as : callable, optional
        Turns each candidate's anonymizer into the estimator the judge evaluates (tuning and
        confirmation alike), e.g. the bucketed rule of a dask release
        (:class:`~bioanon.scale.BucketedMixing`), so the certificate describes what is
        written.
    public : bioanon.certification.public_basis.PublicRecords, optional
        Public records given without a budget: the settings the methods declare in a public
        basis (``public_basis_space``) are tried too, after the others.
    screen : bool
        Stage 1 screens every setting with the cheap membership attackers first
        (:func:`~bioanon.certification.search.judging.screen_bound`): one they put above
        every level's record-level target is decided without the other attackers (its row:
        ``judged_by`` the screen). False: every attacker judges every setting (the exhaustive
        search never screens).
    """

    decoupler: Any = None
    budget: Any = None
    judge_as: Callable[[Any], Any] | None = None
    public: Any = None
    screen: bool = True

    def candidates(self, table: FeatureTable, methods: Sequence[str] | None,
                   sensitive: str, interest: str | None = None,
                   additional: Sequence[str] = ()
                   ) -> tuple[list[Candidate], list[dict[str, Any]]]:
        """The candidate settings and the methods left out (with their reasons); the roles
        ``interest`` and ``additional`` say which public settings can take a public prior."""
        if self.budget is not None:
            return self.budget.candidates(table, methods, sensitive)
        out, skipped = candidates(table, methods, self.decoupler)
        if self.public is not None:
            out = out + self.public.candidates(table, methods, sensitive, interest,
                                               additional)
        return out, skipped


def checked_candidates(space: SearchSpace, table: FeatureTable,
                        methods: Sequence[str] | None, interest: str, sensitive: str,
                        add: Mapping[str, float]
                        ) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """The search's candidates and the settings skipped, each candidate built once (checked,
    not fitted) so that an impossible setting is refused before any work."""
    cands, skipped = space.candidates(table, methods, sensitive, interest, list(add))
    if not cands:
        raise BioanonError("no registered method applies to this table; name one with "
                           "methods= or check the table's labels and meta",
                           parameter="methods")
    for c in cands:
        build_candidate(c, interest, sensitive, list(add), None)
    return cands, skipped


