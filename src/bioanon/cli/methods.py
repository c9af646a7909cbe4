"""``bioanon methods``: every registered method, its parameters and what it protects."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from ..anonymize.registry import describe, methods
from .common import app, console, print_json, user_errors


def dp_line(dp: dict[str, str]) -> str:
    """A DP method's formal guarantee (``describe``'s ``differential_privacy``) as one line."""
    basis = f"; basis {dp['basis']}" if dp.get("basis") else ""
    split = f"; budget split {dp['split']}" if dp.get("split") else ""
    return (f"differential privacy: {dp['budget']}; delta {dp['delta']}; privacy unit "
            f"{dp['privacy_unit']}{basis}{split}")


def _can(doc: dict[str, Any]) -> str:
    """What a method declares it can do, in words (``describe``'s capabilities)."""
    can = []
    if doc.get("dp"):
        can.append(f"differential privacy (units: {', '.join(doc['dp']['units'])}; "
                   f"accountant: {doc['dp']['accountant']})")
    if doc.get("bucketable"):
        can.append("bucket by bucket on dask (release --dask)")
    if doc.get("streamable"):
        can.append("streamed over Parquet partitions (release --dask --epsilon)")
    return "; ".join(can) or "in memory; no formal (epsilon, delta) guarantee of the release"


@app.command("methods")
@user_errors
def methods_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
    = False,
) -> None:
    """List the anonymization methods: parameters (type, default, range) and what each
    protects and does not."""
    docs = [describe(cls) for _, cls in sorted(methods().items())]
    posts = [d["name"] for d in docs if d.get("post_step")]
    compose = (f"METHOD+{'|'.join(posts)}: METHOD, then the post-step fitted on its release "
               f"(e.g. vp-mix+{posts[0] if posts else 'leace'}); --param KEY=V goes to METHOD, "
               "--param POST.KEY=V to the post-step")
    if as_json:
        print_json({"methods": docs, "composition": {"post_steps": posts, "usage": compose}})
        return
    for doc in docs:
        tab = Table(title=f"{doc['name']}: {doc['summary']}", title_justify="left",
                    show_header=True)
        for col in ("parameter", "type", "default", "range"):
            tab.add_column(col, overflow="fold")
        for name, p in doc["params"].items():
            default = "(required)" if p["required"] else repr(p["default"])
            tab.add_row(f"--param {name}", p["type"], default, p["range"])
        console.print(tab)
        console.print(f"  protects: {doc['protects']}", highlight=False)
        if doc.get("differential_privacy"):
            console.print(f"  {dp_line(doc['differential_privacy'])}", highlight=False)
        console.print(f"  does not protect: {doc['does_not_protect']}", highlight=False)
        model = (doc.get("release_model") or {}).get("words", "none (no closed form)")
        console.print(f"  release model (default setting, refitted by the model-aware "
                      f"attackers): {model}", highlight=False, soft_wrap=True)
        console.print(f"  can: {_can(doc)}\n", highlight=False, soft_wrap=True)
    if posts:
        console.print(f"composition: {compose}", highlight=False)
