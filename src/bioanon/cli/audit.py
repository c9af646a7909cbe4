"""The ``audit`` command: judge a release made by anything (``bioanon.audit``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import BioanonError
from ..io import check_output_dir, resolved
from ..metrics.intervals import rate_words
from .common import (
    OUT_FLAGS,
    InputArg,
    JsonOpt,
    SeedOpt,
    SensitiveOpt,
    app,
    existing_input,
    input_argument,
    notes_console,
    print_json,
    print_risks,
    progress_bar,
    refuse_unused,
    user_errors,
)
from .options import AcceptRiskOpt, LevelOpt, ReasonOpt, parse_accept, parse_level

ReleasedArg = Annotated[Path, input_argument(
    "The release to judge (any format bioanon reads; features matched by name).")]
ControlOpt = Annotated[Path, typer.Option(
    "--control", help="HOLDOUT: records of the same population NOT given to the release "
                      "process (non-members, the attacker's reference, the utility test set).",
    callback=existing_input)]
AuditInterestOpt = Annotated[str, typer.Option(
    "--interest", help="Column of the attribute whose utility is measured (the release "
                       "must carry it).")]
KeptOpt = Annotated[list[str] | None, typer.Option(
    "--label", help="Another label column the release keeps (judged by inference and the "
                    "label join); repeat it.")]
ReproduceOpt = Annotated[str | None, typer.Option(
    "--reproduce", help="A command that re-runs the release process, with {input} and "
                        "{output} placeholders (CSV files): enables the shadow-model "
                        "attacker.")]
ReproduceTimeoutOpt = Annotated[float, typer.Option(
    "--reproduce-timeout", help="Seconds one run of the --reproduce command may take; past "
                                "it the command (and all it started) is stopped and the "
                                "audit refused.")]
SampleOpt = Annotated[int, typer.Option(
    "--sample-records", help="Records of one Parquet table (a file or a folder of parts) "
                             "read at most: a larger one is judged on a seeded stratified "
                             "sample of this size, said in the report.")]
AuditOutOpt = Annotated[Path | None, typer.Option(
    *OUT_FLAGS, help="Folder for report.json and report.html (not RELEASED's folder); none: "
                     "nothing is written.")]


def _check_out(out: Path, inputs: list[Path]) -> None:
    """The report's folder, checked before any work: never RELEASED's own folder."""
    released = inputs[1]
    if resolved(out, "output folder") == resolved(released, "input").parent:
        raise BioanonError(f"-o '{out}' is the folder holding RELEASED; write the report "
                           "elsewhere (the audit writes nothing beside the file it judges)")
    check_output_dir(out, inputs, ["report.json", "report.html"])


@app.command()
@user_errors
def audit(
    input: InputArg,
    released: ReleasedArg,
    control: ControlOpt,
    sensitive: SensitiveOpt,
    interest: AuditInterestOpt,
    label: KeptOpt = None,
    level: LevelOpt = None,
    out: AuditOutOpt = None,
    seed: SeedOpt = None,
    reproduce: ReproduceOpt = None,
    reproduce_timeout: ReproduceTimeoutOpt = 600.0,
    accept_risk: AcceptRiskOpt = None,
    reason: ReasonOpt = None,
    sample_records: SampleOpt = 50_000,
    as_json: JsonOpt = False,
) -> None:
    """Judge a release made by anything (SDV, a script, an earlier bioanon) against INPUT
    (the members) and --control HOLDOUT (non-members): the plan, every risk with its
    attacker and 95% interval, utility, and the verdict at the level. Exit 0 when the
    release meets the level, 1 when it does not (or cannot be shown to), 2 on bad input."""
    from ..auditing import prepare_audit
    from ..auditing.report import write_report

    lv = parse_level(level)
    accepted = parse_accept(accept_risk, reason)
    from ..table import PARQUET_SUFFIXES

    parquet = any(p.is_dir() or p.suffix.lower() in PARQUET_SUFFIXES
                  for p in (input, released, control))
    refuse_unused({"sample_records": (parquet, "it samples a Parquet table (a file or a "
                                               "folder of parts); CSV and NPZ tables are read "
                                               "whole"),
                   # alone it bounded nothing: the audit ran, exit 0 or 1, the option unread
                   "reproduce_timeout": (reproduce is not None, "it bounds one run of the "
                                         "--reproduce command")})
    if out is not None:
        _check_out(out, [input, released, control])
    notes = notes_console(as_json)
    job = prepare_audit(input, released, control, interest=interest, sensitive=sensitive,
                        labels=list(label or []), level=lv, random_state=seed,
                        reproduce=reproduce, accept_risks=accepted,
                        max_records=sample_records, reproduce_timeout=reproduce_timeout)
    for words in job.sampled.values():
        notes.print(words, highlight=False, markup=False, soft_wrap=True)
    notes.print(job.plan.render(), highlight=False, markup=False, soft_wrap=True)
    for words in job.tables.notes:
        notes.print(f"note: {words}", highlight=False, markup=False, soft_wrap=True)
    notes.print(job.split.words(sensitive), highlight=False, markup=False, soft_wrap=True)
    with progress_bar("auditing") as update:
        result = job.run(update)
    doc = result.to_dict()
    if out is not None:
        paths = write_report(result, out)
        notes.print(f"wrote {paths['json']} and {paths['html']}", highlight=False,
                    markup=False)
    if as_json:
        print_json(doc)
    else:
        print_risks(doc)
        f = doc["findings"]
        for key in ("copied_note", "named_note"):
            if f.get(key) and (key != "copied_note" or f["copied_rows"]):
                notes.print(f"finding: {f[key]}", highlight=False, markup=False,
                            soft_wrap=True)
        cas, clear = doc["utility"]["cas"], doc["utility"]["clear"]
        notes.print(f"utility: CAS {rate_words(cas['value'], cas.get('ci'))} (trained on "
                    f"RELEASED) against {rate_words(clear['value'], clear.get('ci'))} trained "
                    "on INPUT", highlight=False, markup=False)
        v = doc["verdict"]
        notes.print(f"verdict at level '{v['level']['name']}': {v['words']}",
                    highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(0 if result.verdict.met else 1)
