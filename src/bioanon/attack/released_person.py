"""The attacker who reads the person off the release: a release that carries its sensitive column.

bioanon's own releases drop the sensitive column, but a release made by anything else (judged
by ``bioanon audit``), or one written with ``keep_sensitive=True``, may carry it. Then each
released record names its person, and the attacker who holds a person's clear records, with
their name (the threat model), needs no feature at all:

- **membership**: a candidate is scored by how many released records carry its person's
  value of the sensitive column (none: not in the release). At the identity level that is
  who is in the release, read off one column;
- **inference**: a candidate's label is guessed as the commonest value of that label among
  the released records of its person (the release's commonest value for a person it does not
  carry): the release tells its members' labels by name.

Names are compared as an attacker reads them, not byte for byte (:func:`name_keys`):
surrounding spaces and letter case are ignored, and a whole number is the same whether
written ``7``, ``7.0`` or ``007``: a release that writes ``'Alice '`` or ``7.0`` for
``alice`` or ``7`` names the same people.

A pseudonym that is an unsalted digest of the name (MD5, SHA-1 or SHA-256 of the name as
written, or as matched) is the name to anyone holding it: the attacker computes each
candidate's digests and reads them as it reads names (:func:`name_forms`).

A release whose sensitive values are pseudonyms (none of them a candidate's, nor a digest of
one) gives this attacker nothing: every score is 0 and every guess the release's commonest
label (the pooled attacker, :mod:`bioanon.attack.pooled`, still reads them as links). A
release without the column gives no score at all (the attacker does not play).
"""

from __future__ import annotations

import numpy as np

from .game import Attacker, Game, Scores

#: the score's name (the attacker's figure, in the report's attacker key)
MEMBERSHIP_NAME = "released names the person"


def name_keys(values: np.ndarray) -> np.ndarray:
    """Each value as an attacker matches names: spaces around it and letter case dropped,
    and a whole number written one way (``7``, ``7.0``, ``007`` and ``7e0`` are ``7``).

    Examples
    --------
    >>> name_keys(np.array([" Alice", "BOB ", "7.0", "007", 7, "7.5", "nan"])).tolist()
    ['alice', 'bob', '7', '7', '7', '7.5', 'nan']
    """
    import pandas as pd

    text = pd.Series(np.asarray(values).astype(str), dtype=object).str.strip().str.casefold()
    num = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    whole = np.isfinite(num) & (num == np.round(num)) & (np.abs(num) < 2.0**53)
    out = text.to_numpy(dtype=object, copy=True)
    out[whole] = num[whole].astype(np.int64).astype(str)
    return out.astype(str)


#: the unsalted digests a pseudonym may be of a name
DIGESTS = ("md5", "sha1", "sha256")


def name_forms(ids: np.ndarray) -> dict[str, np.ndarray]:
    """Each candidate's name in every form a release may write it, matched as
    :func:`name_keys` matches: ``""`` the name itself, then each of :data:`DIGESTS` (hex) of
    the name as written (``"md5"``) and as matched (``"md5 of the matched name"``, where
    that differs).

    Examples
    --------
    >>> f = name_forms(np.array(["Ann"]))
    >>> sorted(f)[:3], f["md5"][0][:8], f["md5 of the matched name"][0][:8]
    (['', 'md5', 'md5 of the matched name'], '82e335f7', '7e0d7f8a')
    """
    import hashlib

    # each distinct name once (a person's records share it), then back to every candidate
    names, back = np.unique(np.asarray(ids).astype(str), return_inverse=True)
    back = back.reshape(-1)
    written = names.tolist()
    matched = name_keys(names).tolist()
    out = {"": np.asarray(matched, dtype=str)[back]}
    for algo in DIGESTS:
        out[algo] = name_keys(np.array(
            [hashlib.new(algo, v.encode()).hexdigest() for v in written]))[back]
        if matched != written:
            out[f"{algo} of the matched name"] = name_keys(np.array(
                [hashlib.new(algo, v.encode()).hexdigest() for v in matched]))[back]
    return out


def _released_people(game: Game) -> np.ndarray | None:
    """The released records' sensitive values (as :func:`name_keys` matches them), or None
    when the release does not carry them."""
    col = game.sensitive
    if col is None or col not in game.released_labels:
        return None
    return name_keys(np.asarray(game.released_labels[col]))


