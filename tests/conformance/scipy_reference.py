"""Recomputes the statistics conformance rows with scipy and checks them.

welch.jsonl: scipy.stats.ttest_ind(a, b, equal_var=False) gives t, df and the two-sided p; its
confidence_interval(0.95) gives ci95. paired.jsonl: scipy.stats.ttest_rel(a, b) the same, and
scipy.stats.pearsonr(a, b) the correlation; `--write-paired` draws its 60 rows (seeded:
correlated pairs, 2 to 12 of them, on the scale of accuracies) and writes the file.
mcnemar.jsonl: the exact McNemar test's two-sided p, that is scipy.stats.binomtest(a_only,
a_only + b_only, 0.5); `--write-mcnemar` writes its 120 rows (every discordant pair of counts up
to 9 each, then seeded pairs up to 3,000 problems, balanced and far in a tail). pass-at-k.jsonl: the unbiased estimator of Chen et al. (2021),
1 - C(n - c, k) / C(n, k), computed exactly in integers and rounded once.

Run `python3 tests/conformance/scipy_reference.py` (needs scipy >= 1.11): it prints the largest
relative difference per file and exits 1 when a row differs by more than 1e-12.
"""

import json
import math
import pathlib
import sys
from fractions import Fraction

from scipy import stats

HERE = pathlib.Path(__file__).parent
TOLERANCE = 1e-12


def rows(name):
    with open(HERE / name) as f:
        return [json.loads(line) for line in f if line.strip()]


def rel(a, b):
    return abs(a - b) / max(abs(b), sys.float_info.min)


def check_welch():
    worst = 0.0
    for row in rows("welch.jsonl"):
        res = stats.ttest_ind(row["a"], row["b"], equal_var=False)
        ci = res.confidence_interval(0.95)
        got = [res.statistic, res.df, res.pvalue, ci.low, ci.high]
        want = [row["t"], row["df"], row["p"], *row["ci95"]]
        worst = max(worst, *(rel(g, w) for g, w in zip(got, want)))
    return worst


def paired_row(a, b):
    res = stats.ttest_rel(a, b)
    ci = res.confidence_interval(0.95)
    return {"a": a, "b": b, "t": float(res.statistic), "df": float(res.df),
            "p": float(res.pvalue), "ci95": [float(ci.low), float(ci.high)],
            "r": float(stats.pearsonr(a, b).statistic)}


def write_paired():
    import numpy as np

    rng = np.random.default_rng(20261206)
    with open(HERE / "paired.jsonl", "w") as f:
        for i in range(60):
            n = 2 + i % 11
            shared = rng.normal(0.4, 0.05, n)
            a = [round(float(x), 4) for x in shared + rng.normal(0.01 * (i % 3), 0.02, n)]
            b = [round(float(x), 4) for x in shared + rng.normal(0, 0.02, n)]
            f.write(json.dumps(paired_row(a, b)) + "\n")


def check_paired():
    worst = 0.0
    for row in rows("paired.jsonl"):
        got = paired_row(row["a"], row["b"])
        for key in ["t", "df", "p", "r"]:
            worst = max(worst, rel(got[key], row[key]))
        worst = max(worst, *(rel(g, w) for g, w in zip(got["ci95"], row["ci95"])))
    return worst


def mcnemar_row(a_only, b_only):
    return {"a_only": a_only, "b_only": b_only,
            "p": float(stats.binomtest(a_only, a_only + b_only, 0.5).pvalue)}


def write_mcnemar():
    import numpy as np

    rng = np.random.default_rng(20261207)
    # binomtest refuses n = 0: the test's p for no discordant problem is checked by hand.
    pairs = [(a, b) for a in range(10) for b in range(10) if a + b > 0]
    while len(pairs) < 120:
        n = int(rng.integers(20, 3000))
        # Half near a balanced split, half far in one tail (p down to about 1e-140).
        share = rng.uniform(0.42, 0.58) if len(pairs) % 2 else rng.uniform(0.25, 0.4)
        a = int(round(n * share))
        pairs.append((a, n - a) if rng.random() < 0.5 else (n - a, a))
    with open(HERE / "mcnemar.jsonl", "w") as f:
        for a, b in pairs:
            f.write(json.dumps(mcnemar_row(a, b)) + "\n")


def check_mcnemar():
    worst = 0.0
    for row in rows("mcnemar.jsonl"):
        worst = max(worst, rel(mcnemar_row(row["a_only"], row["b_only"])["p"], row["p"]))
    return worst


def check_pass_at_k():
    worst = 0.0
    for row in rows("pass-at-k.jsonl"):
        n, c, k = row["n"], row["c"], row["k"]
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        worst = max(worst, abs(float(exact) - row["pass_at_k"]))
    return worst


if __name__ == "__main__":
    if "--write-paired" in sys.argv[1:]:
        write_paired()
    if "--write-mcnemar" in sys.argv[1:]:
        write_mcnemar()
    results = {
        "welch.jsonl (relative)": check_welch(),
        "paired.jsonl (relative)": check_paired(),
        "mcnemar.jsonl (relative)": check_mcnemar(),
        "pass-at-k.jsonl (absolute)": check_pass_at_k(),
    }
    for name, worst in results.items():
        print(f"{name}: largest difference {worst:.3g}")
    sys.exit(0 if all(w <= TOLERANCE for w in results.values()) else 1)
