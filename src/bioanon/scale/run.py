"""``bioanon anonymize --dask`` / ``--scheduler``: the bucketed release from parsed options.

The CLI parses; this module checks the input's columns, builds the manifest's provenance and
calls :func:`bioanon.scale.bucketed.bucketed_release` inside :func:`.cluster.dask_client`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..io import not_a_regular_file
from ..table import PARQUET_SUFFIXES, arrow_numeric, column_values, parquet_parts


def check_bucketable(method: str, anonymizer: Any) -> None:
    """Refuse methods whose release is not a mixing of the records given (their class does
    not declare ``bucketable``)."""
    from ..anonymize.registry import methods_that

    if getattr(anonymizer, "bucketable", False):
        return
    raise BioanonError(f"method '{method}' cannot run bucket by bucket on dask; use a mixing "
                       f"method ({', '.join(methods_that('bucketable'))}) or run it in memory "
                       "(without dask)")




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

    import pyarrow.dataset as ds

    if not source.exists():
        raise BioanonError(f"input '{source}' does not exist; check the path")
    if not source.is_file() and not source.is_dir():
        raise BioanonError(not_a_regular_file(source))
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
    numeric = [f.name for f in schema if arrow_numeric(f.type)]
    md = json.loads((schema.metadata or {}).get(b"bioanon", b"{}"))
    known = [c for c in md.get("label_columns") or [] if c in names]
    return names, numeric, known


def input_digest(source: Path) -> str:
    """SHA-256 of a Parquet file, or of its folder's files' digests in name order."""
    from ..io import file_sha256

    return file_sha256(source)


def declares_labels(source: Path) -> bool:
    """Whether a Parquet input records which of its columns are labels (bioanon wrote it);
    a file another tool wrote (pandas, Spark) does not."""
    import pyarrow.dataset as ds

    return b"bioanon" in (ds.dataset(str(source), format="parquet").schema.metadata or {})


#: records read from the start of a Parquet input for its column checks
HEAD_ROWS = 20_000


def read_head(source: Path, features: Sequence[str], rows: int = HEAD_ROWS) -> np.ndarray:
    """The first ``rows`` records of the feature columns of a Parquet input (float32), read
    a batch at a time without read-ahead: a column check costs no pass over the table."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from ..table import fill_rows

    def batches() -> Any:  # file by file, a batch at a time: nothing read beyond the head
        for path in ds.dataset(str(source), format="parquet").files:
            pf = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
            yield from pf.iter_batches(batch_size=rows, columns=list(features),
                                       use_threads=False)

    parts: list[np.ndarray] = []
    n = 0
    for batch in batches():
        take = min(batch.num_rows, rows - n)
        X = np.empty((take, len(features)), dtype=np.float32)
        fill_rows(X, 0, [column_values(batch.column(f))[:take] for f in features])
        parts.append(X)
        n += take
        if n >= rows:
            break
    return np.concatenate(parts) if parts else np.empty((0, len(features)), np.float32)


def check_parquet_columns(source: Path, features: Sequence[str],
                          keep_as_feature: Sequence[str] | None) -> dict[str, str]:
    """The column check of every release path (:func:`bioanon.release.check_columns`) on a
    Parquet input, judged on its first records: ``keep_as_feature`` must name feature
    columns; in a file that does not record its labels, metadata-looking numeric columns
    must be label columns or kept as features knowingly."""
    from ..release import check_columns

    return check_columns(read_head(source, features), list(features), keep_as_feature,
                         declared=declares_labels(source), source=parquet_source_name(source))


def parquet_source_name(source: Path) -> str:
    """How the column check names a Parquet input: one that records its labels (bioanon
    wrote it) or one that does not."""
    if declares_labels(source):
        return (f"'{source.name}' (written by bioanon, whose metadata says which columns are "
                "features)")
    return (f"'{source.name}' (Parquet without bioanon metadata: only the columns named are "
            "labels)")


@dataclass(frozen=True)
class DaskRun:
    """Where and how a bucketed release runs.

    Attributes
    ----------
    bucket_size : int
        Minimum records per bucket.
    fit_sample : int
        Records of the stratified sample the anonymizer is fitted on.
    seed : int or None
        Secret key of the buckets, the sample and each bucket's release (never written).
    scheduler, local, n_workers
        The cluster (:func:`~bioanon.scale.cluster.dask_client`).
    version : str
        The bioanon version for the manifest.
    """

    bucket_size: int = 50_000
    fit_sample: int = 20_000
    seed: int | None = None
    scheduler: str | None = None
    local: bool = False
    n_workers: int | None = None
    version: str = ""