def person_counts(people: np.ndarray, released_people: np.ndarray) -> np.ndarray:
    """How many released records carry each candidate's person.

    Examples
    --------
    >>> person_counts(np.array(["ann", "bob", "eve"]), np.array(["bob", "ann", "bob"]))
    array([1, 2, 0])
    """
    values, counts = np.unique(released_people, return_counts=True)
    ids = np.asarray(people).astype(str)
    if values.size == 0:
        return np.zeros(ids.size, np.int64)
    pos = np.clip(np.searchsorted(values, ids), 0, values.size - 1)
    return np.where(values[pos] == ids, counts[pos], 0)


def person_labels(people: np.ndarray, released_people: np.ndarray,
                  released_labels: np.ndarray) -> np.ndarray:
    """Each candidate's guessed label: the commonest value among the released records of its
    person (ties: the smallest value), else the release's commonest value.

    Examples
    --------
    >>> person_labels(np.array(["ann", "bob", "eve"]), np.array(["ann", "ann", "bob", "bob"]),
    ...               np.array(["x", "x", "y", "z"])).tolist()
    ['x', 'y', 'x']
    """
    rel_p = np.asarray(released_people).astype(str)
    lab = np.asarray(released_labels).astype(str)
    ids = np.asarray(people).astype(str)
    values, v_codes = np.unique(lab, return_inverse=True)
    persons, p_codes = np.unique(rel_p, return_inverse=True)
    overall = values[np.bincount(v_codes, minlength=values.size).argmax()]
    if persons.size == 0:
        return np.full(ids.size, overall, dtype=object).astype(str)
    # each person's commonest value: sort (person, count descending, value) and take the first
    pair = p_codes.astype(np.int64) * values.size + v_codes
    uniq, counts = np.unique(pair, return_counts=True)
    p_of, v_of = uniq // values.size, uniq % values.size
    order = np.lexsort((v_of, -counts, p_of))
    first = order[np.r_[True, p_of[order][1:] != p_of[order][:-1]]]
    mode = np.empty(persons.size, dtype=values.dtype)
    mode[p_of[first]] = values[v_of[first]]
    pos = np.clip(np.searchsorted(persons, ids), 0, persons.size - 1)
    carried = persons[pos] == ids
    return np.where(carried, mode[pos], overall).astype(str)


def form_words(form: str) -> str:
    """A form of :func:`name_forms` in the words an attacker's name carries.

    >>> form_words(""), form_words("sha256"), form_words("md5 of the matched name")
    ('', ' (as the SHA-256 digest)', ' (as the MD5 digest of the matched name)')
    """
    if not form:
        return ""
    algo, _, rest = form.partition(" of ")
    name = algo.replace("sha", "SHA-").replace("md5", "MD5")
    return f" (as the {name} digest{' of ' + rest if rest else ''})"


def membership(game: Game) -> Scores:
    """One score per unit: log(1 + released records naming the candidate's person), for the
    name itself and for each of its digests the release holds (:func:`name_forms`)."""
    released = _released_people(game)
    if released is None:
        return {}
    out: Scores = {}
    for form, ids in name_forms(np.asarray(game.candidate_ids)).items():
        counts = person_counts(ids, released)
        if form == "" or counts.any():
            out[MEMBERSHIP_NAME + form_words(form)] = game.per_unit(
                np.log1p(counts.astype(np.float64)))
    return out


def inference(game: Game) -> Scores:
    """One guess per candidate of each label the release carries, read off the released
    records of its person (named, or by a digest of its name the release holds)."""
    released = _released_people(game)
    if released is None:
        return {}
    out: Scores = {}
    for form, ids in name_forms(np.asarray(game.candidate_ids)).items():
        if form and not np.isin(ids, released).any():
            continue
        for col in game.targets:
            if col in game.released_labels:
                out[f"released records of the person{form_words(form)}, '{col}'"] = \
                    person_labels(ids, released, game.released_labels[col])
    return out


MEMBERSHIP = Attacker(
    "released person", "membership",
    "reads the release's sensitive column where it carries one: a candidate whose person "
    "the released records name is a member (no feature is read)", membership)
INFERENCE = Attacker(
    "released person's labels", "inference",
    "reads the release's sensitive column where it carries one: guesses a candidate's label "
    "as the commonest among the released records of its person", inference)

__all__ = ["DIGESTS", "INFERENCE", "MEMBERSHIP", "MEMBERSHIP_NAME", "form_words", "name_forms",
           "name_keys", "person_counts", "person_labels"]
