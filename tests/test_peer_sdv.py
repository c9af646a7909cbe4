"""The SDV Gaussian-copula adapter (the peer synthesizer), and the core without SDV."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from bioanon.anonymize.peer_sdv import SDVCopulaAnonymizer
from bioanon.anonymize.registry import build_method
from bioanon.errors import BioanonError


def test_core_imports_without_sdv() -> None:
    code = ("import sys; sys.modules['sdv'] = None; import bioanon.anonymize as a; "
            "import bioanon.anonymize.registry as r; assert 'sdv-copula' in r.methods(); "
            "import numpy as np, pandas as pd\n"
            "try:\n"
            "    a.SDVCopulaAnonymizer('p').fit_transform(np.zeros((4, 2)), "
            "pd.DataFrame({'p': [0, 0, 1, 1]}))\n"
            "except a.base.BioanonError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "install the peer extra" in out and "[peer]" in out


def test_copula_release_per_class_reproduces_and_keeps_class_means() -> None:
    pytest.importorskip("sdv")
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 150)
    X = (rng.standard_normal((300, 3)) + 5.0 * y[:, None]).astype(np.float32)
    labels = pd.DataFrame({"p": y})
    est = build_method("sdv-copula", {}, interest="p").set_params(random_state=1)
    a = est.fit_transform(X, labels)
    b = SDVCopulaAnonymizer("p", random_state=1).fit_transform(X, labels)
    assert a.shape == X.shape and a.dtype == np.float32
    assert np.array_equal(a, b)
    for c in (0, 1):
        assert np.abs(a[y == c].mean(0) - X[y == c].mean(0)).max() < 0.4
    assert not np.array_equal(a, SDVCopulaAnonymizer("p", random_state=2).fit_transform(X,
                                                                                        labels))


def test_a_single_record_class_is_refused() -> None:
    with pytest.raises(BioanonError, match="single record"):
        SDVCopulaAnonymizer("p").fit_transform(np.zeros((3, 2), np.float32),
                                               pd.DataFrame({"p": [0, 0, 1]}))
