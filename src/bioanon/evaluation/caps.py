"""Caps on the records a model is trained on and the candidates an attacker scores.

A large table (the panel sample of a Parquet release holds 50,000 records) makes every model
fit and every membership score grow with it, while the intervals the verdict reads shrink
only as one over the square root of the records they count. The judge therefore trains each
utility model on at most ``max_fit_records`` records and lets the membership and inference
attackers score at most ``max_candidates`` candidates per side
(:class:`~bioanon.evaluation.options.EvaluationOptions`); the samples are stratified (by the
predicted column, by identity), drawn from the evaluation seed, and their sizes are reported
beside the intervals. Below the caps nothing is sampled: the figures are exactly those of the
whole split.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..sampling import stratified_positions
from .seeds import derive_seed


def capped_rows(strata: np.ndarray, cap: int | None, seed: int, purpose: str
                ) -> np.ndarray | None:
    """Sorted positions of a sample of at most ``cap`` records stratified by ``strata``
    (None when the cap does not bind: use every record).

    Examples
    --------
    >>> y = np.repeat(["a", "b"], [60, 40])
    >>> rows = capped_rows(y, 10, 0, "demo")
    >>> rows.size, int((y[rows] == "a").sum())
    (10, 6)
    >>> capped_rows(y, 100, 0, "demo") is None, capped_rows(y, None, 0, "demo") is None
    (True, True)
    """
    strata = np.asarray(strata)
    if cap is None or strata.shape[0] <= int(cap):
        return None
    rng = np.random.default_rng(derive_seed(seed, f"cap/{purpose}") % (2**31))
    return stratified_positions(strata.astype(str), int(cap), rng)


def half_width(n: int) -> float:
    """The largest 95% half-width of a rate on ``n`` records (at rate 1/2): 1.96 / (2 √n).

    >>> round(half_width(10_000), 4)
    0.0098
    """
    return float(1.96 * 0.5 / np.sqrt(n)) if n > 0 else float("nan")


def sizes(ev: Any) -> dict[str, Any]:
    """What the caps left of an evaluated :class:`~bioanon.evaluation.Evaluation`: the caps,
    the records the utility models were trained on, the candidates the membership and
    inference attackers scored (of how many), the 95% half-widths of the figures they give
    and a sentence for the verdict (empty when no cap binds: every record was used).
    """
    n_train, n_test = int(ev.n_train_), int(ev.n_test_)
    fit_cap, cand_cap = ev.options.max_fit_records, ev.options.max_candidates

    def cut(n: int, cap: int | None) -> int:
        return n if cap is None else min(n, int(cap))

    utility = {col: {"n_fit": int(u.get("n_fit", n_train)), "n_train": n_train,
                     "n_test": int(u["n"]), "half_width": half_width(int(u["n"]))}
               for col, u in ev.utility_raw_.items()}
    cand = {"members": cut(n_test, cand_cap), "members_total": n_test,
            "non_members": cut(n_train, cand_cap), "non_members_total": n_train,
            "identity_level_records": cut(n_train, cand_cap),
            "identity_level_total": n_train}
    # a rate over the released records: the binomial half-width; a risk scoring candidates
    # (members against non-members): its interval's own half-width, per level
    specs = ev.risk_specs_  # the registered risks this evaluation ran
    widths = {s.name: half_width(n_test) for s in specs if s.counts == "released"}
    scored = tuple(s.name for s in specs if s.counts == "members")
    for r in ev.risks_:
        if r.risk in scored and np.all(np.isfinite(r.ci)):
            widths[r.name] = float((r.ci[1] - r.ci[0]) / 2)
    binding = (any(u["n_fit"] < u["n_train"] for u in utility.values())
               or cand["members"] < n_test or cand["non_members"] < n_train)
    sentence = ""
    if binding:
        fit = "; ".join(f"'{c}' on {u['n_fit']:,} of {u['n_train']:,}"
                        for c, u in utility.items())
        spread = ", ".join(f"{k} ±{v:.3f}" for k, v in widths.items())
        sentence = (f"Utility models trained on at most {fit_cap:,} records each ({fit} "
                    f"training records, scored on all {n_test:,} test records); "
                    f"{' and '.join(scored)} attackers scored {cand['members']:,} of {n_test:,} "
                    f"members and {cand['non_members']:,} of {n_train:,} non-members "
                    f"(identity level: {cand['identity_level_records']:,} of {n_train:,} "
                    f"clear records, every identity kept); 95% half-widths: CAS "
                    f"±{half_width(n_test):.3f}, {spread}.")
    return {"max_fit_records": fit_cap, "max_candidates": cand_cap, "utility": utility,
            "candidates": cand, "half_widths": widths, "binding": bool(binding),
            "sentence": sentence}


__all__ = ["capped_rows", "half_width", "sizes"]
