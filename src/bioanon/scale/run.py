"""``bioanon anonymize --dask`` / ``--scheduler``: the bucketed release from parsed options.

The CLI parses; this module checks the input's columns, builds the manifest's provenance and
calls :func:`bioanon.scale.bucketed.bucketed_release` inside :func:`.cluster.dask_client`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import BioanonError
from ..table import parquet_parts


def check_bucketable(method: str, anonymizer: Any) -> None:
    """Refuse methods whose release is not a mixing of the records given (their class does
    not declare ``bucketable``)."""
    from ..anonymize.registry import methods_that

    if getattr(anonymizer, "bucketable", False):
        return
    raise BioanonError(f"method '{method}' cannot run bucket by bucket on dask; use a mixing "
                       f"method ({', '.join(methods_that('bucketable'))}) or run it in memory "
                       "(without dask)")


#: extensions a folder of Parquet parts may carry (dask, Spark and pyarrow write such folders
#: and every reader accepts them)
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")


def check_folder_name(output: Path) -> None:
    """Refuse an output name that promises another format than a folder of Parquet parts.

    Examples
    --------
    >>> check_folder_name(Path("released.parquet")); check_folder_name(Path("released"))
    >>> try:
    ...     check_folder_name(Path("released.csv"))
    ... except BioanonError as exc:
    ...     print(str(exc).split("; ")[1])
    name the output NAME or NAME.parquet (not 'released.csv')
    """
    if output.suffix and output.suffix.lower() not in PARQUET_SUFFIXES:
        raise BioanonError(f"the dask path writes a folder of Parquet parts; name the output "
                           f"NAME or NAME.parquet (not '{output.name}')")


def parquet_schema(source: Path) -> tuple[list[str], list[str], list[str]]:
    """Columns of a Parquet file or folder: (all, numeric, labels bioanon wrote there)."""
    import json

    import pyarrow as pa
    import pyarrow.dataset as ds

    if not source.exists():
        raise BioanonError(f"input '{source}' does not exist; check the path")
    if source.is_file() and source.suffix.lower() not in PARQUET_SUFFIXES:
        raise BioanonError(f"the dask path reads Parquet; '{source.name}' is not (convert it "
                           "with FeatureTable.read(...).write('table.parquet'))")
    if source.is_dir():
        parquet_parts(source)  # every part readable, one schema: before dask reads any
    try:
        schema = ds.dataset(str(source), format="parquet").schema
    except Exception as exc:
        raise BioanonError(f"cannot read '{source}' as Parquet: {exc}".splitlines()[0]) from None
    names = list(schema.names)
    numeric = [f.name for f in schema if pa.types.is_integer(f.type)
               or pa.types.is_floating(f.type)]
    md = json.loads((schema.metadata or {}).get(b"bioanon", b"{}"))
    known = [c for c in md.get("label_columns") or [] if c in names]
    return names, numeric, known


def input_digest(source: Path) -> str:
    """SHA-256 of a Parquet file, or of its folder's files' digests in name order."""
    from ..io import file_sha256

    return file_sha256(source)


def anonymize_bucketed(source: Path, output: Path, anonymizer: Any, method: str, *,
                       interest: str | None, additional: Sequence[str], sensitive: str,
                       labels: Sequence[str], keep_sensitive: bool = False,
                       bucket_size: int = 50_000, fit_sample: int = 20_000,
                       seed: int | None = None, scheduler: str | None = None,
                       local: bool = False, n_workers: int | None = None,
                       version: str = "",
                       progress: Callable[[int, int, str], None] | None = None,
                       certification: dict[str, Any] | None = None,
                       report: Callable[[Path], Any] | None = None) -> Any:
    """Release ``source`` to the folder ``output`` bucket by bucket (see ``bucketed_release``).

    ``certification``, when given, holds the manifest's fields of a certified release
    (``certified``, ``verdict``, ``certification``; see
    :func:`bioanon.certification.certificate.certification_block`).

    Returns the :class:`~.bucketed.BucketedResult`.
    """
    from ..release import Roles, build_manifest, resolve_roles
    from .bucketed import bucketed_release
    from .cluster import dask_client, dask_failure

    check_bucketable(method, anonymizer)
    if hasattr(anonymizer, "check_changes"):
        anonymizer.check_changes(None)  # scale-free no-ops now; the rest on the fit sample
    if not interest:
        raise BioanonError("the dask path stratifies its buckets by the interest; pass "
                           "interest=COL", parameter="interest")
    check_folder_name(output)
    if output.resolve() == source.resolve():
        raise BioanonError(f"output '{output}' is the input; choose another output path")
    from ..io import check_output_file
    from ..release import manifest_path

    check_output_file(manifest_path(output), [source])  # written last: checked first
    names, numeric, known = parquet_schema(source)
    named = list(dict.fromkeys([interest, *additional, sensitive, *labels]))
    for c in named:
        if c not in names:
            raise BioanonError(f"column '{c}' is not in '{source.name}'; its columns start "
                               f"{names[:8]}")
    label_cols = list(dict.fromkeys([*named, *known]))
    odd = [c for c in names if c not in label_cols and c not in numeric]
    if odd:
        raise BioanonError(f"feature column(s) {odd[:5]} are not numeric; name them as label "
                           "columns (labels=COL) or convert them to numbers", parameter="labels")
    roles = Roles(sensitive=sensitive, interest=interest, additional=list(additional),
                  identifying=[c for c in labels if c in label_cols])
    plan = resolve_roles(label_cols, roles, keep_sensitive=keep_sensitive)
    released = plan.released
    manifest = build_manifest(
        method=method, params=anonymizer.public_params()
        if hasattr(anonymizer, "public_params") else {}, plan=plan, n_records=None,
        n_features=len(names) - len(label_cols), shuffled=True, check=None,
        input_name=source.name, input_sha256=input_digest(source),
        certified=bool(certification))
    manifest.pop("bioanon_version")
    manifest = {"bioanon_version": version, **manifest, **(certification or {})}

    def _run(client: Any) -> Any:
        return bucketed_release(source, output, anonymizer, interest=interest,
                                label_columns=label_cols, released_columns=released,
                                manifest=manifest, bucket_size=bucket_size,
                                fit_sample=fit_sample, random_state=seed, client=client,
                                num_workers=n_workers or os.cpu_count(), progress=progress,
                                report=report)

    try:
        with dask_client(scheduler, local, n_workers) as client:
            return _run(client)
    except Exception as exc:  # a dead worker, a lost scheduler, an undecodable part
        raise dask_failure(exc, scheduler) from None
