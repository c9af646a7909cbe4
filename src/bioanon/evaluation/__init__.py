"""The evaluation: split, anonymize, attack, measure, judge.

- :mod:`.split`: closed-set, grouped and unseen-identity splits;
- :mod:`.options`: :class:`EvaluationOptions`, the judge's options declared once;
- :mod:`.protocol`: :class:`Evaluation` (``evaluate()`` returns it; typed accessors);
  :func:`bioanon.evaluate` (in :mod:`bioanon.report.build`) runs one and returns its report;
- :mod:`.verdict`: the one privacy rule (:func:`verdict`);
- :mod:`.seeds`: the one-way derivation of the anonymizer's seed.

The confirmation of a chosen setting on a fresh split and seed lives with the search that
chooses it (:func:`bioanon.certification.search.confirm`).
"""

from .options import EvaluationOptions
from .protocol import Evaluation, anonymize_splits
from .seeds import derive_seed
from .split import group_split, person_level_columns, split_table
from .utility import utility_views
from .verdict import DEFAULT_TARGET, Verdict, verdict

__all__ = ["DEFAULT_TARGET", "Evaluation", "EvaluationOptions", "Verdict", "anonymize_splits",
           "derive_seed", "group_split",
           "person_level_columns", "split_table", "utility_views", "verdict"]
