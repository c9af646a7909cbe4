"""A synthetic biometric dataset: the embedded default for ``bioanon demo``.

**These records are synthetic.** No real person is behind them. The generator only imitates the
structure that makes biometric anonymization hard: a strong identity factor spread over many
features, a trait tied to identity (like gender), a useful attribute independent of identity
(like an expression or a spoken word) carried by a few features, and noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..table import FeatureTable


def make_biometric(
    n_identities: int = 24,
    records_per_identity: int = 60,
    n_features: int = 128,
    n_expressions: int = 4,
    n_environments: int = 3,
    identity_strength: float = 1.0,
    expression_strength: float = 3.0,
    environment_strength: float = 1.5,
    gender_strength: float = 1.0,
    noise: float = 1.0,
    random_state: int | None = 0,
) -> FeatureTable:
    """Generate a synthetic biometric feature table (documented as synthetic).

    Each record ``x = identity_i + gender_{g(i)} + expression_e + environment_v + noise``:

    - ``identity``: one random vector per person over all features (the sensitive attribute);
    - ``gender``: two classes, fixed per identity (strongly identity-linked), carried by a block
      of 16 features;
    - ``expression``: independent of identity, varies per record, carried strongly by a few
      features (the attribute of interest);
    - ``environment``: independent of identity, weaker, on its own few features (an additional
      attribute).

    Parameters
    ----------
    n_identities, records_per_identity : int
        Number of people and records per person.
    n_features : int
        Feature dimension (at least 32).
    n_expressions, n_environments : int
        Number of classes of the interest and the additional attribute.
    *_strength, noise : float
        Scales of each factor and of the per-record Gaussian noise.
    random_state : int or None
        Seed of the generator.

    Returns
    -------
    FeatureTable
        Labels ``identity``, ``gender``, ``expression``, ``environment``.

    Examples
    --------
    >>> t = make_biometric(n_identities=4, records_per_identity=10, n_features=32)
    >>> t.X.shape, sorted(t.labels.columns)
    ((40, 32), ['environment', 'expression', 'gender', 'identity'])
    """
    if n_features < 32:
        raise BioanonError("n_features must be at least 32 for the synthetic generator")
    if n_identities < 2 or records_per_identity < 1:
        raise BioanonError("need at least 2 identities and 1 record per identity")
    rng = np.random.default_rng(random_state)
    n = n_identities * records_per_identity
    identity = np.repeat(np.arange(n_identities), records_per_identity)
    gender_of_id = rng.permutation(np.arange(n_identities) % 2)
    gender = gender_of_id[identity]
    expression = rng.integers(0, n_expressions, size=n)
    environment = rng.integers(0, n_environments, size=n)

    id_vec = rng.normal(0.0, identity_strength, size=(n_identities, n_features))
    g_vec = np.zeros((2, n_features))
    g_block = slice(n_features // 2, n_features // 2 + 16)
    g_vec[:, g_block] = rng.normal(0.0, gender_strength, size=(2, 16))
    # expression lives on a few features, environment on a few others
    n_expr_feats = max(4, n_features // 32)
    e_feats = rng.choice(n_features // 2, size=n_expr_feats, replace=False)
    v_feats = np.setdiff1d(np.arange(n_features // 2), e_feats)[: max(4, n_features // 32)]
    e_vec = np.zeros((n_expressions, n_features))
    e_vec[:, e_feats] = rng.normal(0.0, expression_strength, size=(n_expressions, n_expr_feats))
    v_vec = np.zeros((n_environments, n_features))
    v_vec[:, v_feats] = rng.normal(0.0, environment_strength,
                                   size=(n_environments, len(v_feats)))

    X = (id_vec[identity] + g_vec[gender] + e_vec[expression] + v_vec[environment]
         + rng.normal(0.0, noise, size=(n, n_features)))
    labels = pd.DataFrame({
        "identity": [f"person{i:02d}" for i in identity],
        "gender": np.where(gender == 0, "F", "M"),
        "expression": [f"expr{e}" for e in expression],
        "environment": [f"env{v}" for v in environment],
    })
    return FeatureTable(X.astype(np.float32), labels,
                        meta={"source": "bioanon.datasets.make_biometric (SYNTHETIC data)",
                              "synthetic": True})
