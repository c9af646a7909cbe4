"""Options shared by several commands (``anonymize``, ``evaluate``, ``release``, ``tune``,
``preview``, ``train-decoupler``): the column roles, the verdict's targets, accepted risks,
the attacker modes, an image shape.

The flags the risks need derive from the risk registry
(:data:`bioanon.evaluation.risks.registry.REGISTRY`): ``--target-advantage`` and ``--level``
(one per option a risk reads its target from, :data:`TARGET_FLAGS`) name the risks they
judge, ``--accept-risk`` lists every ``LEVEL-RISK``. Every evaluation option a command takes
is declared once here (:class:`JudgeFlag`: :data:`JUDGE_FLAGS`, :data:`TARGET_FLAGS`), and
:func:`judge_options` adds them all, with each risk's ``--SWITCH/--no-SWITCH``, to a command,
which receives their values by option name.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer

from ..attack.recognizers import DEFAULT_MODELS
from ..errors import BioanonError
from ..evaluation.options import DEFAULT_TARGET, EvaluationOptions
from ..evaluation.risks import registry

F = TypeVar("F", bound=Callable[..., Any])

IdentOpt = Annotated[list[str] | None, typer.Option(
    "--identifying", help="Identifying column (id, name, file name): read, never released.")]
QuasiOpt = Annotated[list[str] | None, typer.Option(
    "--quasi", help="Quasi-identifying column to release; checked by the join check.")]
KeepOpt = Annotated[list[str] | None, typer.Option(
    "--keep", help="Label column to release as it is; checked by the join check.")]
KeepAsFeatureOpt = Annotated[list[str] | None, typer.Option(
    "--keep-as-feature", metavar="COL", help="Release this numeric column as a feature although "
                                             "it looks like metadata (a count, a rate, an id; "
                                             "CSV or non-bioanon Parquet input); a shell "
                                             "pattern such as 'px_*' names several.")]
AttackersOpt = Annotated[str, typer.Option(
    help="Attacker modes, comma-separated, or 'all': naive, parrot, parrot25, parrot50, "
         "parrot75, reverse, linkage.")]
LayoutOpt = Annotated[str | None, typer.Option(
    "--layout", metavar="LAYOUT",
    help="Which feature columns form which trajectories, in column order: groups joined by "
         "'+', each TRACKSxSTEPS (trajectories of STEPS consecutive features) or COUNT "
         "(features outside any trajectory), covering every feature, e.g. 20x16+80. Methods "
         "with a temporal basis (dp-cells) use it; without it they read NAME_tK feature "
         "names, else keep the features as they are.")]
ForceOpt = Annotated[bool, typer.Option(
    "--force/--no-force", help="Release even when kept columns single out identities (recorded).")]

#: the evaluation's --seed: what is written and what is not
EvalSeedOpt = Annotated[int | None, typer.Option(
    "--seed", help="Evaluation seed (default 0): fixes the split, the recognizers and the "
                   "training mixes, and is written to report.json and report.html. The "
                   "anonymizer inside the evaluation never uses it: it draws from a seed "
                   "derived from it by a one-way hash, which is not written anywhere. It is "
                   "not a release key: releases use anonymize --seed.")]


def _names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


def target_help() -> str:
    """``--target-advantage``'s help: the registered risks judged by a target of their own."""
    return (f"Target of {_names(registry.risks_judged_by('target_advantage'))} in the verdict: "
            "the upper end of the 95% interval of the worst attack's advantage over "
            "max(chance, control) must be at most this ("
            f"{EvaluationOptions.constraint_text('target_advantage')}).")


def level_help() -> str:
    """``--level``'s help: the registered risks judged at the privacy level."""
    return (f"Privacy level of {_names(registry.risks_judged_by('level'))}, each judged by "
            "its membership advantage TPR − FPR (upper 95% bound): strict, standard "
            "(default), basic, or a number (the same target at the record and identity "
            "levels). The levels: docs/certification.md.")


def accept_help() -> str:
    """``--accept-risk``'s help: every LEVEL-RISK of the registered risks."""
    return ("Accept a named risk explicitly (LEVEL-RISK: "
            f"{', '.join(registry.accept_names())}) with --reason; recorded in the report "
            "and the manifest. Repeat both to accept several.")


