"""Recomputes the statistics conformance rows with scipy and checks them.

welch.jsonl: scipy.stats.ttest_ind(a, b, equal_var=False) gives t, df and the two-sided p; its
confidence_interval(0.95) gives ci95. paired.jsonl: scipy.stats.ttest_rel(a, b) the same, and
scipy.stats.pearsonr(a, b) the correlation; `--write-paired` draws its 60 rows (seeded:
correlated pairs, 2 to 12 of them, on the scale of accuracies) and writes the file. pass-at-k.jsonl: the unbiased estimator of Chen et al.
(2021), 1 - C(n - c, k) / C(n, k), computed exactly in integers and rounded once.

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


def check_pass_at_k():
    worst = 0.0
    for row in rows("pass-at-k.jsonl"):
        n, c, k = row["n"], row["c"], row["k"]
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        worst = max(worst, abs(float(exact) - row["pass_at_k"]))
    return worst


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-paired"]:
        write_paired()
    results = {
        "welch.jsonl (relative)": check_welch(),
        "paired.jsonl (relative)": check_paired(),
        "pass-at-k.jsonl (absolute)": check_pass_at_k(),
    }
    for name, worst in results.items():
        print(f"{name}: largest difference {worst:.3g}")
    sys.exit(0 if all(w <= TOLERANCE for w in results.values()) else 1)
