"""The evaluation protocol: utility kept and privacy lost, measured on held-out records.

Closed-set protocol (section 5.4 of the evaluation-methodology paper): per identity, 75% of its
records train and 25% test (``test_size``). When the sensitive attribute is not the identity
(gender, age group...), pass ``group`` (the identity column): whole identities then go to one
side, so that a recognizer cannot answer by recognizing the person. Each split is anonymized on
its own with the same parameters (or, for methods with ``fit_on_auxiliary``, by one model fitted
on the train split); the anonymized test split stands for the released data.

:class:`Evaluation` runs the protocol (``evaluate()`` returns the object) and hands out typed
results (:mod:`bioanon.metrics.results`): utility per view (CAS first; attributes constant per
identity scored on unseen identities), every attack with its advantage over the stronger of
chance and the label-only control attacker (with a Newcombe interval), membership and
contributor disclosure, the verification view, and the verdict against a target. The report
package turns it into ``report.json`` and ``report.html``; nothing here renders or writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from ..anonymize import SelectiveMeanAnonymizer  # noqa: F401  (the examples below)
from ..attack import ModelCache, run_panel, training_set
from ..attack.contributors import contributor_disclosure
from ..attack.control import control_rate
from ..attack.parallel import is_parallel
from ..attack.recognizers import model_name, parse_models
from ..attack.selection import (
    _identity_matrix,
    identity_counts,
    metadata_columns,
    parse_strategies,
    selection_curves,
)
from ..attack.threat import MODES, parse_modes
from ..attack.verification import VOICEPRIVACY, verification
from ..errors import BioanonError, refuse_class
from ..metrics import chance_level, mixture, utility
from ..metrics.results import (
    AttackResult,
    ContributorResult,
    Interval,
    MembershipResult,
    Rate,
    RiskResult,
    UtilityResult,
    VerificationResult,
)
from ..progress import Steps, stages
from ..table import (
    FeatureTable,
    check_column_name,
    refuse_group_role,
    refuse_revealing_roles,
)
from .beside import Beside
from .caps import capped_rows
from .consumer import apply_pick, consumer_panel
from .options import EvaluationOptions, additional_weights
from .risks import (
    ADVANTAGE_METHOD,
    RiskContext,
    advantage_interval,
    apply_accepted,
    cover,
    not_covered,
    registry,
)
from .risks.base import floor_decision, target_at
from .seeds import check_seed, derive_seed, reseeded
from .split import group_split, judged_split, person_level_columns, repeats
from .units import in_units, unit_scale
from .utility import utility_views
from .verdict import (
    verdict,
)

Progress = Callable[[int, int, str], None]


def anonymize_splits(anonymizer: Any, train: FeatureTable, test: FeatureTable,
                     tick: Callable[[str], None] = lambda _: None,
                     mixing: list[Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Anonymize both splits with the same parameters.

    The splits are passed as FeatureTables, so methods can read the table's meta (an image
    method its ``image_shape``). By default each split is anonymized on its own
    (``fit_transform``), as the owner would anonymize the data to release. Methods that learn
    a model on auxiliary data (``fit_on_auxiliary = True``) are fitted once on the training
    split and transform both (``release`` when the method has it).

    ``mixing``, when given and the method mixes records (``release_with_mixing``), receives
    the test split's secret mixing matrix, in process only.
    """
    if getattr(anonymizer, "fit_on_auxiliary", False):
        tick("fitting the anonymizer on the train split (auxiliary data)")
        fitted = clone(anonymizer).fit(train, train.labels)
        release = getattr(fitted, "release", None) or fitted.transform
        tick("anonymizing both splits")
        return (_features(release(train, train.labels)),
                _features(release(test, test.labels)))
    tick("anonymizing the train split")
    # the training split's release draws its own noise (reseeded): the release judged is the
    # test split's, made with the anonymizer's own seed
    anon_train = _features(reseeded(anonymizer, "train split").fit_transform(train,
                                                                              train.labels))
    tick("anonymizing the test split (the release)")
    if mixing is not None and hasattr(anonymizer, "release_with_mixing"):
        out, M = clone(anonymizer).release_with_mixing(test, test.labels)
        if M is not None:
            mixing.append(M)
        return anon_train, _features(out)
    return anon_train, _features(clone(anonymizer).fit_transform(test, test.labels))


def _features(released: Any) -> np.ndarray:
    """The feature matrix of an anonymizer's output (a FeatureTable or an array)."""
    return np.asarray(released.X if isinstance(released, FeatureTable) else released)


def _with_seed(anonymizer: Any, seed: int) -> Any:
    """A clone whose unset ``random_state`` is a seed derived from the evaluation seed."""
    params = anonymizer.get_params(deep=False) if hasattr(anonymizer, "get_params") else {}
    if "random_state" in params and params["random_state"] is None:
        return clone(anonymizer).set_params(random_state=derive_seed(seed, "anonymizer"))
    return anonymizer


def _with_layout(anonymizer: Any, table: FeatureTable) -> Any:
    """A clone stating the table's declared layout (``--layout``) when the method takes one
    and does not set it: the judge's model-aware attacker rebuilds the basis from it."""
    from ..layout import META_KEY

    declared = (table.meta or {}).get(META_KEY)
    params = anonymizer.get_params(deep=False) if hasattr(anonymizer, "get_params") else {}
    if declared is None or "layout" not in params or params["layout"] is not None:
        return anonymizer
    if params.get("block") is not None:
        return anonymizer
    return clone(anonymizer).set_params(layout=str(declared))


def _same_model(a: Any, b: Any) -> bool:
    """Whether two ``utility_model`` values name the same model (a name, or one estimator)."""
    return a == b if isinstance(a, str) and isinstance(b, str) else a is b