def switch_help(switch: str) -> str:
    """The help of a registered risk's switch (``--membership/--no-membership``)."""
    specs = [s for s in registry.REGISTRY if s.switch == switch]
    what = "; ".join(s.question for s in specs if s.question)
    return (f"Judge {_names([s.name for s in specs])}" + (f" ({what})" if what else "") +
            f"; --no-{switch.replace('_', '-')} leaves it out (reported as not measured, "
            "never met).")


@dataclass(frozen=True)
class JudgeFlag:
    """One option of :class:`~bioanon.evaluation.options.EvaluationOptions` as the command
    line types it: declared here once, added to each command in ``commands`` by
    :func:`judge_options`, shown by ``--help-all`` only when ``detail``, and given a case of
    the bad-input corpus by ``bad`` (a value the option refuses)."""

    option: str
    flag: str
    kind: Any
    default: Any
    help: str | Callable[[], str]
    parse: Callable[[Any], Any] = lambda v: v
    commands: tuple[str, ...] = ("evaluate", "release")
    detail: bool = True
    bad: tuple[str, ...] | None = None

    def declaration(self) -> Any:
        """The typer declaration (its help as the registry reads now)."""
        text = self.help() if callable(self.help) else self.help
        return Annotated[self.kind, typer.Option(*self.flag.split(" "), help=text)]


def _models(text: str) -> Any:
    from ..attack import parse_models

    return "all" if text.strip() == "all" else parse_models(text)


def _columns(text: str | None) -> list[str] | None:
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


#: the flag of each option a registered risk reads its target from
#: (:data:`bioanon.evaluation.risks.registry.TARGET_OPTIONS`), by option
TARGET_FLAGS: dict[str, JudgeFlag] = {
    "target_advantage": JudgeFlag("target_advantage", "--target-advantage", float,
                                  DEFAULT_TARGET, target_help, bad=("1.5",)),
    "level": JudgeFlag("level", "--level", str | None, None, level_help, detail=False,
                       bad=("loose",)),
}
#: the other evaluation options the command line takes, by the command's parameter name
JUDGE_FLAGS: dict[str, JudgeFlag] = {
    "models": JudgeFlag(
        "models", "--models", str, ",".join(DEFAULT_MODELS),
        "Attack recognizers, comma-separated, or 'all' (forest, linear_svm, rbf_svm, knn, "
        "mlp, logreg, pca_svm, hgb; on face pixels with the face extra, also the "
        "pre-trained dlib_embedding).", parse=_models, bad=("magic",)),
    "attackers": JudgeFlag(
        "attackers", "--attackers", str, "all",
        "Attacker modes, comma-separated, or 'all': naive, parrot, parrot25, parrot50, "
        "parrot75, reverse, linkage.", bad=("magic",)),
    "selection": JudgeFlag(
        "selection", "--selection", str, "auto",
        "Identity-selection strategies: random, classification, metadata, distinctive, "
        "center; 'auto' (those that apply) or 'none'.", commands=("evaluate",),
        bad=("magic",)),
    "identities": JudgeFlag(
        "identities", "--identities", str | None, None,
        "Identity counts of the selection curves, e.g. 3,6,12 (default: 50%, 25%, ... down "
        "to 3).", commands=("evaluate",), detail=False, bad=("3,abc",)),
    "n_random": JudgeFlag("n_random", "--n-random", int, 10,
                          "Repeats of the random selection.", commands=("evaluate",),
                          bad=("0",)),
    "metadata": JudgeFlag(
        "metadata", "--metadata", str | None, None,
        "Per-identity attribute columns for the metadata strategy, comma-separated "
        "(default: every label column with one value per identity).", parse=_columns,
        commands=("evaluate",), bad=("nope",)),
    "group": JudgeFlag(
        "group", "--group", str | None, None,
        "Column of groups kept whole on one side of every split: the identity (for a "
        "person-level sensitive attribute such as gender) or an execution or session id.",
        detail=False, bad=("nope",)),
    "jobs": JudgeFlag("n_jobs", "--jobs", int, -1, "Parallel fits (-1: all cores).",
                      bad=("0",)),
    "consumer_panel": JudgeFlag(
        "consumer_panel", "--consumer-panel", str, "final",
        "Where the consumer's panel (forest, logistic regression, shrunk LDA, gradient "
        "boosting, k-NN; the pick by 3-fold cross-validation on the release alone, against "
        "the clear data's own pick) makes the headline CAS: final (an evaluation, a "
        "release's confirmation; the search's tuning split ranks by the pick between "
        "LDA and logistic regression, a forest of half the trees beside them where they fall "
        "short on clear records), ranking (that pick everywhere), forest-ranking (the pick "
        "among that forest and the linear consumers), always (the whole panel on the tuning "
        "split too) or off.", bad=("sometimes",)),
    "test_size": JudgeFlag("test_size", "--test-size", float, 0.25,
                           "Share of each identity's records held out (closed set).",
                           commands=("evaluate",), bad=("1.5",)),
    "preview": JudgeFlag(
        "preview", "--preview/--no-preview", bool, False,
        "Add a contact sheet of held-out originals and their released versions to "
        "report.html (pixel tables; uncaptioned). The report then shows real faces: keep it "
        "private.", commands=("evaluate",)),
}
#: the commands that also take each registered risk's --SWITCH/--no-SWITCH
SWITCHED = ("evaluate",)


