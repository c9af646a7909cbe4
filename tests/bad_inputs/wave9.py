"""Cases of wave 9 (reliability, round nine): inputs a data owner gives by mistake that
were handled badly, each kept fixed here (0 tracebacks, 0 wrong exits, 0 silent accepts,
0 hangs, and no library's warning printed before the refusal).

Before the fixes: a method parameter far past any sensible value (``--param clip=1e300`` on
dp-mix, a share of ``1e-300`` on the DP methods, ``reg=1e300`` on synthetic) printed NumPy's
``overflow encountered in cast (RuntimeWarning)`` before the refusal; dp-cells' ``clip`` or
``var_clip`` of ``1e300`` was an internal error (Python's OverflowError), and synthetic's
``reg=0`` on a class of fewer records than features another (NumPy's "Matrix is not positive
definite"); an integer parameter typed as ``1e30`` was echoed as the 31-digit
``1000000000000000019884624838656``, and one typed in digits was read through a float
(``--k 99999999999999999999999`` became ``99999999999999991611392``). ``audit --level
1e-300`` ran the whole audit, then failed (an internal error); ``release --level 0.01`` on
4 identities suggested ``--epsilon 0``; ``preview --shape -4x-4`` and ``train-decoupler
--image-shape -4x-8`` failed in a reshape, ``--lr 1e300`` in torch (internal errors);
``--jobs 100000`` ran out of threads; ``--n-random 1000000000000`` hung; ``audit
--reproduce-timeout`` without ``--reproduce`` was left without effect, exit 0 or 1.
"""

from __future__ import annotations

from .audit import au
from .cases import ROLES, Case, _csv, _pixels, anon
from .wave8 import _train_decoupler

OVERFLOWS = "NaN/inf value(s) from finite input: its noise or scale overflows float32"