def anonymize_bucketed(source: Path, output: Path, anonymizer: Any, method: str, roles: Any,
                       run: DaskRun | None = None, *, keep_sensitive: bool = False,
                       keep_as_feature: Sequence[str] | None = None,
                       progress: Callable[[int, int, str], None] | None = None,
                       certification: dict[str, Any] | None = None,
                       report: Callable[[Path], Any] | None = None) -> Any:
    """Release ``source`` to the folder ``output`` bucket by bucket (see ``bucketed_release``).

    ``roles`` (:class:`bioanon.release.Roles`) give the interest (the buckets' strata), the
    additional, sensitive and identifying columns; ``run`` where and how it runs.
    ``keep_as_feature`` given (even empty), the input's columns are checked first
    (:func:`check_parquet_columns`; the certified path checks them itself, before its
    search). ``certification``, when given, holds the manifest's fields of a certified
    release (``certified``, ``verdict``, ``certification``; see
    :func:`bioanon.certification.certificate.certification_block`).

    Returns the :class:`~.bucketed.BucketedResult`.
    """
    run = run or DaskRun()
    check_bucketable(method, anonymizer)
    if hasattr(anonymizer, "check_changes"):
        anonymizer.check_changes(None)  # scale-free no-ops now; the rest on the fit sample
    label_cols, names = _bucketed_columns(source, output, roles)
    if keep_as_feature is not None:
        check_parquet_columns(source, [c for c in names if c not in label_cols],
                              keep_as_feature)
    manifest = _provenance(source, anonymizer, method, roles, label_cols, len(names),
                           keep_sensitive, run.version, certification)
    from .bucketed import bucketed_release
    from .cluster import dask_client, dask_failure

    released = manifest.pop("_released")
    try:
        with dask_client(run.scheduler, run.local, run.n_workers) as client:
            return bucketed_release(source, output, anonymizer, interest=roles.interest,
                                    label_columns=label_cols, released_columns=released,
                                    manifest=manifest, bucket_size=run.bucket_size,
                                    fit_sample=run.fit_sample, random_state=run.seed,
                                    client=client, num_workers=run.n_workers or os.cpu_count(),
                                    progress=progress, report=report)
    except Exception as exc:  # a dead worker, a lost scheduler, an undecodable part
        raise dask_failure(exc, run.scheduler) from None


def _bucketed_columns(source: Path, output: Path, roles: Any) -> tuple[list[str], list[str]]:
    """The input's label columns and all its columns, every path and column checked."""
    from ..io import check_output_file, resolved
    from ..release import manifest_path
    from ..release_unit import check_unit_paths

    if not roles.interest:
        raise BioanonError("the dask path stratifies its buckets by the interest; pass "
                           "interest=COL", parameter="interest")
    check_folder_name(output)
    if resolved(output) == resolved(source, "input"):
        raise BioanonError(f"output '{output}' is the input; choose another output path")
    check_output_file(manifest_path(output), [source])  # written last: checked first
    check_unit_paths(output)  # OUTPUT.report, OUTPUT.refused-report, the journal
    names, numeric, known = parquet_schema(source)
    named = list(dict.fromkeys([roles.interest, *roles.additional, roles.sensitive,
                                *roles.never_released]))
    for c in named:
        if c not in names:
            raise BioanonError(f"column '{c}' is not in '{source.name}'; its columns start "
                               f"{names[:8]}")
    label_cols = list(dict.fromkeys([*named, *known]))
    odd = [c for c in names if c not in label_cols and c not in numeric]
    if odd:
        raise BioanonError(f"feature column(s) {odd[:5]} are not numeric; name them as label "
                           "columns (labels=COL) or convert them to numbers", parameter="labels")
    return label_cols, names


def _provenance(source: Path, anonymizer: Any, method: str, roles: Any,
                label_cols: list[str], n_columns: int, keep_sensitive: bool, version: str,
                certification: dict[str, Any] | None) -> dict[str, Any]:
    """The manifest's fields known before the release (roles, parameters, provenance), and
    under ``_released`` the label columns to write."""
    from ..release import Roles, build_manifest, resolve_roles

    plan = resolve_roles(label_cols, Roles(
        sensitive=roles.sensitive, interest=roles.interest, additional=list(roles.additional),
        identifying=[c for c in roles.identifying if c in label_cols],
        other=[c for c in roles.other if c in label_cols]),
        keep_sensitive=keep_sensitive)
    manifest = build_manifest(
        method=method, params=anonymizer.public_params()
        if hasattr(anonymizer, "public_params") else {}, plan=plan, n_records=None,
        n_features=n_columns - len(label_cols), shuffled=True, check=None,
        input_name=source.name, input_sha256=input_digest(source),
        certified=bool(certification))
    manifest.pop("bioanon_version")
    return {"bioanon_version": version, **manifest, **(certification or {}),
            "_released": plan.released}