@dataclass
class StageState:
    """What an evaluation's first stage keeps for the attack panel (:meth:`Evaluation.resume`):
    the split, both splits anonymized, the sensitive labels and a mixing method's matrix. In
    process only: the anonymized splits and the matrix are secrets (an evaluation is pickled
    without them)."""

    train: FeatureTable
    test: FeatureTable
    anon_train: np.ndarray
    anon_test: np.ndarray
    y_tr: np.ndarray
    y_te: np.ndarray
    mixing: list[Any]


@dataclass(frozen=True)
class JudgeCheck:
    """What the judge's check of a table and options derives (:func:`check_judge`): the
    attacker modes, the recognizers, the selection strategies (and whether strict), the
    level, the accepted risks and the released label columns."""

    modes: tuple[str, ...]
    models: tuple[str, ...]
    strategies: tuple[Any, ...]
    strict: bool
    level: Any
    accept_risks: Mapping[str, str]
    label_columns: tuple[str, ...]


def check_judge(table: FeatureTable, interest: str, sensitive: str,
                additional: Mapping[str, float] | None,
                options: EvaluationOptions) -> JudgeCheck:
    """Refuse (one line) a table and options the judge cannot run on, before any work: the
    roles' label columns, the panel, the group, the caps, the level and the accepted risks.

    A caller judging many settings of one table (the search) runs it once and hands the
    result to every :class:`Evaluation` (``checked=``).

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=10, n_features=32)
    >>> check_judge(t, "expression", "identity", None, EvaluationOptions.of()).label_columns
    ('expression',)
    """
    additional = additional_weights(additional)
    check_column_name(interest, "interest", "e.g. evaluate(table, 'digit', 'speaker', ...)")
    check_column_name(sensitive, "sensitive", "e.g. evaluate(table, 'digit', 'speaker', ...)")
    for col in [interest, sensitive, *additional]:
        table.label(col, target=col != sensitive)
    if sensitive == interest or sensitive in additional:
        raise BioanonError(f"'{sensitive}' cannot be both sensitive and useful; pick one role")
    if interest in additional:
        raise BioanonError(f"column '{interest}' is given two roles (interest and "
                           "additional); give every column exactly one role")
    refuse_revealing_roles(table.labels, [interest, *additional], sensitive)
    modes = parse_modes(options.attackers)
    models = options.models
    want_all = isinstance(models, str) and models.strip() == "all"
    model_list = parse_models(models)
    if want_all and "image_shape" in table.meta:
        from ..attack.pretrained import available

        side = int(round(np.sqrt(table.n_features)))
        if side * side == table.n_features and available():
            model_list.append("dlib_embedding")
    strategies, strict = parse_strategies(options.selection)
    group = options.group
    if group is not None:
        table.label(group)
        refuse_group_role(group, sensitive, [interest, *additional])
    released = options.released_labels
    label_columns = list(released if released is not None else [interest, *additional])
    for c in label_columns:
        table.label(c, min_classes=1)
    if sensitive in label_columns:
        raise BioanonError(f"the release cannot carry the sensitive column '{sensitive}'; "
                           "drop it from the released labels")
    return JudgeCheck(tuple(modes), tuple(model_list), tuple(strategies), bool(strict),
                      options.level_, options.accepted, tuple(label_columns))


def judged_sample(table: FeatureTable, interest: str, sensitive: str,
                  options: EvaluationOptions, seed: int
                  ) -> tuple[FeatureTable, dict[str, Any] | None]:
    """The records an evaluation with evaluation seed ``seed`` judges: ``table``, or when it
    holds more than ``max_records`` records a stratified sample of its identities and
    records (:func:`bioanon.sampling.panel_sample`), with the sample's description (None
    when not sampled). Evaluations of many settings with one seed (a search) draw it once.
    """
    if options.max_records is None or table.n_records <= options.max_records:
        return table, None
    from ..sampling import panel_sample

    ps = panel_sample(table.labels, sensitive=options.group or sensitive, stratify=interest,
                      max_records=options.max_records, max_identities=None,
                      random_state=seed)
    return table.subset(ps.index), ps.describe()


def _say_of(tick: Callable[[str], None]) -> Callable[[str], None] | None:
    """The line-saying half of a :class:`~bioanon.progress.Steps` whose ``tick`` is given
    (a line of progress that counts no step); None for any other callable."""
    owner = getattr(tick, "__self__", None)
    return owner.say if isinstance(owner, Steps) else None


