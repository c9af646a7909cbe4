"""The attacker who pools a person's released records through a column that links them.

A release made by anything else (judged by ``bioanon audit``) often replaces the names with
pseudonyms, or carries a column such as a subject code, a session or a file id. Such a column
names nobody, yet it links a person's released records to one another: the attacker averages
them. The noise a release adds to each record falls by the square root of the records pooled,
and the person's pooled record is compared with the candidate's clear record (the threat model
gives the attacker clear records of the people). This is the classic failure of a
pseudonymised release.

The attacker pools the release by each **linking column** the game names
(:attr:`~bioanon.attack.game.Game.linking`, and the sensitive column where the release carries
it): by its values, and where they are one per record (file names such as
``s017_3.wav``, ``s017/take3.wav``), by each of their first :data:`TOKENS` parts split at
``_ - . /`` or a space (:func:`link_keys`). Each key that links records becomes a pooled
record, the mean of the released records holding it (in the release's standardized units);
the attacker then plays as the nearest-released attacker does against the pooled records:

- **membership**: the candidate's largest cosine similarity to a pooled record, that less its
  similarity to its nearest other candidate (calibrated), and minus its Euclidean distance to
  the nearest pooled record; the identity level takes a person's mean of those scores over
  its records, and also compares the person's mean clear record with the pooled records
  (cosine, Euclidean): the release's noise averaged on one side, the person's own spread on
  the other;
- **inference**: a candidate's label is the commonest value of that label among the released
  records of its nearest pooled record's group.

Where a key is a candidate's own name (a file name that starts with the person's name),
the attacker also reads the person off it as :mod:`~bioanon.attack.released_person` does off
the sensitive column. A key that links nothing (each value on one record, or one value on
all) is not played.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from .game import Attacker, Game, Scores


def linked_means(released: np.ndarray, links: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The release pooled by a linking column: each value's mean record, the value of each
    released record's group (its code) and the standardization's (mean, sd) stacked; None
    when the column links nothing (one value on every record, or each on one record).

    Examples
    --------
    >>> R = np.array([[0.0, 1], [2, 3], [10, 10], [12, 12]])
    >>> means, codes, _ = linked_means(R, np.array(["p", "p", "q", "q"]))
    >>> codes.tolist(), means.shape
    ([0, 0, 1, 1], (2, 2))
    >>> linked_means(R, np.array(["a", "b", "c", "d"])) is None
    True
    """
    keys = np.asarray(links).astype(str)
    if not _links(keys):
        return None
    values, codes = np.unique(keys, return_inverse=True)
    R = np.asarray(released, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    Z = (R - mu) / sd
    counts = np.bincount(codes, minlength=values.size).astype(np.float64)
    sums = np.zeros((values.size, R.shape[1]))
    np.add.at(sums, codes, Z)
    return sums / counts[:, None], codes, np.vstack([mu, sd])


#: how many leading parts of a value one per record (a file name) are tried as keys
TOKENS = 3
_SPLIT = re.compile(r"[_\-./\\ ]+")


def _links(keys: np.ndarray) -> bool:
    """Whether keys link records: 2 or more values, records per value 2 or more on average."""
    return 2 <= np.unique(keys).size <= keys.size // 2


def link_keys(column: str, values: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The keys by which a released column may link a person's records, each with its name:
    the values themselves where they link records, else each of their first :data:`TOKENS`
    parts that does.

    Examples
    --------
    >>> v = np.array(["s01_1.wav", "s01_2.wav", "s02_1.wav", "s02_2.wav"])
    >>> [(n, k.tolist()) for n, k in link_keys("file", v)]  # the person, then the take
    [("'file', part 1", ['s01', 's01', 's02', 's02']), ("'file', part 2", ['1', '2', '1', '2'])]
    >>> [n for n, _ in link_keys("subject", np.array(["a", "a", "b", "b"]))]
    ["'subject'"]
    """
    text = np.asarray(values).astype(str)
    if _links(text):
        return [(f"'{column}'", text)]
    if np.unique(text).size < text.size // 2:
        return []  # one value (or a handful) on every record: nothing to split
    import pandas as pd

    parts = pd.Series(text, dtype=object).str.strip(" _-./\\").str.split(
        _SPLIT, n=TOKENS, regex=True)
    out = []
    for j in range(TOKENS):
        keys = parts.str.get(j).astype(object).fillna("").to_numpy(dtype=str)
        if _links(keys):
            out.append((f"'{column}', part {j + 1}", keys))
    return out


def nearest_rows(C: np.ndarray, M: np.ndarray, block: int = 1024) -> np.ndarray:
    """Each row of ``C``'s nearest row of ``M`` (Euclidean), in blocks of ``block`` rows (the
    memory stays ``block × len(M)``).

    Examples
    --------
    >>> nearest_rows(np.array([[0.0, 0], [4, 4]]), np.array([[5.0, 5], [1, 0]])).tolist()
    [1, 0]
    """
    C, M = np.asarray(C, np.float64), np.asarray(M, np.float64)
    m2 = (M * M).sum(1)[None, :]
    out = np.empty(C.shape[0], np.int64)
    for s in range(0, C.shape[0], block):
        out[s:s + block] = (m2 - 2 * C[s:s + block] @ M.T).argmin(axis=1)
    return out


def _keys(game: Game) -> Iterator[tuple[str, str, np.ndarray]]:
    """(column, key name, keys) for each linking column the release carries (the sensitive
    column first, where it carries it: pseudonyms or names, it links a person's records)."""
    cols = [*([game.sensitive] if game.sensitive else []), *game.linking]
    for c in dict.fromkeys(cols):
        if c in game.released_labels:
            for name, keys in link_keys(c, game.released_labels[c]):
                yield c, name, keys


def _name_forms(game: Game, links: list[tuple[str, str, np.ndarray]]
                ) -> dict[str, np.ndarray]:
    """Each candidate's name in every form (:func:`~.released_person.name_forms`), only
    where a column beside the sensitive one links records, else none: bioanon's own releases
    carry no such column, and three digests of every candidate in every game were most of
    this attacker's time there."""
    from .released_person import name_forms

    if not any(col != game.sensitive for col, _, _ in links):
        return {}
    return name_forms(np.asarray(game.candidate_ids))


def membership(game: Game) -> Scores:
    """Per linking column: the nearest pooled record's cosine similarity, calibrated, and
    minus its Euclidean distance, per unit."""
    from .membership import _nearest_both, peer_similarity
    from .released_person import form_words, name_keys, person_counts

    out: Scores = {}
    links = list(_keys(game))
    forms = _name_forms(game, links)
    for col, name, keys in links:
        if col != game.sensitive:  # the sensitive column's names: the released person's
            released = name_keys(keys)
            for form, ids in forms.items():
                counts = person_counts(ids, released)
                if counts.any():
                    out[f"{name} names the person{form_words(form)}"] = game.per_unit(
                        np.log1p(counts.astype(np.float64)))
        pooled = linked_means(game.released, keys)
        if pooled is None:
            continue
        means, _, (mu, sd) = pooled
        C = (np.asarray(game.candidates, np.float64) - mu) / sd
        cos, dist = _nearest_both(C, means)
        head = f"pooled by {name}, "
        out[head + "nearest"] = game.per_unit(cos)
        out[head + "calibrated"] = game.per_unit(cos - peer_similarity(game.candidates))
        out[head + "euclidean"] = game.per_unit(-dist)
        units = game.group_codes()
        if units is not None:  # a person's pooled record against their clear mean record
            codes, n = units
            sums = np.zeros((n, C.shape[1]))
            np.add.at(sums, codes, C)
            cos, dist = _nearest_both(sums / np.bincount(codes, minlength=n)[:, None], means)
            out[head + "person's mean, nearest"] = cos
            out[head + "person's mean, euclidean"] = -dist
    return out


def inference(game: Game) -> Scores:
    """Per linking column and label: the commonest label among the released records of the
    candidate's nearest pooled record (Euclidean, standardized)."""
    from .released_person import form_words, name_keys, person_labels

    out: Scores = {}
    links = list(_keys(game))
    forms = _name_forms(game, links)
    for col, name, keys in links:
        targets = [t for t in game.targets if t != col and t in game.released_labels]
        if not targets:
            continue
        released = name_keys(keys)
        for form, ids in forms.items():
            if col != game.sensitive and np.isin(ids, released).any():
                for t in targets:
                    out[f"{name} names the person{form_words(form)}, '{t}'"] = person_labels(
                        ids, released, game.released_labels[t])
        pooled = linked_means(game.released, keys)
        if pooled is None:
            continue
        means, codes, (mu, sd) = pooled
        C = (np.asarray(game.candidates, np.float64) - mu) / sd
        nearest = nearest_rows(C, means).astype(str)
        for t in targets:
            out[f"pooled by {name}, '{t}'"] = person_labels(
                nearest, codes.astype(str), game.released_labels[t])
    return out


MEMBERSHIP = Attacker(
    "pooled release", "membership",
    "pools the released records that share a value of a linking column (pseudonyms, a "
    "subject or session code) into one mean record each and compares the candidate with the "
    "nearest pooled record (cosine, calibrated, Euclidean)", membership)
INFERENCE = Attacker(
    "pooled release's labels", "inference",
    "pools the released records that share a value of a linking column and guesses a "
    "candidate's label as the commonest among the records of its nearest pooled record",
    inference)

__all__ = ["INFERENCE", "MEMBERSHIP", "TOKENS", "link_keys", "linked_means", "nearest_rows"]
