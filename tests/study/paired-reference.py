#!/usr/bin/env python3
"""Reference values for the study's paired analysis (study/claims.ts, study/pairing.ts,
study/claim-power.ts), computed by scipy.

Writes tests/study/fixtures/paired-reference.json:

- "tests": small examples of the paired t-test (scipy.stats.ttest_rel: t, df, p, the 95% CI of the
  mean difference) with Pearson's r (scipy.stats.pearsonr) and Welch's p (ttest_ind,
  equal_var=False). Each example gives both cells' values with their seeds, in any order and with
  seeds only one cell ran: the pairs are the common seeds, ascending, as study/pairing.ts pairs them.
- "power": the paired t-test's power as the one-sample t-test of the per-seed differences: power at
  a difference delta over n pairs of differences with standard deviation sd is
  nct.sf(t_crit, n - 1, nc) + nct.cdf(-t_crit, n - 1, nc), nc = delta / (sd / sqrt(n)),
  t_crit = t.ppf(1 - alpha / 2, n - 1) (scipy.stats.nct); the minimum detectable difference is the
  root of power = target (brentq, xtol 1e-14), and the seeds needed the smallest n >= 2 whose power
  reaches the target. Cases from per-seed values give sd as the standard deviation of their
  differences.
- "nct": the noncentral t CDF beyond the noncentrality where the first weight of its series
  underflows (|nc| > 37.6), at few degrees of freedom (the paired test of 2 seeds has df = 1):
  scipy.stats.nct.cdf, or 1 - nct.cdf(-t, df, -nc) where scipy's cdf returns NaN.
- "v2": every two-cell claim of the v2 study (docs/study/v2/study.json, 4 seeds, each seed's runs
  evaluated on the validation problems drawn from that seed): both cells' per-seed values (seeds
  0-3) with Welch's and the paired test's results and r.

Run with a python3 that has scipy (pip install scipy; 1.17.1 wrote the committed file):
    python3 tests/study/paired-reference.py
"""
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy
from scipy import optimize, stats

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).parent / "fixtures" / "paired-reference.json"
V2 = ROOT / "docs" / "study" / "v2" / "study.json"


def paired(a, b):
    """The paired test of a - b over equal-length, seed-aligned a and b."""
    r = stats.ttest_rel(a, b)
    ci = r.confidence_interval(0.95)
    diffs = np.subtract(a, b)
    corr = (float(stats.pearsonr(a, b).statistic)
            if np.std(a) > 0 and np.std(b) > 0 else None)
    return {"diff": float(np.mean(diffs)), "t": float(r.statistic), "df": int(r.df),
            "p": float(r.pvalue), "ci": [float(ci.low), float(ci.high)], "r": corr,
            "welch_p": float(stats.ttest_ind(a, b, equal_var=False).pvalue)}


def by_seed(xs, seeds):
    return dict(zip(seeds, xs))


def test_cases():
    examples = [
        # Seed-aligned, strongly correlated: the paired test sees what Welch's does not.
        ([0.36, 0.38, 0.36, 0.35], [0, 1, 2, 3], [0.37, 0.39, 0.365, 0.36], [0, 1, 2, 3]),
        # Seeds in another order in each cell.
        ([0.5, 0.62, 0.71, 0.4, 0.55], [4, 0, 2, 1, 3], [0.45, 0.6, 0.7, 0.41, 0.5],
         [0, 1, 2, 3, 4]),
        # Seed 3 only in the first cell and seed 5 only in the second: pairs on 0, 1, 2, 4.
        ([2.1, 1.9, 2.6, 3.3, 2.2], [0, 1, 2, 3, 4], [1.8, 2.2, 1.7, 2.4, 2.0],
         [4, 2, 1, 0, 5]),
        # Negatively correlated: pairing widens the interval.
        ([10.0, 12.0, 11.0, 13.0], [0, 1, 2, 3], [9.0, 8.5, 9.5, 8.0], [0, 1, 2, 3]),
        # Two pairs: df = 1.
        ([0.2, 0.3], [0, 1], [0.1, 0.25], [0, 1]),
        # Every difference equal and nonzero: t infinite, p = 0 (scipy returns inf and 0).
        ([1.0, 2.0, 3.0], [0, 1, 2], [0.5, 1.5, 2.5], [0, 1, 2]),
    ]
    for a, sa, b, sb in examples:
        common = sorted(set(sa) & set(sb))
        x, y = by_seed(a, sa), by_seed(b, sb)
        xa = [x[s] for s in common]
        yb = [y[s] for s in common]
        with np.errstate(divide="ignore", invalid="ignore"):
            res = paired(xa, yb)
        # Welch's test is over every value of each cell, paired or not.
        res["welch_p"] = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
        if math.isinf(res["t"]):
            res["t"] = "Infinity" if res["t"] > 0 else "-Infinity"
        yield {"a": a, "seeds_a": sa, "b": b, "seeds_b": sb, "pairs": common, **res}