def wave9_cases() -> list[Case]:
    cases = [
        # the brief's command: the refusal (its classes are smaller than g=64) came after
        # NumPy's overflow warning of the clipping, computed in float32
        Case("anonymize-dp-mix-clip-1e300-refused-without-numpy-warning", lambda d: anon(
            _csv(d), d, "--method", "dp-mix", "--param", "clip=1e300"),
            says="but the bounded design needs more than g=64"),
        Case("anonymize-dp-mix-clip-1e300-noise-refused-before-computing", lambda d: anon(
            _csv(d), d, "--method", "dp-mix", "--g", "4", "--param", "clip=1e300"),
            says="from clip=1e+300, epsilon=10, g=4) overflows float32: this setting is "
                 "unusable (the input is fine); lower clip"),
        # integers typed as floats: quoted as typed, not as the float's 31 digits
        Case("anonymize-ksame-k-1e30-quoted-as-typed", lambda d: anon(
            _csv(d), d, "--method", "ksame", "--param", "k=1e30"),
            says="k=1e30 is too large; use an integer >= 2"),
        Case("anonymize-ksame-k-of-23-digits-read-exactly", lambda d: anon(
            _csv(d), d, "--method", "ksame", "--k", "99999999999999999999999"),
            says="only 48 records for k=99999999999999999999999 "),
        Case("tune-grid-g-1e30-quoted-as-typed", lambda d: [
            "tune", str(_csv(d)), "--out", str(d / "tu"), "--interest", "expression",
            "--sensitive", "identity", "--label", "gender", "--label", "environment", "--grid",
            "g=4,1e30"], says="g=1e30 is too large; use an integer >= 2"),
        # internal errors of a parameter in its declared range
        Case("anonymize-synthetic-reg-0-on-classes-smaller-than-the-features", lambda d: anon(
            _csv(d), d, "--method", "synthetic", "--param", "reg=0"),
            says="over 32 features is singular: reg=0 is too small to make it positive "
                 "definite; raise reg"),
        Case("anonymize-synthetic-reg-0-mixture-of-two", lambda d: anon(
            _csv(d), d, "--method", "synthetic", "--param", "reg=0", "--param",
            "n_components=2"), says="is singular: reg=0 is too small"),
    ]
    for name in ("clip", "var_clip"):
        cases.append(Case(f"anonymize-dp-cells-{name.replace('_', '-')}-1e300", lambda d, n=name:
                          anon(_csv(d), d, "--method", "dp-cells", "--param", f"{n}=1e300"),
                          says="make dp-cells' noise overflow: this setting is unusable"))
    # the release overflowed float32: refused as such, but after NumPy's warning (seeded:
    # whether noise this large overflows depends on the draw; dp-basis' resid_share=1e-300
    # released at exit 0 with some seeds)
    for method, param in (("dp-basis", "mean_share=1e-300"), ("dp-basis", "resid_share=1e-300"),
                          ("dp-cells", "variance_share=1e-300"),
                          ("dp-synthetic", "mean_share=1e-300"), ("synthetic", "reg=1e300")):
        cases.append(Case(f"anonymize-{method}-{param.split('=')[0].replace('_', '-')}-"
                          "overflowing-without-numpy-warning", lambda d, m=method, p=param:
                          anon(_csv(d), d, "--method", m, "--param", p, "--seed", "0"),
                          says=OVERFLOWS))
    # audit --level 1e-300: the whole audit ran, then Python's OverflowError (the plan's
    # records needed) or the report's DP budget at δ = 1e-6 failed: refused before any work
    cases.append(Case("audit-level-1e-300-is-out-of-range", lambda d: au(d, "--level",
                                                                        "1e-300"),
                      says="--level 1e-300 is out of range; use a target advantage strictly "
                           "between 1e-06 and 1"))
    # a level below what the table's δ (1/identities²) lets a DP budget prove: the refusal
    # suggested "--epsilon 0", which release refuses
    cases.append(Case("release-level-below-the-tables-delta-suggests-no-epsilon-0", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), *ROLES, "--level", "0.01"],
        says="about 98159 records (now 48); or accept by name"))
    # preview --shape -4x-4 matched 16 features, then NumPy's reshape failed (internal error)
    cases.append(Case("preview-shape-of-negative-sides", lambda d: [
        "preview", str(_pixels(d, "a.parquet")), str(_pixels(d, "b.parquet", seed=1)), "-o",
        str(d / "s.png"), "--shape", "-4x-4"],
        says="image shape -4x-4 needs sides of at least 1 pixel"))
    # --reproduce-timeout without --reproduce bounded nothing: the audit ran, the option unread
    cases.append(Case("audit-reproduce-timeout-without-reproduce", lambda d: au(
        d, "--reproduce-timeout", "5"), says="--reproduce-timeout has no effect here: it "
                                              "bounds one run of the --reproduce command"))
    # a typo in --jobs: a hundred thousand threads asked for ran the process out of them
    # (an internal error, 'DummyProcess' object has no attribute 'terminate')
    cases.append(Case("evaluate-jobs-a-hundred-thousand", lambda d: [
        "evaluate", str(_csv(d)), "--out", str(d / "rep"), "--interest", "expression",
        "--sensitive", "identity", "--label", "gender", "--label", "environment", "--g", "4",
        "--t", "0.5", "--jobs", "100000"],
        says="--jobs 100000 is out of range; use -1 (all cores) or a positive number of "
             "parallel fits up to"))
    # --n-random 1000000000000 listed a trillion random draws before any fit: a hang
    cases.append(Case("evaluate-n-random-a-trillion", lambda d: [
        "evaluate", str(_csv(d)), "--out", str(d / "rep"), "--interest", "expression",
        "--sensitive", "identity", "--label", "gender", "--label", "environment", "--g", "4",
        "--t", "0.5", "--selection", "random", "--n-random", "1000000000000"],
        says="--n-random 1000000000000 is out of range; use an integer in [1, 1000]"))
    # the output named as the --public-data file: refused, but called "the input file"
    cases.append(Case("release-output-is-the-public-data", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "pub.csv"), *ROLES, "--epsilon", "1",
        "--public-data", str(_csv(d, "pub.csv", n_id=2, seed=1))],
        says="pub.csv' is the --public-data file; choose another output path"))
    # train-decoupler: --lr 1e300 overflowed torch's float, --image-shape -4x-8 multiplied
    # to the 32 features and failed in torch's reshape (internal errors)
    cases += [
        Case("train-decoupler-lr-1e300", lambda d: _train_decoupler(d, "--lr", "1e300"),
             says="--lr 1e+300 is out of range; use a number in (0, 1]"),
        Case("train-decoupler-conv-image-shape-of-negative-sides", lambda d: _train_decoupler(
            d, "--architecture", "conv", "--image-shape", "-4x-8"),
            says="must multiply to the 32 features and be at most 64×64, each side at "
                 "least 1"),
    ]
    return cases
