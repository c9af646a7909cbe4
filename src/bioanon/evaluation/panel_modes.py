"""Where the consumer's panel (:mod:`.consumer`) runs, declared apart from it so that the
options (and a command's start-up) need not import scikit-learn."""

#: where the panel runs (:attr:`EvaluationOptions.consumer_panel`): ``final`` — every single
#: evaluation and a search's confirmation (its tuning split judges by ``utility_model``
#: alone, to keep the search cheap); ``always`` — the search's tuning split too; ``off`` —
#: never (the headline is ``utility_model``'s CAS)
PANEL_MODES = ("final", "always", "off")

__all__ = ["PANEL_MODES"]