def target_flag(option: str) -> Any:
    """The declaration of a target option's flag, its help naming the risks it judges (as
    registered now)."""
    return TARGET_FLAGS[option].declaration()


def accept_flag() -> Any:
    """The declaration of ``--accept-risk``, its help listing every LEVEL-RISK."""
    return Annotated[list[str] | None, typer.Option("--accept-risk", help=accept_help())]


def judge_flags(command: str) -> dict[str, JudgeFlag]:
    """The evaluation options ``command`` takes, by parameter name: its own
    (:data:`JUDGE_FLAGS`) and the target option of every registered risk."""
    targets = {o: TARGET_FLAGS[o] for o in registry.target_options()}
    return {name: f for name, f in {**targets, **JUDGE_FLAGS}.items() if command in f.commands}


def switches(command: str) -> list[str]:
    """The registered risks' switches ``command`` takes (each once, in registry order)."""
    if command not in SWITCHED:
        return []
    return [s for s in dict.fromkeys(spec.switch for spec in registry.REGISTRY) if s]


def detail_flags(command: str) -> frozenset[str]:
    """The flags :func:`judge_options` adds to ``command`` that ``--help-all`` shows alone."""
    flags = {f.flag.split("/")[0] for f in judge_flags(command).values() if f.detail}
    return frozenset(flags | {f"--{s.replace('_', '-')}" for s in switches(command)})


TargetOpt = target_flag("target_advantage")
#: ``--consumer-panel`` where a command takes it without the other judge options (``tune``):
#: the same declaration as ``evaluate``'s and ``release``'s
ConsumerPanelOpt = JUDGE_FLAGS["consumer_panel"].declaration()
LevelOpt = target_flag("level")
#: removed: refused with the way forward (one line, exit 2)
TargetMembershipOpt = Annotated[float | None, typer.Option(
    "--target-membership", hidden=True, help="Removed: use --level.")]
TargetInferenceOpt = Annotated[float | None, typer.Option(
    "--target-inference", hidden=True, help="Removed: use --level.")]
AcceptRiskOpt = accept_flag()
ReasonOpt = Annotated[list[str] | None, typer.Option(
    "--reason", help="Why the risk named by the matching --accept-risk is accepted (one "
                     "--reason alone covers every --accept-risk).")]


def parse_level(level: str | None, target_membership: float | None = None,
                target_inference: float | None = None) -> Any:
    """The :class:`~bioanon.levels.Level` of ``--level`` (None: the default); the removed
    ``--target-membership`` / ``--target-inference`` refused in one line naming ``--level``."""
    from ..levels import DELTA_SHOWN, resolve_level

    for flag, v in (("--target-membership", target_membership),
                    ("--target-inference", target_inference)):
        if v is not None:
            raise BioanonError(f"{flag} was removed: membership and inference on members are "
                               "now both judged by the membership advantage (TPR − FPR) "
                               "against one target per level; use --level strict|standard|"
                               "basic or a number, e.g. --level 0.1")
    try:
        return resolve_level(level)
    except BioanonError:
        if _finite(level):
            raise BioanonError(f"--level {level} is out of range; use a target advantage "
                               f"strictly between {DELTA_SHOWN:g} and 1 (or strict, standard, "
                               "basic), e.g. --level 0.1") from None
        raise BioanonError(f"--level {level!r} is not a level; use strict, standard, basic or "
                           f"a target advantage in ({DELTA_SHOWN:g}, 1), e.g. --level 0.1"
                           ) from None


