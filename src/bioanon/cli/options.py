"""Options shared by several commands (``anonymize``, ``evaluate``, ``release``): the column
roles, the verdict's targets, accepted risks."""

from __future__ import annotations

from typing import Annotated

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
TargetMembershipOpt = Annotated[float, typer.Option(
    "--target-membership", help="Membership target: the upper end of the 95% interval of the "
                                "strongest membership attacker's AUC (chosen on one half of "
                                "the candidates, scored on the other) must be at most this.")]
TargetInferenceOpt = Annotated[float, typer.Option(
    "--target-inference", help="Inference target: the upper end of the 95% interval of an "
                               "attacker's advantage in inferring members' released labels "
                               "over the same attack on non-members must be at most this.")]
AcceptRiskOpt = Annotated[list[str] | None, typer.Option(
    "--accept-risk", help="Accept a named risk explicitly (LEVEL-RISK, e.g. "
                          "identity-membership) with --reason; recorded in the report and the "
                          "manifest. Repeat both to accept several.")]
ReasonOpt = Annotated[list[str] | None, typer.Option(
    "--reason", help="Why the risk named by the matching --accept-risk is accepted.")]


def parse_accept(accept: list[str] | None, reason: list[str] | None) -> dict[str, str]:
    """Pair ``--accept-risk`` names with their ``--reason`` (one each, in order)."""
    from ..evaluation.risks import check_accepted

    names, why = list(accept or []), list(reason or [])
    if not names and not why:
        return {}
    if len(why) != len(names):
        raise BioanonError(f"{len(names)} --accept-risk but {len(why)} --reason; give one "
                           "--reason \"...\" after each --accept-risk")
    return check_accepted(dict(zip(names, why, strict=True)))
