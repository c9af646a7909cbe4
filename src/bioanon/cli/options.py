"""Options shared by several commands (``anonymize``, ``evaluate``, ``release``, ``tune``,
``preview``, ``train-decoupler``): the column roles, the verdict's targets, accepted risks,
the attacker modes, an image shape."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..errors import BioanonError

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
ForceOpt = Annotated[bool, typer.Option(
    "--force/--no-force", help="Release even when kept columns single out identities (recorded).")]

#: the evaluation's --seed: what is written and what is not
EvalSeedOpt = Annotated[int | None, typer.Option(
    "--seed", help="Evaluation seed (default 0): fixes the split, the recognizers and the "
                   "training mixes, and is written to report.json and report.html. The "
                   "anonymizer inside the evaluation never uses it: it draws from a seed "
                   "derived from it by a one-way hash, which is not written anywhere. It is "
                   "not a release key: releases use anonymize --seed.")]
TargetOpt = Annotated[float, typer.Option(
    "--target-advantage", help="Recognition target of the verdict: the upper end of the 95% "
                               "interval of the worst attack's advantage over max(chance, "
                               "control) must be at most this.")]
LevelOpt = Annotated[str | None, typer.Option(
    "--level", help="Privacy level of membership and inference on members, both judged by "
                    "the membership advantage TPR − FPR (upper 95% bound): strict, standard "
                    "(default), basic, or a number (the same target at the record and "
                    "identity levels). See the README's levels table.")]
#: removed: refused with the way forward (one line, exit 2)
TargetMembershipOpt = Annotated[float | None, typer.Option(
    "--target-membership", hidden=True, help="Removed: use --level.")]
TargetInferenceOpt = Annotated[float | None, typer.Option(
    "--target-inference", hidden=True, help="Removed: use --level.")]


def parse_level(level: str | None, target_membership: float | None = None,
                target_inference: float | None = None) -> Any:
    """The :class:`~bioanon.levels.Level` of ``--level`` (None: the default); the removed
    ``--target-membership`` / ``--target-inference`` refused in one line naming ``--level``."""
    from ..levels import resolve_level

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
        raise BioanonError(f"--level {level!r} is not a level; use strict, standard, basic or "
                           "a target advantage in (0, 1), e.g. --level 0.1") from None
AcceptRiskOpt = Annotated[list[str] | None, typer.Option(
    "--accept-risk", help="Accept a named risk explicitly (LEVEL-RISK, e.g. "
                          "identity-membership) with --reason; recorded in the report and the "
                          "manifest. Repeat both to accept several.")]
ReasonOpt = Annotated[list[str] | None, typer.Option(
    "--reason", help="Why the risk named by the matching --accept-risk is accepted (one "
                     "--reason alone covers every --accept-risk).")]


def parse_accept(accept: list[str] | None, reason: list[str] | None) -> dict[str, str]:
    """Pair ``--accept-risk`` names with their ``--reason`` (one each, in order; one
    ``--reason`` alone covers every ``--accept-risk``, as the plan's refusal suggests)."""
    from ..evaluation.risks import check_accepted

    names, why = list(accept or []), list(reason or [])
    if not names and not why:
        return {}
    if len(why) == 1 and names:
        why = why * len(names)
    if len(why) != len(names):
        raise BioanonError(f"{len(names)} --accept-risk but {len(why)} --reason; give one "
                           "--reason \"...\" for all of them, or one after each "
                           "--accept-risk")
    return check_accepted(dict(zip(names, why, strict=True)))


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