class Evaluation:
    """Anonymize a held-out split and measure utility and privacy (call :meth:`evaluate`).

    Parameters
    ----------
    table : FeatureTable
    interest : str
        Column of the attribute of interest.
    sensitive : str
        Column of the sensitive attribute (identity, gender, ...).
    additional : mapping {column: alpha}, optional
        Additional attributes and their weights in U = P + Σ alpha_i Q_i.
    anonymizer : estimator
        Any bioanon anonymizer (cloned); required: ``evaluate()`` refuses to run without one
        rather than judge a default setting the user did not choose (for the setting to
        release, use :func:`bioanon.certify`). When its ``random_state`` is None it is seeded
        with a seed derived one way from ``random_state`` (never written).
    random_state : int
        The evaluation seed: split, recognizers, mixes, selections. Written in reports; the
        anonymizer never draws from it (see :func:`bioanon.evaluation.derive_seed`).
    progress : callable (done, total, text), optional
    cache : ModelCache, optional
        Keeps clear-trained attack models across evaluations of the same table and seed.
    checked : JudgeCheck, optional
        :func:`check_judge` of this table, roles and options, run once by a caller that
        judges many settings (the search); None: checked here.
    options : EvaluationOptions, optional
        The judge's options (:class:`~bioanon.evaluation.options.EvaluationOptions`: the
        attack panel, the split, the risks and their targets).
    **option_values
        Any field of :class:`~bioanon.evaluation.options.EvaluationOptions` (``models=``,
        ``attackers=``, ``level=``, ``max_records=``, ...), replacing the one
        in ``options``; an unknown name raises TypeError.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32)
    >>> ev = Evaluation(t, "expression", "identity", models=["knn"], n_jobs=1,
    ...                 anonymizer=SelectiveMeanAnonymizer("expression", g=8, r_p=0.1),
    ...                 verification=False).evaluate()
    >>> 0 <= ev.cas().value <= 1, ev.worst_case().mode in ev.modes
    (True, True)
    """

    def __init__(self, table: FeatureTable, interest: str, sensitive: str,
                 additional: Mapping[str, float] | None = None, anonymizer: Any = None, *,
                 random_state: int = 0, progress: Progress | None = None,
                 cache: ModelCache | None = None, options: EvaluationOptions | None = None,
                 checked: JudgeCheck | None = None, **option_values: Any) -> None:
        self.table = table
        self.interest = interest
        self.sensitive = sensitive
        self.additional = additional_weights(additional)
        self.anonymizer = anonymizer
        check_seed(random_state, optional=False)  # written in the report: a number, not None
        self.random_state = random_state
        self.progress = progress
        self.cache = cache
        #: the judge's check of this table and these options, when the caller ran it
        self.checked = checked
        #: every option of the judge, checked once
        #: (:class:`~bioanon.evaluation.options.EvaluationOptions`); read, never copied
        self.options = EvaluationOptions.of(options, **option_values)

    # ------------------------------------------------------------------ checks
    def _check(self) -> None:
        """The judge's check (:func:`check_judge`), unless the caller ran it already for
        this table and these options (``checked``: a search judges many settings)."""
        c = self.checked
        if c is None:
            c = check_judge(self.table, self.interest, self.sensitive, self.additional,
                            self.options)
        self.modes, self.model_list = list(c.modes), list(c.models)
        self.strategies, self.strict = list(c.strategies), c.strict
        self.level_, self.accept_risks_ = c.level, dict(c.accept_risks)
        self.label_columns = list(c.label_columns)

    # ------------------------------------------------------------------ the protocol
    def evaluate(self, recognition: bool = True, screen: float | None = None,
                 floor: float | None = None) -> Evaluation:
        """Run the protocol; return ``self`` with every result filled in.

        A table of more than ``max_records`` records is judged on a stratified sample of its
        identities and records (:func:`bioanon.sampling.panel_sample`); the report and the
        verdict give the sample's and the table's sizes.

        Parameters
        ----------
        recognition : bool
            False runs the cheap part only (the search's first stage): the split, the
            anonymization, utility and every risk but those reading the attack panel, whose
            results are the same as a full evaluation's with the same seed; no attack panel
            is run, so ``attacks()``, ``worst_case()`` and ``verdict()`` are not available
            until :meth:`resume` runs it on what this stage kept (a full evaluation is
            exactly this stage followed by :meth:`resume`).
        screen : float, optional
            A search's stage-1 screen (with ``recognition`` False only): when the cheap
            membership attackers already put the record-level advantage's lower 95% bound
            above it, the setting is decided there (:data:`.risks.base.SCREEN_RULE`): that
            figure is its record-level membership result, every other membership and
            inference level reads "not measured" with the reason, and ``screened_`` holds
            it; such an evaluation cannot be resumed. None: every attacker runs.
        floor : float, optional
            With ``screen``: a search's utility floor (a fraction of the clear accuracy).
            Where the screen leaves the setting undecided, the CAS is measured next, and a
            setting whose CAS falls under the floor (or whose lower bound does not rise
            above chance) is decided there (:data:`.risks.base.FLOOR_RULE`): the other
            attackers do not run, every membership and inference level reads "not
            measured" with the reason, and ``floored_`` holds it; such an evaluation
            cannot be resumed.
        """
        if (screen is not None or floor is not None) and recognition:
            raise BioanonError("screen= and floor= apply to a stage-1 evaluation "
                               "(evaluate(recognition=False, screen=..., floor=...))")
        self.recognition_run_ = recognition
        self.screen_ = screen
        self.screened_: str | None = None
        self.floored_: str | None = None
        self._check()
        self._sample()
        progress = stages(self.progress, "evaluating", "bioanon.evaluation")
        anonymizer = self.anonymizer
        self.notes_: list[str] = []
        if anonymizer is None:
            raise BioanonError(
                "no anonymizer was given: pass the method to judge (anonymizer=...), e.g. the "
                "setting bioanon.certify() chose; the seed method's default setting is never "
                "judged in its place")
        refuse_class(anonymizer)
        if not all(hasattr(anonymizer, a) for a in ("get_params", "fit", "transform")):
            raise BioanonError(
                f"anonymizer={anonymizer!r} is not a method to judge; pass an estimator with "
                "fit and transform, e.g. SelectiveMeanAnonymizer(g=8, t=0.5)",
                parameter="anonymizer")
        anonymizer = _with_layout(_with_seed(anonymizer, self.random_state), self.table)
        self.anonymizer_ = anonymizer
        strategies = self._selection_plan()[0]  # refuses a selection it cannot run, first

        state = Steps(progress, 7 + (1 if strategies else 0))
        tick = state.tick

        mixing: list[Any] = []  # the secret mixing matrix: in process only, never written
        train, test, anon_train, anon_test = self._split_and_anonymize(anonymizer, tick, mixing)
        if screen is None:  # utility beside the cheap risks when the jobs allow
            stage = self._utility_beside_risks(train, test, anon_train, anon_test, mixing,
                                               anonymizer, tick)
        else:  # the screen first: a setting it decides needs no CAS
            stage = self._screen_first(train, test, anon_train, anon_test, mixing,
                                       anonymizer, tick, floor)
        if not recognition:
            #: for resume(): in process only (dropped when pickled; None: derive it again)
            self.stage_: StageState | None = stage
            state.finish()
            return self
        return self._panel_stage(stage, progress, state)

    def resume(self) -> Evaluation:
        """Finish a stage-1 evaluation (``evaluate(recognition=False)``): the attack panel
        and the risks reading it, on what stage 1 kept (the split, the anonymized splits,
        utility and every other risk), so that the evaluation is the full one with the same
        seed, to the last bit, without anonymizing or scoring anything again.

        The anonymized splits and a mixing method's matrix are secrets: they stay in the
        process that computed them (an evaluation is pickled without them). An evaluation
        that crossed processes derives them again here from the same seed (the same
        records); utility and the other risks are never recomputed.
        """
        if getattr(self, "recognition_run_", True):
            raise BioanonError("resume() finishes a stage-1 evaluation: call "
                               "evaluate(recognition=False) first")
        if getattr(self, "screened_", None) or getattr(self, "floored_", None):
            raise BioanonError("a setting the stage-1 screen or utility floor decided cannot "
                               "be resumed (its other attackers never ran): evaluate it "
                               "afresh")
        stage = self.__dict__.pop("stage_", None) or self._restage()
        self.recognition_run_ = True
        progress = stages(self.progress, "evaluating", "bioanon.evaluation")
        total = 4 + (1 if self._selection_plan()[0] else 0)
        return self._panel_stage(stage, progress, Steps(progress, total))

    def with_consumer_panel(self, options: EvaluationOptions) -> Evaluation:
        """Add the consumer's panel to a finished evaluation judged without it (a search's
        tuning split runs ``options.for_tuning()``: the ranking panel, its views by a cheap
        model), so that it is the evaluation ``options`` would have made: the same split and
        anonymized records (derived again from the seed, as :meth:`resume` does), every
        risk's figure kept, the panel's pick the headline. Returns ``self``."""
        judged, self.options = self.options, options
        if not options.runs_consumer_panel() or self.interest in self.person_level_:
            return self
        same_model = _same_model(judged.utility_model, options.utility_model)
        same = judged.consumer_panel == options.consumer_panel and same_model
        if same and self.utility_raw_[self.interest].get("consumer") is not None:
            return self
        stage = self._restage()
        if same_model:
            train, test, anon_train, _ = self._in_units(stage.train, stage.test,
                                                        stage.anon_train, None)
            self._consumer(self.utility_raw_[self.interest], train, test, anon_train)
        else:  # every utility view again with the final options' model, then the panel
            self._utility(stage.train, stage.test, stage.anon_train, stage.anon_test,
                          self.anonymizer_, lambda _text: None, announce=False)
        return self

    def consumer_pick(self, options: EvaluationOptions) -> dict[str, Any]:
        """The pick the consumers of ``options`` make on this evaluation's release, and its
        CAS (:func:`.consumer.release_pick`: the release side of the panel alone, on the
        same records, split and seed as :meth:`with_consumer_panel`, so the same pick and
        CAS as its headline; the consumers this evaluation's own panel ran are read, not
        fitted again); the split is derived again from the seed, as :meth:`resume` does,
        and the evaluation is not changed."""
        from .caps import capped_rows
        from .consumer import release_pick

        stage = self._restage()
        col = self.interest
        y = stage.train.labels[col].to_numpy()
        rows = capped_rows(y, options.max_fit_records, self.random_state, f"utility/{col}")
        _, test, anon_train, _ = self._in_units(stage.train, stage.test, stage.anon_train, None)
        assert anon_train is not None
        X = anon_train if rows is None else anon_train[rows]
        ran = (self.utility_raw_.get(col) or {}).get("consumer") or {}
        return release_pick(X, y if rows is None else y[rows], test.X,
                            test.labels[col].to_numpy(), seed=self.random_state,
                            n_jobs=options.n_jobs, models=options.consumer_models(),
                            known=ran.get("models") or ())

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without stage 1's state: its secrets never leave the process
        (:meth:`resume` derives them again)."""
        return {k: v for k, v in self.__dict__.items() if k != "stage_"}

    def _restage(self) -> StageState:
        """Stage 1's split and anonymized splits derived again from the seed (the same
        records: same split, same anonymizer seed)."""
        mixing: list[Any] = []
        parts = self._split_and_anonymize(self.anonymizer_,
                                          lambda _: None, mixing)
        return self._privacy_inputs(*parts, mixing, stage1=False)

    def _privacy_inputs(self, train: FeatureTable, test: FeatureTable, anon_train: np.ndarray,
                        anon_test: np.ndarray, mixing: list[Any], stage1: bool = True
                        ) -> StageState:
        """What every risk reads: the sensitive labels of both splits, and (stage 1) the
        chance level and the label-only control attacker."""
        sensitive = self.sensitive
        y_tr = train.labels[sensitive].astype(str).to_numpy()
        y_te = test.labels[sensitive].astype(str).to_numpy()
        if stage1:
            self.chance_ = chance_level(y_te)
            self.n_classes_ = int(np.unique(y_te).size)
            self.control_ = control_rate(train.labels, y_tr, test.labels, y_te,
                                         self.label_columns)
        return StageState(train, test, anon_train, anon_test, y_tr, y_te, mixing)

    def _panel_stage(self, stage: StageState, progress: Any, state: Steps) -> Evaluation:
        """The attack panel, contributor disclosure, the risks reading the panel (with
        stage 1's figures of the others), verification and identity selection."""
        train, test, anon_train, anon_test = (stage.train, stage.test, stage.anon_train,
                                              stage.anon_test)
        y_tr, y_te, seed, mixing = stage.y_tr, stage.y_te, self.random_state, stage.mixing
        strategies, counts, meta_cols, skipped = self._selection_plan()
        tick = state.tick
        base = state.done
        panel_progress = state.sub("attack panel: ")  # its fits take the panel's step

        predictions: dict[str, np.ndarray] = {}
        panel = run_panel(train.X, anon_train, y_tr, test.X, anon_test, y_te, self.chance_,
                          self.modes, self.model_list, seed=seed, top_k=self.options.top_k,
                          n_jobs=self.options.n_jobs, cache=self.cache, progress=panel_progress,
                          predictions=predictions)
        rows = panel.pop("probe_rows")  # None: every released record was scored
        y_probe = y_te if rows is None else y_te[rows]
        state.done = max(state.done, base + 1)
        self.panel_ = panel
        self._baseline()
        for rec in panel["attacks"]:
            rec["advantage_over_baseline"] = self._advantage(rec).to_dict()
            rec["voiceprivacy"] = VOICEPRIVACY.get(rec["mode"], "")

        # ------------------------------------------------------------ contributors
        self.contributors_: ContributorResult | None = None
        if mixing:  # guesses about released records only (not the reverse attacker's)
            results = [contributor_disclosure(mixing[0], y_te, pred, name, rows)
                       for name, pred in predictions.items()
                       if MODES[name.split(" / ")[0]].probes == "anonymized"]
            if results:
                self.contributors_ = max(results, key=lambda r: r.rate.value)
        mixing.clear()

        # ------------------------------------------------------------ risks (registered)
        ctx = RiskContext(train, test, anon_test, self.anonymizer_, self.interest,
                          self.sensitive, self.label_columns, self.options.group, seed,
                          predictions=predictions, truth=y_probe, chance=self.chance_,
                          control=self.control_, max_candidates=self.options.max_candidates,
                          released_sensitive=self.options.sensitive_released,
                          panel_sample=panel["probes"]["sample"])
        self._run_risks(ctx, tick, panel=True, kept=self.risk_results_)
        ctx = None  # type: ignore[assignment]  # holds the identity release: let it go
        # ------------------------------------------------------------ verification
        self.verification_: list[VerificationResult] = []
        if self.options.verification:
            tick("verification (EER)")
            self.verification_ = [
                verification(train.X, y_tr, anon_test, y_te, "naive", seed),
                verification(anon_train, y_tr, anon_test, y_te, "parrot", seed)]

        # ------------------------------------------------------------ identity selection
        self.selection_ = None
        if strategies or skipped:
            note = state.say
            self.selection_ = _selection_block(
                train, test, (anon_train, anon_test), (y_tr, y_te), panel["attacks"],
                (strategies, counts, skipped, meta_cols), self, note)
        state.finish()
        self.strategies_, self.counts_ = strategies, counts
        self.preview_data_ = (test, anon_test) if self.options.preview else None
        return self

    def _sample(self) -> None:
        """Judge a table of more than ``max_records`` records on a stratified sample of its
        identities and records (described in ``panel_sample_``)."""
        self.table, self.panel_sample_ = judged_sample(self.table, self.interest,
                                                       self.sensitive, self.options,
                                                       self.random_state)

    def _split_and_anonymize(self, anonymizer: Any, tick: Callable[[str], None],
                             mixing: list[Any]
                             ) -> tuple[FeatureTable, FeatureTable, np.ndarray, np.ndarray]:
        """The split (closed set per identity, or whole groups) and both splits anonymized."""
        table, opts, seed = self.table, self.options, self.random_state
        tick("splitting")
        tr, te = judged_split(table, self.interest, self.sensitive, opts.test_size, seed,
                              opts.group)
        if opts.group is None:
            n_copies = table.n_records - repeats(table.X)[1].size
            if n_copies:
                self.notes_.append(
                    f"{n_copies} record(s) repeat another exactly (the same features): each "
                    "is kept with the record it repeats, on one side of every record split, "
                    "so that no member's copy is judged a non-member")
        train, test = table.subset(tr), table.subset(te)
        anon_train, anon_test = anonymize_splits(anonymizer, train, test, tick, mixing)
        anon_train = np.asarray(anon_train, dtype=np.float32)
        anon_test = np.asarray(anon_test, dtype=np.float32)
        if anon_train.shape != train.X.shape or anon_test.shape != test.X.shape:
            raise BioanonError(
                f"the anonymizer returned shape {anon_test.shape} for {test.X.shape} records × "
                "features; the attack panel compares clear and anonymized records and needs one "
                "anonymized record per record in the same feature space"
            )
        self.n_train_, self.n_test_ = train.n_records, test.n_records
        return train, test, anon_train, anon_test

    def _utility_beside_risks(self, train: FeatureTable, test: FeatureTable,
                              anon_train: np.ndarray, anon_test: np.ndarray,
                              mixing: list[Any], anonymizer: Any,
                              tick: Callable[[str], None]) -> StageState:
        """Utility and the cheap risks, at once when ``n_jobs`` allows two tasks
        (:class:`.beside.Beside`: utility in a thread; the same figures as one after the
        other), else utility first; returns the risks' stage state. The utility's progress
        lines come in the same order either way (its first before the risks')."""
        parallel = is_parallel(self.options.n_jobs, 2)
        later: list[str] = []
        tick(self._utility_stage())
        util = Beside(lambda: self._utility(train, test, anon_train, anon_test, anonymizer,
                                            later.append if parallel else tick,
                                            announce=False), parallel)
        try:
            stage = self._privacy_inputs(train, test, anon_train, anon_test, mixing)
            self._cheap_risks(stage, tick)
        except Exception:
            util.wait(raise_error=False)  # the risks' error is the one to say
            raise
        say = _say_of(tick)
        if say is not None and util.running():  # the wait is seconds on large tables
            say("utility: the consumer's panel, beside the risks, finishing")
        util.wait()
        for text in later:
            tick(text)
        return stage

    def _screen_first(self, train: FeatureTable, test: FeatureTable, anon_train: np.ndarray,
                      anon_test: np.ndarray, mixing: list[Any], anonymizer: Any,
                      tick: Callable[[str], None], floor: float | None) -> StageState:
        """A search's stage 1 under its screen, one step after the other: the screen (the
        cheap membership attackers' first game), then the CAS — right after the screen when
        a ``floor`` is set, so that a setting under it is decided before the other attackers
        run (:data:`.risks.base.FLOOR_RULE`), else after every cheap risk, and only for a
        setting the screen left undecided. Returns the risks' stage state."""
        stage = self._privacy_inputs(train, test, anon_train, anon_test, mixing)
        measured: list[bool] = []

        def after_screen() -> str | None:
            self._utility(train, test, anon_train, anon_test, anonymizer, tick)
            measured.append(True)
            u = self.utility()[self.interest]
            return floor_decision(u.cas.value, u.cas.ci, u.clear.value, u.chance, floor)

        self._cheap_risks(stage, tick, after_screen if floor else None)
        if not measured:
            self._utility(train, test, anon_train, anon_test, anonymizer, tick,
                          release=not self.screened_)
        return stage

    def _utility_stage(self) -> str:
        panel = {"off": "", "ranking": ", the linear consumers' pick",
                 "forest-ranking": ", the pick of a forest and the linear consumers"}.get(
            self.options.consumer_panel, ", the consumer's panel")
        return f"utility (CAS and the other views{panel})"

    def _utility(self, train: FeatureTable, test: FeatureTable, anon_train: np.ndarray,
                 anon_test: np.ndarray, anonymizer: Any, tick: Callable[[str], None],
                 release: bool = True, announce: bool = True) -> None:
        """Utility per useful attribute (CAS first); person-level ones on unseen identities.
        ``release`` False (a setting stage 1's screen decided): the clear figures only, every
        view of the release not measured (NaN). ``announce`` False: the caller said its
        progress line."""
        if announce:
            tick(self._utility_stage())
        train, test, anon_train, anon_test = self._in_units(train, test, anon_train, anon_test)
        opts = self.options
        columns = [self.interest, *self.additional]
        self.person_level_ = (person_level_columns(self.table.labels, self.sensitive, columns)
                              if opts.group is None else [])
        consumer = self.interest not in self.person_level_ and opts.runs_consumer_panel()
        fitted: dict[tuple[str, str], Any] | None = {} if consumer else None
        util = utility_views(train, test, anon_train, anon_test, columns, opts.utility_model,
                             self.random_state, opts.n_jobs, cache=self.cache,
                             max_fit_records=opts.max_fit_records, keep=fitted,
                             release=release)
        self.utility_notes_: list[str] = []
        if not release:
            if consumer:  # the clear figure is the clear pick's, as on every other row
                self._consumer(util[self.interest], train, test, None, fitted)
            self.utility_raw_ = util
            return
        if consumer:
            self._consumer(util[self.interest], train, test, anon_train, fitted)
        if self.person_level_:
            tick("utility of person-level attributes on unseen identities")
            self._unseen_identity_utility(util, anonymizer)
        self.utility_raw_ = util

    def _in_units(self, train: FeatureTable, test: FeatureTable, anon_train: np.ndarray | None,
                  anon_test: np.ndarray | None
                  ) -> tuple[FeatureTable, FeatureTable, np.ndarray | None, np.ndarray | None]:
        """The arrays the utility models read, in the units :func:`.units.unit_scale` gives
        the whole table (one power of two: the same arrays, as they are, for a table in the
        usual range), clear and released alike, after anonymization."""
        if getattr(self, "unit_", None) is None:
            self.unit_ = unit_scale(self.table.X)
        s = self.unit_
        if s == 1.0:
            return train, test, anon_train, anon_test

        def scaled(t: FeatureTable) -> FeatureTable:
            return FeatureTable._of_checked(in_units(t.X, s), t.labels, t.feature_names,
                                            t.meta)

        return (scaled(train), scaled(test),
                None if anon_train is None else in_units(anon_train, s),
                None if anon_test is None else in_units(anon_test, s))

    def _consumer(self, entry: dict[str, Any], train: FeatureTable, test: FeatureTable,
                  anon_train: np.ndarray | None,
                  fitted: dict[tuple[str, str], Any] | None = None) -> None:
        """The consumer's panel on the interest (:mod:`.consumer`), when the options run it
        here: its pick becomes the headline CAS and the clear pick the clear accuracy.
        ``fitted``: the utility views' models of the interest (the same records and seed),
        which the panel reads instead of fitting them again. ``anon_train`` None (a setting
        stage 1's screen decided): the clear side alone, its pick the clear accuracy."""
        opts = self.options
        if not opts.runs_consumer_panel():
            return
        col = self.interest
        y = train.labels[col].to_numpy()
        rows = capped_rows(y, opts.max_fit_records, self.random_state, f"utility/{col}")
        X_clear, X_anon = train.X, anon_train
        if rows is not None:
            X_clear, y = train.X[rows], y[rows]
            X_anon = None if anon_train is None else anon_train[rows]
        panel = consumer_panel(X_clear, y, X_anon, test.X, test.labels[col].to_numpy(),
                               seed=self.random_state, n_jobs=opts.n_jobs, cache=self.cache,
                               fitted=fitted, models=opts.consumer_models())
        if X_anon is None:
            entry["clear"] = float(panel["clear"]["value"])
            entry["clear_model"] = panel["clear_pick"]
        else:
            apply_pick(entry, panel)
        if fitted:
            fitted.clear()  # the models are let go once the panel has read them

    def _cheap_risks(self, stage: StageState, tick: Callable[[str], None],
                     after_screen: Callable[[], str | None] | None = None) -> None:
        """Every registered risk that needs no attack panel (stage 1), as the full
        evaluation reports them; the panel's results stay empty until :meth:`resume`.
        ``after_screen``: see :attr:`.risks.base.RiskContext.after_screen`."""
        self.panel_ = None
        self.contributors_ = None
        self.crossfit_ = None
        ctx = RiskContext(stage.train, stage.test, stage.anon_test, self.anonymizer_,
                          self.interest, self.sensitive, self.label_columns,
                          self.options.group, self.random_state, predictions={},
                          truth=stage.y_te, chance=self.chance_, control=self.control_,
                          max_candidates=self.options.max_candidates,
                          screen=getattr(self, "screen_", None),
                          released_sensitive=self.options.sensitive_released,
                          after_screen=after_screen, say=_say_of(tick))
        self._run_risks(ctx, tick, panel=False)
        ctx.after_screen = ctx.say = None  # they hold this evaluation: nothing keeps them
        self.screened_ = ctx.screened
        self.floored_ = ctx.floored
        self.verification_ = []
        self.selection_ = None
        self.strategies_, self.counts_ = [], []
        self.preview_data_ = None

    def _run_risks(self, ctx: RiskContext, tick: Callable[[str], None], panel: bool,
                   kept: Mapping[str, list[RiskResult]] | None = None) -> None:
        """Run every registered risk (those reading the attack panel only with ``panel``),
        each against the target its option holds; a risk switched off is reported "not
        measured"; a risk in ``kept`` (stage 1's results) is not run again. Sets ``risks_``
        (covered by the guarantee, accepted as named) and ``risk_results_`` (each risk's
        results, before cover)."""
        specs = [s for s in registry.REGISTRY if panel or not s.panel]
        self.risk_specs_ = tuple(specs)  # the registry entries run (the caps' widths read them)
        kept = dict(kept or {})
        results: dict[str, list[RiskResult]] = {}
        done: dict[str, Any] = {}
        for i, spec in enumerate(specs):
            target = self.options.target(spec.target_option)
            if spec.name in kept:
                results[spec.name] = list(kept[spec.name])
            elif spec.switch is not None and not getattr(self.options, spec.switch):
                results[spec.name] = [not_covered(spec.name, ctx.level, spec.statistic,
                                                  target_at(target, ctx.level),
                                                  f"{spec.name} was not run "
                                                  f"({spec.switch}=False)")]
                continue
            else:
                if spec.stage:
                    tick(spec.stage)
                done[spec.name] = spec.evaluator(ctx, target).evaluate()
                results[spec.name] = list(done[spec.name].results())
            if (spec.panel and not any(s.panel for s in specs[i + 1:])
                    and isinstance(ctx.predictions, dict)):
                ctx.predictions.clear()  # the panel's guesses are read by these risks only
        self.crossfit_ = next((d.crossfit_ for d in done.values()
                               if getattr(d, "crossfit_", None) is not None), None)
        legacy = next((d.legacy() for d in done.values() if hasattr(d, "legacy")), None)
        if legacy is not None or not kept:
            self.membership_: list[MembershipResult] = legacy or []
        self.risk_results_ = results
        risks = [r for spec in specs for r in results[spec.name]]
        self.risks_ = apply_accepted(cover(risks, self.options.guarantee), self.accept_risks_)

    def _selection_plan(self) -> tuple[list[str], list[int], list[str], dict[str, str]]:
        table, sensitive = self.table, self.sensitive
        strategies, strict = list(self.strategies), self.strict
        n_ids = int(table.labels[sensitive].nunique())
        counts = identity_counts(n_ids, self.options.identities) if strategies else []
        meta_cols: list[str] = []
        skipped: dict[str, str] = {}
        if "metadata" in strategies:
            if self.options.metadata is not None:
                for c in self.options.metadata:
                    table.label(c)
                meta_cols = list(self.options.metadata)
            else:
                meta_cols = metadata_columns(table.labels, sensitive,
                                             exclude=[self.interest, *self.additional])
            if not meta_cols:
                if strict:
                    raise BioanonError(f"the metadata strategy needs label columns with one "
                                       f"value per '{sensitive}' (age, gender...); add them or "
                                       "drop it")
                skipped["metadata"] = f"no label column has one value per '{sensitive}'"
                strategies = [s for s in strategies if s != "metadata"]
        if strategies and not counts:
            if strict:
                raise BioanonError(f"'{sensitive}' has only {n_ids} values; identity selection "
                                   "needs at least 4 (selection=none)", parameter="selection")
            skipped.update({s: f"only {n_ids} values of '{sensitive}'; nothing smaller to "
                               "select" for s in strategies})
            strategies = []
        return strategies, counts, meta_cols, skipped

    def _unseen_identity_utility(self, util: dict[str, dict[str, Any]], anonymizer: Any) -> None:
        """Re-score person-level attributes on identities absent from training."""
        seed = derive_seed(self.random_state, "unseen-identity split") % (2**31)
        for col in self.person_level_:
            try:
                tr, te = group_split(self.table, self.sensitive, col, self.options.test_size, seed)
            except BioanonError as exc:
                self.utility_notes_.append(f"'{col}' is constant per identity but could not be "
                                           f"scored on unseen identities ({exc}); closed-set "
                                           "figures shown")
                continue
            train, test = self.table.subset(tr), self.table.subset(te)
            a_tr, a_te = anonymize_splits(anonymizer, train, test)
            train, test, s_tr, s_te = self._in_units(train, test, np.asarray(a_tr, np.float32),
                                                     np.asarray(a_te, np.float32))
            assert s_tr is not None and s_te is not None
            out = utility_views(train, test, s_tr, s_te, [col], self.options.utility_model,
                                self.random_state, self.options.n_jobs,
                                max_fit_records=self.options.max_fit_records)[col]
            out["split"] = "unseen identities"
            if col == self.interest:
                self._consumer(out, train, test, s_tr)
            util[col] = out
            self.utility_notes_.append(
                f"'{col}' is constant within each '{self.sensitive}': its utility is scored on "
                "identities that were not in training (whole identities held out)")

    def _baseline(self) -> None:
        ctrl = self.control_
        if ctrl.value > self.chance_:
            self.baseline_, self.baseline_name_ = ctrl.value, "control"
        else:
            self.baseline_, self.baseline_name_ = self.chance_, "chance"

    def _advantage(self, rec: Mapping[str, Any]) -> Interval:
        n = int(rec["n"])
        hits = int(round(rec["accuracy"] * n))
        d, lo, hi, _ = advantage_interval(hits, n, self.chance_, self.control_)
        return Interval(d, (lo, hi), ADVANTAGE_METHOD)

    # ------------------------------------------------------------------ accessors
    def _fitted(self) -> None:
        if not hasattr(self, "panel_"):
            raise BioanonError("call evaluate() first: Evaluation(...).evaluate()")

    def utility(self) -> dict[str, UtilityResult]:
        """Per useful attribute: CAS, clear, the paper's view, anonymized → anonymized."""
        self._fitted()
        out = {}
        for col, u in self.utility_raw_.items():
            n = int(u["n"])

            def rate(v: float, n: int = n) -> Rate:
                if not np.isfinite(v):  # a view not measured (a setting the screen decided)
                    return Rate(float("nan"), (float("nan"), float("nan")), n)
                return Rate.from_counts(int(round(v * n)), n)

            out[col] = UtilityResult(col, rate(u["cas"]), rate(u["clear"]), rate(u["anonymized"]),
                                     rate(u["anonymized_to_anonymized"]), u["chance"],
                                     u["split"], self.additional.get(col))
        return out

    def cas(self) -> Rate:
        """Classification accuracy score of the interest attribute (the headline utility)."""
        return self.utility()[self.interest].cas

    def chance(self) -> float:
        """Majority-class rate of the sensitive attribute on the released records."""
        self._fitted()
        return self.chance_

    def control(self) -> Rate:
        """Accuracy of the label-only control attacker (released label columns only)."""
        self._fitted()
        return self.control_

    def baseline(self) -> tuple[float, str]:
        """max(chance, control) and which of the two it is."""
        self._fitted()
        return self.baseline_, self.baseline_name_

    def attacks(self) -> list[AttackResult]:
        """Every attack of the panel, typed."""
        self._fitted()
        return [AttackResult(a["mode"], a["model"], Rate(a["accuracy"], tuple(a["ci"]), a["n"],
                                                         int(round(a["accuracy"] * a["n"]))),
                             self._advantage(a), self.baseline_, self.baseline_name_,
                             VOICEPRIVACY.get(a["mode"], ""))
                for a in self.panel_["attacks"]]

    def worst_case_crossfit(self) -> dict[str, Any] | None:
        """The worst case with the attacker chosen on other records (no winner's curse)."""
        self._fitted()
        return self.crossfit_

    def worst_case(self) -> AttackResult:
        """The strongest attack (highest accuracy) over every attacker and recognizer."""
        return max(self.attacks(), key=lambda a: a.rate.value)

    def advantage(self) -> Interval:
        """Worst attack − max(chance, control), with its 95% interval."""
        return self.worst_case().advantage

    def membership(self) -> list[MembershipResult]:
        """Membership disclosure (record level, and identity level where it applies)."""
        self._fitted()
        return list(self.membership_)

    def contributors(self) -> ContributorResult | None:
        """Contributor disclosure of a mixing method (None for other methods)."""
        self._fitted()
        return self.contributors_

    def verification(self) -> list[VerificationResult]:
        """EER of the cosine verifier, ignorant (naive) and semi-informed (parrot)."""
        self._fitted()
        return list(self.verification_)

    def risks(self) -> list[RiskResult]:
        """Every risk, typed: recognition, membership, inference, per level measured."""
        self._fitted()
        return list(self.risks_)

    def notes(self) -> list[str]:
        """Notes of the evaluation (for the report)."""
        self._fitted()
        return list(self.notes_)

    def verdict(self, target_advantage: float | None = None) -> Any:
        """The verdict of every risk against this evaluation's targets (recognition's may be
        overridden)."""
        return verdict(self, self.options.target_advantage if target_advantage is None
                       else target_advantage, level=self.level_,
                       accept_risks=self.accept_risks_, guarantee=self.options.guarantee)


def _selection_block(train: FeatureTable, test: FeatureTable,
                     anon: tuple[np.ndarray, np.ndarray], y: tuple[np.ndarray, np.ndarray],
                     attacks: list[dict[str, Any]],
                     plan: tuple[list[str], list[int], dict[str, str], list[str]],
                     ev: Evaluation, note: Callable[[str], Any]) -> dict[str, Any]:
    """Identity-count curves of the strongest trained attacker of the panel."""
    (anon_train, anon_test), (y_tr, y_te) = anon, y
    strategies, counts, skipped, meta_cols = plan
    sensitive, chance, seed = ev.sensitive, ev.chance_, ev.random_state
    n_ids = int(ev.table.labels[sensitive].nunique())
    block: dict[str, Any] = {"strategies": {}, "skipped": skipped, "counts": counts}
    trained = [a for a in attacks if MODES[a["mode"]].anonymized_fraction is not None]
    if not strategies or not trained:
        return block
    best = max(trained, key=lambda a: a["accuracy"])
    mode, model = best["mode"], best["model"]
    note(f"identity selection ({mode} attacker with {model})")
    spec = MODES[mode]
    X_fit = training_set(train.X, anon_train, y_tr, float(spec.anonymized_fraction), seed)
    X_probe = anon_test if spec.probes == "anonymized" else test.X  # reverse: clear probes
    meta = None
    if "metadata" in strategies:
        ids = np.unique(y_tr)
        labels = train.labels.assign(**{sensitive: y_tr})
        meta = _identity_matrix(labels, sensitive, meta_cols, ids)
    curves = selection_curves(X_fit, y_tr, X_probe, y_te, model=model, strategies=strategies,
                              counts=counts, anon_train=anon_train, metadata=meta,
                              n_random=ev.options.n_random, seed=seed,
                              n_jobs=ev.options.n_jobs)
    block.update({
        "attacker": {"mode": mode, "model": model, "train_data": best["train_data"]},
        "full": {"n_identities": n_ids, "accuracy": best["accuracy"], "chance": chance},
        "metadata_columns": meta_cols if "metadata" in strategies else [],
        "strategies": curves,
    })
    return block


__all__ = ["Evaluation", "JudgeCheck", "StageState", "anonymize_splits", "check_judge",
           "judged_sample", "model_name", "mixture",
           "utility"]
