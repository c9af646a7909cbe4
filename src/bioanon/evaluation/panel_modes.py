"""Where the consumer's panel (:mod:`.consumer`) runs, declared apart from it so that the
options (and a command's start-up) need not import scikit-learn."""

#: where the panel runs (:attr:`EvaluationOptions.consumer_panel`): ``final`` — every single
#: evaluation and a search's confirmation, the whole panel; a search's tuning split then runs
#: ``ranking``; ``ranking`` — the ranking panel (:data:`RANKING_MODELS`) only: the pick among
#: the cheap linear consumers, by the same cross-validation on the release alone;
#: ``forest-ranking`` — the forest and the ranking panel, the pick among them by the same
#: cross-validation (the forest by its out-of-bag predictions): what a search's tuning split
#: runs where the linear consumers alone fall short on clear records;
#: ``always`` — the whole panel on the search's tuning split too; ``off`` — never (the
#: headline is ``utility_model``'s CAS)
PANEL_MODES = ("final", "ranking", "forest-ranking", "always", "off")

#: the ranking panel: the consumers a search's tuning split ranks its settings by under
#: ``final`` (shrunk LDA and logistic regression, the consumer's pick between them made as
#: the whole panel makes it). A few fits of a linear model cost a tenth of a second where a
#: forest costs seconds (FSDD: 0.4 s against 2.4 s a setting), and on noisy and Gaussian
#: releases the linear consumers keep as much as the forest or more (FSDD's certified
#: release: logistic regression 0.94–0.95 × where the forest keeps 0.91–0.93 ×). LDA comes
#: first: where both cross-validate alike on the release (a release of class means is
#: separable by either) the order decides, and LDA, whose shrunk class covariance reads a
#: release of averaged records as it reads clear ones, keeps what the forest keeps there
#: where logistic regression can lose a third
RANKING_MODELS = ("lda", "logreg")
#: the forest of ``forest-ranking``: the consumer's forest with half its trees
#: (``bioanon.attack.recognizers.RANKING_FOREST_TREES``). A ranking proxy, as the linear
#: consumers are: the confirmation's whole panel, and the gate before it, judge by the
#: consumer's own forest. On SP-SW-HAR, whose search ranks its 25 settings by the forest,
#: the forest's fits (26 forests of 100 trees) took 36 of the release's 80 CPU seconds under
#: cProfile in one process; with half the trees a row's CAS
#: reads 0.01 lower on average (0.00 to 0.03; one row whose pick changed, 0.08) and the
#: order of the most useful settings is kept
RANKING_FOREST = "ranking_forest"
#: the ranking panel with the forest first (``forest-ranking``): where a linear consumer
#: cannot learn the interest the forest ranks, yet a release the linear consumers
#: cross-validate clearly better on is ranked by their pick, as the confirmation's whole
#: panel would pick (the 1,040-person table, seed 3: ``dp-basis(dp-lda)`` ranked by the
#: forest at 0.94 x clear, then confirmed by logistic regression's pick at 0.69 x). The
#: forest's fit is the utility views' own (its out-of-bag predictions its cross-validation):
#: the linear consumers' few fits are all it adds
FOREST_RANKING_MODELS = (RANKING_FOREST, *RANKING_MODELS)
#: the model of the other utility views on a tuning split the ranking panel ranks (the
#: paper's view, the additional attributes): the panel reuses its fits
RANKING_VIEW_MODEL = "lda"

__all__ = ["FOREST_RANKING_MODELS", "PANEL_MODES", "RANKING_FOREST", "RANKING_MODELS",
           "RANKING_VIEW_MODEL"]