def _finite(text: str | None) -> bool:
    try:
        return math.isfinite(float(text))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def parse_accept(accept: list[str] | None, reason: list[str] | None) -> dict[str, str]:
    """Pair ``--accept-risk`` names with their ``--reason`` (one each, in order; one
    ``--reason`` alone covers every ``--accept-risk``, as the plan's refusal suggests)."""
    names, why = list(accept or []), list(reason or [])
    if not names and not why:
        return {}
    if len(why) == 1 and names:
        why = why * len(names)
    if len(why) != len(names):
        raise BioanonError(f"{len(names)} --accept-risk but {len(why)} --reason; give one "
                           "--reason \"...\" for all of them, or one after each "
                           "--accept-risk")
    pairs: dict[str, str] = {}
    for name, text in zip(names, why, strict=True):  # the second reason once replaced the
        if name in pairs and pairs[name].strip() != text.strip():  # first without a word
            raise BioanonError(f"--accept-risk {name} is given twice, with the reasons "
                               f"{pairs[name]!r} and {text!r}; accept each risk once, with "
                               "one --reason")
        pairs[name] = text
    return registry.check_accepted(pairs)


#: the keyword a command decorated with :func:`judge_options` receives
JUDGE = "judge"


def judge_options(command: str) -> Callable[[F], F]:
    """Add the evaluation's options to ``command``, each declared once here: its
    :data:`JUDGE_FLAGS`, the flag of every option a registered risk reads its target from
    (:data:`TARGET_FLAGS`: ``--target-advantage``, ``--level``), the removed per-risk targets
    (refused), ``--accept-risk``/``--reason`` and, for the commands in :data:`SWITCHED`, each
    registered risk's ``--SWITCH/--no-SWITCH``.

    The command receives ``judge``: the values of those options, parsed, by
    :class:`~bioanon.evaluation.options.EvaluationOptions` field, for
    ``EvaluationOptions.of(**judge)`` (which checks them). A new option is a field there and
    one :class:`JudgeFlag` here; a risk registered with an existing target option adds no
    flag (the help texts name it).
    """

    def decorate(func: F) -> F:
        sig = inspect.signature(func, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != JUDGE]
        kw = inspect.Parameter.KEYWORD_ONLY
        flags = judge_flags(command)
        names = switches(command)
        added = [inspect.Parameter(name, kw, default=f.default, annotation=f.declaration())
                 for name, f in flags.items()]
        added += [inspect.Parameter("target_membership", kw, default=None,
                                    annotation=TargetMembershipOpt),
                  inspect.Parameter("target_inference", kw, default=None,
                                    annotation=TargetInferenceOpt),
                  inspect.Parameter("accept_risk", kw, default=None, annotation=accept_flag()),
                  inspect.Parameter("reason", kw, default=None, annotation=ReasonOpt)]
        added += [inspect.Parameter(name, kw, default=True, annotation=Annotated[
            bool, typer.Option(f"--{name.replace('_', '-')}/--no-{name.replace('_', '-')}",
                               help=switch_help(name))]) for name in names]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            removed = (kwargs.pop("target_membership"), kwargs.pop("target_inference"))
            judge = {f.option: f.parse(kwargs.pop(name)) for name, f in flags.items()}
            judge["level"] = parse_level(judge.get("level"), *removed)
            judge["accept_risks"] = parse_accept(kwargs.pop("accept_risk"),
                                                 kwargs.pop("reason"))
            judge.update({name: kwargs.pop(name) for name in names})
            return func(*args, **kwargs, **{JUDGE: judge})

        first = [p for p in own if p.kind is not kw]  # the flags after the command's own first
        wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=first + added + [p for p in own if p.kind is kw])
        wrapper.__annotations__ = {}
        return wrapper  # type: ignore[return-value]

    return decorate


def parse_hxw(text: str | None, flag: str) -> tuple[int, int] | None:
    """An image shape typed ``HxW`` (``64x64``) as ``(h, w)``; None stays None.

    Raises
    ------
    BioanonError
        When ``text`` is not two integers joined by ``x`` (the message names ``flag``).
    """
    if text is None:
        return None
    try:
        h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise BioanonError(f"{flag} '{text}' must look like HxW, e.g. 64x64") from None
    return h, w
