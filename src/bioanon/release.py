"""The release policy: what leaves in a released table, checked, shuffled and written safely.

Every label column of the input gets exactly one role (the ARX / sdcMicro convention):

``interest`` / ``additional``
    useful attributes: released.
``sensitive``
    the attribute to hide: dropped (released only with ``keep_sensitive=True``, for audits).
``identifying``
    names, ids, file names: always dropped.
``quasi-identifying`` / ``kept``
    released on request, after the join check.

A label column with no role is **dropped**: nothing leaves unless the user named it. Before a
release with kept or quasi-identifying columns, :func:`join_check` joins the released label
columns back to the original table: if that join names the sensitive value of more records than
``1.2 ×`` the reference rate (chance, or what the interest and additional columns alone already
give when that is higher), the release is refused unless ``force=True``. Rows are shuffled with
fresh OS entropy (the permutation is never stored), only public provenance is kept, and the
manifest lists every column with its role and what was dropped.

The pieces are importable on their own (:func:`resolve_roles`, :func:`join_check`,
:func:`build_manifest`, :func:`write_release`) so that other release paths (the dask path, the
certifying ``bioanon release``) apply the same policy.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> from bioanon.anonymize import SelectiveMeanAnonymizer
>>> table = make_biometric(n_identities=6, records_per_identity=20, n_features=32,
...                        random_state=0)
>>> anon = SelectiveMeanAnonymizer(interest="expression", g=8, t=0.5, random_state=0)
>>> res = release(table, anon, Roles(interest="expression", sensitive="identity"))
>>> list(res.table.labels.columns), "identity" in res.dropped
(['expression'], True)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import BioanonError, missing_column, refuse_class, suggest
from .io import refuse_folder_name
from .release_unit import manifest_path, verify_release, write_unit
from .table import FeatureTable, all_finite, check_column_name, format_of, refuse_nested

#: the roles a label column can have
ROLES = ("interest", "additional", "sensitive", "identifying", "quasi-identifying", "kept",
         "other label")
#: role given in the manifest to a label column the user did not name
NO_ROLE = "none (dropped)"
#: provenance of the input that may travel with a release (nothing that could undo it);
#: ``float16_labels`` names the label columns the input stored as float16, written back so;
#: ``arrow_label_types`` the Arrow types of a Parquet input's label columns, written back so
PUBLIC_META = ("image_shape", "value_range", "features", "window", "hop", "device",
               "float16_labels", "arrow_label_types")
#: a join on the released label columns may name identities at most this × the reference
JOIN_FACTOR = 1.2
NOT_CERTIFIED = ("not certified: no privacy target was checked on this release; "
                 "evaluate it (bioanon evaluate) before publishing")


@dataclass(frozen=True)
class Roles:
    """The role of each named label column; every other label column is dropped.

    Parameters
    ----------
    sensitive : str
        The attribute to hide (identity by default in the CLI).
    interest : str, optional
        The attribute whose recognisability must survive.
    additional : sequence of str or mapping str -> weight
        Further useful attributes (weights are the anonymizer's business; only names count).
    identifying : sequence of str
        Direct identifiers (ids, names, file names): always dropped.
    quasi : sequence of str
        Quasi-identifiers to release: checked by :func:`join_check`.
    keep : sequence of str
        Columns to release as they are: checked by :func:`join_check`.
    other : sequence of str
        Other label columns named so that they are read and not taken for features: never
        released (as an identifying column), but a clash with another role names them as
        what they were given as.

    Examples
    --------
    >>> Roles(sensitive="speaker", interest="digit", keep=["split"]).of()
    {'digit': 'interest', 'speaker': 'sensitive', 'split': 'kept'}
    """

    sensitive: str
    interest: str | None = None
    additional: Sequence[str] | Mapping[str, float] = ()
    identifying: Sequence[str] = ()
    quasi: Sequence[str] = ()
    keep: Sequence[str] = ()
    other: Sequence[str] = ()

    def __post_init__(self) -> None:
        # a bare string is one column, not a list of its letters (identifying="gender" once
        # gave the columns 'g', 'e', 'n', 'd', 'r' their roles)
        for name in ("additional", "identifying", "quasi", "keep", "other"):
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, (getattr(self, name),))

    @property
    def never_released(self) -> list[str]:
        """The identifying and other label columns: read, never released."""
        return [*self.identifying, *self.other]

    def of(self) -> dict[str, str]:
        """Column -> role; refuses a column given two roles, in one line."""
        named: list[tuple[str, str]] = []
        if self.interest is not None:
            named.append((self.interest, "interest"))
        named += [(c, "additional") for c in self.additional]
        named.append((self.sensitive, "sensitive"))
        named += [(c, "identifying") for c in self.identifying]
        named += [(c, "quasi-identifying") for c in self.quasi]
        named += [(c, "kept") for c in self.keep]
        named += [(c, "other label") for c in self.other]
        out: dict[str, str] = {}
        for col, role in named:
            check_column_name(col, role, "e.g. Roles(sensitive='speaker', interest='digit')")
            if isinstance(col, str) and not col.strip():
                raise BioanonError(f"empty column name given the role {role}; name a column")
            if col in out and out[col] != role:
                raise BioanonError(
                    f"column '{col}' is given two roles ({out[col]} and {role}); give every "
                    "column exactly one role")
            out[col] = role
        return out


def as_roles(roles: Any) -> Roles:
    """``roles`` as :class:`Roles`: a Roles as is, a mapping of its fields built into one;
    anything else, or a field it does not have, is refused in one line.

    >>> as_roles({"sensitive": "speaker", "interest": "digit"}).of()
    {'digit': 'interest', 'speaker': 'sensitive'}
    >>> as_roles({"sensitve": "speaker"})
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: roles has no field 'sensitve' (did you mean 'sensitive'?); \
its fields: sensitive, interest, additional, identifying, quasi, keep, other
    """
    if isinstance(roles, Roles):
        return roles
    fields = [f.name for f in dataclasses.fields(Roles)]
    if not isinstance(roles, Mapping):
        raise BioanonError(f"roles must be a bioanon.release.Roles or a mapping of its fields "
                           f"({', '.join(fields)}), not {type(roles).__name__}; e.g. "
                           "Roles(sensitive='speaker', interest='digit')", parameter="roles")
    for key in roles:
        if key not in fields:
            raise BioanonError(f"roles has no field '{key}'{suggest(str(key), fields)}; its "
                               f"fields: {', '.join(fields)}", parameter="roles")
    if "sensitive" not in roles:
        raise BioanonError("roles needs the sensitive column: sensitive=COL", parameter="roles")
    return Roles(**roles)


@dataclass(frozen=True)
class ColumnPlan:
    """What happens to each label column: its role, released or dropped."""

    roles: dict[str, str]
    released: list[str]
    dropped: list[str]
    checked: list[str]


def resolve_roles(columns: Iterable[str], roles: Roles,
                  keep_sensitive: bool = False) -> ColumnPlan:
    """Give every label column its role and decide what is released.

    Raises :class:`BioanonError` when a named column is missing or has two roles.

    Examples
    --------
    >>> p = resolve_roles(["digit", "speaker", "file", "take"],
    ...                   Roles(sensitive="speaker", interest="digit", identifying=["file"]))
    >>> p.released, p.dropped
    (['digit'], ['speaker', 'file', 'take'])
    """
    columns = [str(c) for c in columns]
    named = roles.of()
    for col in named:
        if col not in columns:
            raise missing_column(col, columns)
    plan_roles = {c: named.get(c, NO_ROLE) for c in columns}
    released_roles = {"interest", "additional", "quasi-identifying", "kept"}
    if keep_sensitive:
        released_roles.add("sensitive")
    released = [c for c in columns if plan_roles[c] in released_roles]
    dropped = [c for c in columns if c not in released]
    checked = [c for c in columns if plan_roles[c] in ("quasi-identifying", "kept")]
    return ColumnPlan(plan_roles, released, dropped, checked)


@dataclass(frozen=True)
class JoinCheck:
    """Result of joining released label columns back to the original table."""

    columns: list[str]
    rate: float
    chance: float
    reference: float
    limit: float
    forced: bool = False

    @property
    def passed(self) -> bool:
        """True when the join names identities no more often than the limit allows."""
        return self.rate <= self.limit + 1e-12

    def as_dict(self) -> dict[str, Any]:
        """Plain values for the manifest (aggregate rates only, nothing per record)."""
        return {"columns": self.columns, "rate": round(self.rate, 4),
                "chance": round(self.chance, 4), "reference": round(self.reference, 4),
                "limit": round(self.limit, 4), "passed": self.passed, "forced": self.forced}


def join_rate(labels: pd.DataFrame, columns: Sequence[str], sensitive: str) -> float:
    """Share of records whose sensitive value a join on ``columns`` names.

    The attacker holds the original labels, looks up each released record's values of
    ``columns`` and guesses the commonest sensitive value among the matching originals. With no
    column, that is chance (the commonest sensitive value).

    Examples
    --------
    >>> df = pd.DataFrame({"who": list("aabb"), "tag": [1, 2, 3, 4], "x": [0, 0, 0, 0]})
    >>> join_rate(df, ["tag"], "who"), join_rate(df, ["x"], "who")
    (1.0, 0.5)

    An empty value is a value the attacker joins on like any other (``site`` names ``a`` by
    its empty value, ``b`` and ``c`` by theirs):

    >>> df = pd.DataFrame({"who": list("aabc"), "site": [None, None, "s", "t"]})
    >>> join_rate(df, ["site"], "who")
    1.0
    """
    n = len(labels)
    if n == 0:
        return 0.0
    if not columns:
        return float(labels[sensitive].value_counts().max() / n)
    frame = labels[[*columns, sensitive]].astype(str)  # one dtype: NaN joins like a value
    counts = frame.groupby([*columns, sensitive], sort=False, dropna=False).size()
    best = counts.groupby(level=list(range(len(columns))), sort=False, dropna=False).max()
    return float(best.sum() / n)


def join_check(labels: pd.DataFrame, plan: ColumnPlan, sensitive: str,
               factor: float = JOIN_FACTOR, force: bool = False) -> JoinCheck | None:
    """Refuse a release whose kept or quasi-identifying columns single out identities.

    The join uses every released label column but the sensitive one. The reference is the
    larger of chance and the rate the interest and additional columns give alone (those are
    released whatever else is kept). Returns None when no column needs checking.

    Raises
    ------
    BioanonError
        When the rate exceeds ``factor × reference`` and ``force`` is False.
    """
    if not plan.checked:
        return None
    for c in plan.checked:  # released as they are: one value per record, as every label
        refuse_nested(c, labels[c])
    key = [c for c in plan.released if c != sensitive]
    base = [c for c in key if plan.roles[c] in ("interest", "additional")]
    chance = join_rate(labels, [], sensitive)
    reference = max(chance, join_rate(labels, base, sensitive))
    rate = join_rate(labels, key, sensitive)
    result = JoinCheck(key, rate, chance, reference, min(1.0, factor * reference), force)
    if not result.passed and not force:
        raise BioanonError(
            f"the released columns {key} name the '{sensitive}' of {rate:.1%} of records by a "
            f"join on the original table (limit {result.limit:.1%}: {factor} × "
            f"{reference:.1%}); drop or coarsen {plan.checked}, or pass force=True",
            parameter="force")
    return result


def shuffle(table: FeatureTable, *, in_place: bool = False) -> FeatureTable:
    """Shuffle records with fresh OS entropy (the permutation is never stored).

    With ``in_place=True`` the rows of ``table.X`` are permuted where they lie (no second
    copy of the features; for a table the caller owns) and the returned table shares them.

    Examples
    --------
    >>> t = FeatureTable(np.arange(8.0).reshape(4, 2), pd.DataFrame({"k": [0, 1, 2, 3]}))
    >>> s = shuffle(t)
    >>> sorted(s.labels["k"]) == [0, 1, 2, 3] and bool((s.X[:, 0] == 2 * s.labels["k"]).all())
    True
    """
    entropy = np.random.SeedSequence()  # fresh OS entropy, dropped after use
    if not in_place:
        return table.subset(np.random.default_rng(entropy).permutation(table.n_records))
    from .anonymize.mix_kernel import MIN_ROWS, permute_kernel

    permute = permute_kernel() if table.n_records >= MIN_ROWS else None
    if permute is not None:  # compiled: every row moves once along the permutation's cycles
        order = np.random.default_rng(entropy).permutation(table.n_records)
        permute(table.X, order)
    else:  # one Fisher-Yates run on the rows and the same run (same draws) on their positions
        np.random.default_rng(entropy).shuffle(table.X)
        order = np.arange(table.n_records)
        np.random.default_rng(entropy).shuffle(order)
    return FeatureTable._of_checked(table.X, table.labels.iloc[order].reset_index(drop=True),
                                    list(table.feature_names or []), dict(table.meta))


def public_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The provenance that may travel with a release (no path, no secret)."""
    return {k: meta[k] for k in PUBLIC_META if k in meta}


def manifest_columns(plan: ColumnPlan) -> list[dict[str, Any]]:
    """The manifest's ``columns``: every label column's role and whether it is released
    (one shape for every release path; the features are counted in ``features``)."""
    return [{"name": c, "role": r, "released": c in plan.released}
            for c, r in plan.roles.items()]


def build_manifest(*, method: str, params: Mapping[str, Any], plan: ColumnPlan,
                   n_records: int | None, n_features: int, shuffled: bool,
                   check: JoinCheck | None, input_name: str | None = None,
                   input_sha256: str | None = None, certified: bool = False
                   ) -> dict[str, Any]:
    """The manifest of a release: method, parameters, every column's role, what was dropped.

    The one builder of every release path (in memory, bucket by bucket, certified or not).
    It never holds a seed, a permutation, donor indices or an absolute path. ``n_records``
    may be None when the records are counted later (the bucketed path fills it in); the
    output's name and hash are filled in by the writer (:func:`write_release`).
    """
    return {
        "bioanon_version": __version__,
        "certified": certified,
        **({} if certified else {"note": NOT_CERTIFIED}),
        "method": method,
        "params": dict(params),
        "input": {"name": None if input_name is None else Path(input_name).name,
                  "sha256": input_sha256, "n_records": n_records, "n_features": n_features},
        "columns": manifest_columns(plan),
        "features": {"n": n_features, "role": "features (anonymized)"},
        "dropped": list(plan.dropped),
        "join_check": None if check is None else check.as_dict(),
        "output": {"name": None, "sha256": None, "label_columns": list(plan.released),
                   "n_records": n_records, "shuffled": shuffled},
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


@dataclass
class ReleaseResult:
    """What :func:`release` returns: the released table, its manifest and the dropped columns."""

    table: FeatureTable
    manifest: dict[str, Any]
    dropped: list[str] = field(default_factory=list)
    check: JoinCheck | None = None

    def manifest_roles(self) -> dict[str, str]:
        """Label column -> role, as listed in the manifest (dropped columns included)."""
        return {c["name"]: c["role"] for c in self.manifest["columns"]}

    def write(self, path: str | os.PathLike) -> tuple[Path, Path]:
        """Write the table and ``PATH.manifest.json`` together (see :func:`write_release`)."""
        return write_release(self.table, self.manifest, path)


def write_release(table: FeatureTable, manifest: Mapping[str, Any], path: str | os.PathLike,
                  report: Callable[[Path], Any] | None = None) -> tuple[Path, Path]:
    """Write a release, its manifest and (optionally) its report as one unit.

    See :func:`bioanon.release_unit.write_unit`: everything is written to temporaries first;
    then, with SIGINT/SIGTERM held and a journal beside, the table and the report are switched
    in and the new manifest (naming the table's and the report files' SHA-256) replaces the
    old one last. After a kill at any moment the release is the previous unit or the new one,
    whole (the next read or write puts the previous one back when the kill came before the
    manifest's rename); temporaries a killed run left are removed by the next run.

    Parameters
    ----------
    table, manifest
        The released table and its manifest (the output's name and hash are filled in).
    path : path
        The table's path; ``PATH.manifest.json`` and ``PATH.report/`` go beside it.
    report : callable, optional
        Writes the report's files into the folder it is given. Without one, a previous
        unit's report at ``PATH.report/`` is removed (it describes another table).
    """
    refuse_folder_name(path)
    out = Path(path)
    fmt = format_of(out)
    unit = write_unit(out, table=lambda tmp: table.write_to(tmp, fmt), manifest=manifest,
                      report=report)
    assert unit.manifest is not None
    return out, unit.manifest


def _check_anonymizer_roles(anonymizer: Any, roles: Roles) -> None:
    refuse_class(anonymizer)
    get = getattr(anonymizer, "get_params", None)
    params = get(deep=False) if callable(get) else {}
    for name in ("interest", "sensitive"):
        mine, theirs = getattr(roles, name), params.get(name)
        if theirs is not None and mine is not None and theirs != mine:
            raise BioanonError(
                f"the anonymizer's {name} is '{theirs}' but the release names '{mine}'; "
                "give both the same column")


def release(table: FeatureTable, anonymizer: Any, roles: Roles, *, fit: bool = True,
            keep_sensitive: bool = False, keep_order: bool = False, force: bool = False,
            method: str | None = None, input_name: str | None = None,
            input_sha256: str | None = None,
            progress: Callable[[int, int, str], None] | None = None,
            join_checked: JoinCheck | None = None) -> ReleaseResult:
    """Anonymize ``table`` and apply the release policy; write nothing.

    Parameters
    ----------
    table : FeatureTable
        The clear table; its label columns are checked against ``roles``.
    anonymizer : estimator
        A bioanon anonymizer. With ``fit=True`` it is fitted on ``table``; with ``fit=False``
        it must be fitted already (chosen by a search, or trained on auxiliary data) and
        releases through ``release(X, y)`` (or ``transform(X, y)``).
    roles : Roles
        Column roles; label columns without one are dropped.
    keep_sensitive : bool
        Release the sensitive column too (for an auditor's attack; unfit for a real release).
    keep_order : bool
        Keep the record order (by default rows are shuffled with fresh OS entropy).
    force : bool
        Release even when the join check fails (recorded in the manifest).
    method, input_name, input_sha256 : str, optional
        Provenance for the manifest (file name only, never a path).
    join_checked : JoinCheck, optional
        The join check already run on this table and these roles (a certified release runs
        it before its search); it is not run again.

    Returns
    -------
    ReleaseResult
        ``table`` (released), ``manifest`` (dict), ``dropped`` (column names), ``check``.
    """
    plan = resolve_roles(table.labels.columns, roles, keep_sensitive)
    table.label(roles.sensitive)
    for col in (roles.interest, *roles.additional):  # every label the method reads: checked
        if col:                                      # before any work starts
            table.label(col, min_classes=1)
    _check_anonymizer_roles(anonymizer, roles)
    check = (join_checked if join_checked is not None
             else join_check(table.labels, plan, roles.sensitive, force=force))
    step = progress or (lambda done, total, text: None)
    step(0, 2, "fitting" if fit else "releasing")
    if fit:
        anonymizer.fit(table, table.labels)  # a table: methods may read its meta
    step(1, 2, "transforming")
    in_order = None if keep_order else getattr(anonymizer, "release_in_order", None)
    order = None
    if callable(in_order):  # shuffled as it is computed: fresh OS entropy, never stored
        order = np.random.default_rng(np.random.SeedSequence()).permutation(table.n_records)
        res = in_order(table, table.labels, order)
    else:
        do = getattr(anonymizer, "release", None) or anonymizer.transform
        res = do(table, table.labels)  # a table: its feature names and meta go along
    checked = isinstance(res, FeatureTable)  # its X was checked finite when it was built
    with np.errstate(over="ignore", invalid="ignore"):
        X = np.asarray(res.X if checked else res, dtype=np.float32)
    if np.may_share_memory(X, table.X):  # the release is shuffled in place: never the input
        X, checked = X.copy(), False
    step(2, 2, "done")
    if not checked and not all_finite(X):  # the input is finite: the setting failed
        raise BioanonError(
            f"the setting {method or type(anonymizer).__name__} produced NaN/inf values from "
            "finite input: its noise or scale overflows float32, so this setting is unusable "
            "(the input is fine); choose another one (e.g. a larger epsilon)")
    if X.shape != table.X.shape:
        raise BioanonError(f"the anonymizer returned shape {X.shape} for a table of shape "
                           f"{table.X.shape}; it must return one row per record")
    labels = table.labels[plan.released]
    labels = labels.copy() if order is None else labels.iloc[order].reset_index(drop=True)
    meta = {"method": method or type(anonymizer).__name__, "bioanon_version": __version__,
            **public_meta(table.meta)}
    names = list(table.feature_names or [])
    out = (FeatureTable._of_checked(X, labels, names, meta) if checked and X is res.X
           else FeatureTable(X, labels, names, meta))
    if not keep_order and order is None:
        out = shuffle(out, in_place=True)  # ``X`` is the anonymizer's output, owned here
    params_fn = getattr(anonymizer, "public_params", None)
    params = params_fn() if callable(params_fn) else {}
    manifest = build_manifest(method=method or type(anonymizer).__name__, params=params,
                              plan=plan, n_records=out.n_records, n_features=out.n_features,
                              shuffled=not keep_order, check=check, input_name=input_name,
                              input_sha256=input_sha256)
    if keep_sensitive:
        manifest["warning"] = ("the sensitive column is released (keep_sensitive=True): for "
                               "an auditor's attack only, unfit for a real release")
    return ReleaseResult(out, manifest, list(plan.dropped), check)


_ID_LIKE = re.compile(r"(^|[_\s-])(id|ids|idx|index|file|filename|path|name|subject|speaker|"
                      r"user|person|patient|session|take|record|uuid)($|[_\s-])", re.I)


def check_columns(X: np.ndarray, names: Sequence[str], keep_as_feature: Sequence[str] | None,
                  *, declared: bool, source: str = "the table") -> dict[str, str]:
    """The column check of every release path (in memory, bucketed, streamed, and
    ``anonymize`` on dask), before any work.

    ``keep_as_feature`` must name feature columns (names or shell patterns such as ``px_*``);
    when the input does not record which columns are labels (``declared`` False: a CSV, a
    Parquet file another tool wrote), every numeric column that looks like metadata
    (:mod:`bioanon.metadata_columns`) must be a label column or kept as a feature knowingly.

    Parameters
    ----------
    X : array (n, d)
        Records of the input's feature columns (all of them, or the first ones of a large
        table: constant or counter-like values show on any run of records).
    names : sequence of str
        The feature columns' names.
    keep_as_feature : sequence of str, optional
    declared : bool
        The input records its label columns (nothing else is judged metadata then).
    source : str
        How the message names the input.

    Returns
    -------
    dict
        The metadata-looking columns kept as features knowingly, each with why it looks
        like metadata.

    Examples
    --------
    >>> X = np.c_[np.full(40, 8000.0), np.linspace(0, 1, 40)]
    >>> check_columns(X, ["sample_rate", "f0"], ["sample_rate"], declared=False)
    {'sample_rate': 'constant 8000; named like an id, a count or a recording property'}
    >>> check_columns(X, ["sample_rate", "f0"], None, declared=True)
    {}
    """
    from .metadata_columns import check_feature_columns, refuse_unknown_kept

    keep = list(keep_as_feature or [])
    if not declared:
        return check_feature_columns(X, names, keep, source)
    refuse_unknown_kept(names, keep, source)
    return {}


def suspect_label_columns(table: FeatureTable) -> list[str]:
    """Feature columns that look like labels read as numbers (ids, counters, file indices).

    CSV files do not say which columns are labels: a numeric id column the user did not name
    would be read as a feature and leave in the release. A feature column is suspect when its
    name looks like an identifier (``id``, ``subject``, ``file``, ``Unnamed: 0`` ...) or when it
    holds integers that differ on every record.

    Examples
    --------
    >>> t = FeatureTable(np.c_[np.arange(12), np.linspace(0, 1, 12)],
    ...                  pd.DataFrame(index=range(12)), ["row", "f"])
    >>> suspect_label_columns(t)
    ['row']
    """
    X = table.X
    out = []
    n = table.n_records
    for j, name in enumerate(table.feature_names or []):
        col = X[:, j]
        if _ID_LIKE.search(name) or name.lower().startswith("unnamed"):
            out.append(name)
        elif n >= 10 and np.all(col == np.round(col)) and np.unique(col).size == n:
            out.append(name)
    return out


__all__ = ["NO_ROLE", "ROLES", "ColumnPlan", "JoinCheck", "ReleaseResult", "Roles",
           "check_columns",
           "build_manifest", "join_check", "join_rate", "manifest_path", "public_meta",
           "release", "resolve_roles", "shuffle", "suspect_label_columns", "verify_release",
           "write_release"]
