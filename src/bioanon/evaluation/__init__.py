"""The evaluation: split, anonymize, attack, measure, judge.

- :mod:`.split`: closed-set, grouped and unseen-identity splits;
- :mod:`.options`: :class:`EvaluationOptions`, the judge's options declared once;
- :mod:`.protocol`: :class:`Evaluation` (``evaluate()`` returns it; typed accessors);
  :func:`bioanon.evaluate` (in :mod:`bioanon.report.build`) runs one and returns its report;
- :mod:`.verdict`: the one privacy rule (:func:`verdict`);
- :mod:`.seeds`: the one-way derivation of the anonymizer's seed.

The confirmation of a chosen setting on a fresh split and seed lives with the search that
chooses it (:func:`bioanon.certification.search.confirm`).

Every name is imported on first use (the options alone do not bring the protocol's stack).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# imported at once: the function ``verdict`` shares its module's name, which importing the
# module would otherwise bind here in its place
from .verdict import DEFAULT_TARGET, Verdict, verdict

if TYPE_CHECKING:
    from .options import EvaluationOptions
    from .protocol import Evaluation, anonymize_splits
    from .seeds import derive_seed
    from .split import group_split, person_level_columns, split_table
    from .utility import utility_views

from .._lazy import lazy_getattr

#: each public name and the module (under this package) that defines it
_LAZY = {
    "Evaluation": "protocol",
    "EvaluationOptions": "options",
    "anonymize_splits": "protocol",
    "derive_seed": "seeds",
    "group_split": "split",
    "person_level_columns": "split",
    "split_table": "split",
    "utility_views": "utility",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = ["DEFAULT_TARGET", "Evaluation", "EvaluationOptions", "Verdict", "anonymize_splits",
           "derive_seed", "group_split",
           "person_level_columns", "split_table", "utility_views", "verdict"]
