#!/usr/bin/python3
"""Reference values for the study's power analysis (analysis/stats/t-test-power.ts).

Writes tests/study/fixtures/power-reference.jsonl: one JSON case per line, each the inputs, the
quantity solved and its value as scipy (noncentral t CDF: scipy.stats.nct, Boost's algorithm)
and statsmodels (TTestIndPower / TTestPower: power of the pooled, Welch-df and one-sample
t-tests) compute it. Solved quantities (effect, nobs1) are the root of statsmodels' own power
function found by scipy's brentq to xtol 1e-14, so the fixture holds the exact root rather than
statsmodels' solve_power default tolerance.

Run with Debian's python3 (apt-get install -y python3-scipy python3-statsmodels):
    /usr/bin/python3 tests/study/power-reference.py
"""
import json
import sys
from pathlib import Path

import scipy
import statsmodels
from scipy import optimize, stats
from statsmodels.stats.power import TTestIndPower, TTestPower

IND = TTestIndPower()
ONE = TTestPower()
OUT = Path(__file__).parent / "fixtures" / "power-reference.jsonl"


def root(f, lo, hi):
    return optimize.brentq(f, lo, hi, xtol=1e-14, rtol=4 * sys.float_info.epsilon, maxiter=500)


def welch_df(sd1, n1, sd2, n2):
    v1, v2 = sd1**2 / n1, sd2**2 / n2
    return (v1 + v2) ** 2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))


def welch_power(delta, sd1, n1, sd2, n2, alpha):
    # statsmodels' nc = effect * sqrt(n1 n2 / (n1 + n2)); this effect makes nc = delta / se.
    sigma = ((sd1**2 * n2 + sd2**2 * n1) / (n1 + n2)) ** 0.5
    return float(
        IND.power(delta / sigma, n1, alpha, ratio=n2 / n1, df=welch_df(sd1, n1, sd2, n2))
    )


def cases():
    for t, df, nc in [
        (2, 10, 1), (-1, 5.5, 2), (3, 3, -1), (0.5, 1, 0.5), (1.7, 2.3, 3.1), (-2.2, 7, -1.5),
        (4, 20, 2), (2.1, 4, 5), (10, 30, 8), (-0.3, 15.25, 0.2), (2.776, 4, 0.001),
        (1.96, 1000, 2.8), (2.3, 8, 12), (-5, 3, 1), (40, 10, 37), (30, 5, 20), (-3, 2, 1),
        (1, 0.5, 2), (100, 3, 30), (5, 1e5, 4),
    ]:
        yield {"kind": "nct-cdf", "t": t, "df": df, "nc": nc,
               "value": float(stats.nct.cdf(t, df, nc))}
    sizes = [(2, 2), (2, 5), (3, 3), (3, 7), (5, 5), (4, 9), (10, 10), (10, 3), (20, 40)]
    for n1, n2 in sizes:
        for d in [0.05, 0.8, 1.5, 3.0]:
            for alpha in [0.01, 0.05, 0.1]:
                yield {"kind": "pooled-power", "d": d, "n1": n1, "n2": n2, "alpha": alpha,
                       "value": float(IND.power(d, n1, alpha, ratio=n2 / n1))}
        for power in [0.06, 0.5, 0.8, 0.99, 0.999]:
            alpha = 0.05
            if power <= alpha:
                continue
            d = root(lambda d: IND.power(d, n1, alpha, ratio=n2 / n1) - power, 1e-9, 200)
            yield {"kind": "pooled-effect", "n1": n1, "n2": n2, "alpha": alpha,
                   "power": power, "value": d}
    for d in [0.3, 0.8, 2.0]:
        for ratio in [1, 2, 0.5]:
            for power in [0.5, 0.8, 0.95]:
                least = max(2, 2 / ratio)
                n = root(lambda n: IND.power(d, n, 0.05, ratio=ratio) - power, least, 1e5)
                yield {"kind": "pooled-nobs1", "d": d, "ratio": ratio, "alpha": 0.05,
                       "power": power, "value": n}
    designs = [(0.03, 5, 0.03, 5), (0.0304, 5, 0.0284, 5), (0.01, 3, 0.05, 8), (1, 2, 2, 10),
               (0.2, 10, 0.1, 4), (5, 6, 5, 3)]
    for sd1, n1, sd2, n2 in designs:
        for delta in [0.01, 0.05, 0.2, 1.0]:
            yield {"kind": "welch-power", "delta": delta, "sd1": sd1, "n1": n1, "sd2": sd2,
                   "n2": n2, "alpha": 0.05,
                   "value": welch_power(delta, sd1, n1, sd2, n2, 0.05)}
        for power in [0.1, 0.8, 0.99]:
            delta = root(lambda x: welch_power(x, sd1, n1, sd2, n2, 0.05) - power, 1e-12,
                         1e4 * (sd1 + sd2))
            yield {"kind": "welch-mde", "sd1": sd1, "n1": n1, "sd2": sd2, "n2": n2,
                   "alpha": 0.05, "power": power, "value": delta}
    for n in [2, 3, 5, 8, 10, 30]:
        for d in [0.1, 1.0, 2.5]:
            yield {"kind": "one-sample-power", "d": d, "n": n, "alpha": 0.05,
                   "value": float(ONE.power(d, n, 0.05))}
        for power in [0.2, 0.8, 0.995]:
            d = root(lambda d: ONE.power(d, n, 0.05) - power, 1e-9, 500)
            yield {"kind": "one-sample-effect", "n": n, "alpha": 0.05, "power": power,
                   "value": d}


def main():
    OUT.parent.mkdir(parents=True, exist_ok=True)
    header = {"kind": "source", "scipy": scipy.__version__,
              "statsmodels": statsmodels.__version__}
    with OUT.open("w") as f:
        f.write(json.dumps(header) + "\n")
        n = 0
        for case in cases():
            f.write(json.dumps(case) + "\n")
            n += 1
    print(f"{OUT}: {n} cases (scipy {scipy.__version__}, statsmodels "
          f"{statsmodels.__version__})")


if __name__ == "__main__":
    main()