def power_at(delta, sd, n, alpha):
    df = n - 1
    nc = delta / (sd / math.sqrt(n))
    crit = stats.t.ppf(1 - alpha / 2, df)
    # The lower tail by reflection, F(-t; df, nc) = sf(t; df, -nc): scipy 1.17's nct.cdf returns
    # NaN for some far tails (nc near 10) where sf gives the underflowed 0.
    return float(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc))


def mde(sd, n, alpha, power):
    upper = sd
    while power_at(upper, sd, n, alpha) < power:
        upper *= 2
    return optimize.brentq(lambda d: power_at(d, sd, n, alpha) - power, 1e-12 * sd, upper,
                           xtol=1e-14 * sd, rtol=4 * sys.float_info.epsilon, maxiter=500)


def seeds_needed(delta, sd, alpha, power, cap=10_000):
    for n in range(2, cap + 1):
        if power_at(delta, sd, n, alpha) >= power:
            return n
    return None


def power_cases():
    for sd, n, delta in [(0.005, 4, 0.02), (0.005, 4, 0.005), (0.0079, 4, 0.0139),
                         (1.0, 2, 3.0), (1.0, 3, 1.0), (0.3, 10, 0.2), (2.5, 6, 1.0),
                         (0.01, 20, 0.004)]:
        for alpha, power in [(0.05, 0.8), (0.01, 0.9)]:
            yield {"kind": "paired-power", "sd": sd, "n": n, "delta": delta, "alpha": alpha,
                   "power": power, "power_at_delta": power_at(delta, sd, n, alpha),
                   "mde": mde(sd, n, alpha, power),
                   "seeds_needed": seeds_needed(delta, sd, alpha, power)}
    # From per-seed values: sd of the differences over the common seeds.
    for a, b, n, delta in [
        ([0.3603515625, 0.3798828125, 0.3603515625, 0.34765625],
         [0.373046875, 0.38671875, 0.361328125, 0.3583984375], 4, 0.0207),
        ([0.3, 0.34, 0.29, 0.33, 0.31], [0.28, 0.30, 0.30, 0.29, 0.27], 10, 0.01),
    ]:
        sd = float(np.std(np.subtract(a, b), ddof=1))
        yield {"kind": "paired-power-from-values", "a": a, "b": b, "n": n, "delta": delta,
               "alpha": 0.05, "power": 0.8, "sd": sd,
               "r": float(stats.pearsonr(a, b).statistic),
               "power_at_delta": power_at(delta, sd, n, 0.05), "mde": mde(sd, n, 0.05, 0.8),
               "seeds_needed": seeds_needed(delta, sd, 0.05, 0.8)}


def nct_cases():
    for df in [1, 1.5, 2, 3, 5, 10, 30]:
        for nc in [-60, 37.7, 38, 45, 60, 105.4, 200]:
            for t in [stats.t.ppf(0.975, df), stats.t.ppf(0.995, df), 0.5 * abs(nc),
                      0.9 * abs(nc), abs(nc), 1.1 * abs(nc), 2 * abs(nc), -5]:
                value = float(stats.nct.cdf(t, df, nc))
                if math.isnan(value):
                    value = float(stats.nct.sf(-t, df, -nc))
                yield {"t": float(t), "df": df, "nc": nc, "value": value}


def v2_cases():
    study = json.loads(V2.read_text())
    cells = {c["id"]: c for c in study["cells"]}
    for comparison in study["comparisons"]:
        for c in comparison["claims"]:
            if c["against"] is None:
                continue
            a, b = c["value"]["samples"], c["reference"]["samples"]
            seeds_a = [r["seed"] for r in cells[c["cell"]]["runs"]]
            seeds_b = [r["seed"] for r in cells[c["against"]]["runs"]]
            assert seeds_a == seeds_b == [0, 1, 2, 3] and len(a) == len(b) == 4
            with np.errstate(divide="ignore", invalid="ignore"):
                res = paired(a, b)
            clean = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                     for k, v in res.items()}
            yield {"comparison": comparison["id"], "cell": c["cell"], "against": c["against"],
                   "agent": c["agent"], "metric": c["metric"], "expect": c["expect"],
                   "a": a, "b": b, **clean}


def main():
    # scipy warns of precision loss where every difference is equal (the infinite-t example).
    warnings.simplefilter("ignore", RuntimeWarning)
    out = {
        "source": {"scipy": scipy.__version__, "numpy": np.__version__,
                   "v2": "docs/study/v2/study.json"},
        "tests": list(test_cases()),
        "power": list(power_cases()),
        "nct": list(nct_cases()),
        "v2": list(v2_cases()),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{OUT}: {len(out['tests'])} tests, {len(out['power'])} power cases, "
          f"{len(out['nct'])} nct cases, "
          f"{len(out['v2'])} v2 claims (scipy {scipy.__version__})")


if __name__ == "__main__":
    main()
