#!/usr/bin/env python3
"""Independent expected values for the growth fit (crate::growth).

Standard library only, and no ctrlbench code. Reads fixture.csv (columns n,
round, value: one run's value at scale n in round `round`) and prints:

  slope     the exponent b of ln(value) on ln(n) with a fixed effect per
            round, fitted as a dummy-variable regression (one intercept
            column per round, then ln n) solved by Gaussian elimination on
            the normal equations -- not the within-round centring the Rust
            code uses, so the two agree only if both are right; its
            standard error, degrees of freedom (n - rounds - 1) and the 90 %
            two-sided interval b -/+ t(0.95, df) * se
  curvature the same with (ln n)^2 as a further column: the coefficient c,
            its t statistic, and the local exponent b2 + 2c ln(n_max) with
            its 90 % interval from the coefficients' covariance
  crossing  a pooled fit (no round effect, df = n - 2) of ln(value) on
            ln(n); where it reaches ln(5 s), and the Fieller interval: the
            set of n where (ybar - ln T + b d)^2 <= t^2 s^2 (1/n + d^2/Sxx)

The t quantile is computed here from the regularised incomplete beta
function (Numerical Recipes' continued fraction) and bisection, not taken
from a table or a library.

Usage: independent_growth.py [fixture.csv]   (default: beside this script)
"""

import csv
import math
import os
import sys

ALPHA = 0.05
LIMIT = 5.0


def betacf(a, b, x):
    """Continued fraction of the incomplete beta function (Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def betainc(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def t_cdf(t, df):
    p = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - p if t > 0 else p


def t_upper(alpha, df):
    """The t with P(T > t) = alpha, by bisection."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - t_cdf(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def solve(a, b):
    """Gauss-Jordan with partial pivoting: returns (x, inverse of a)."""
    n = len(a)
    m = [row[:] + [b[i]] + [1.0 if j == i else 0.0 for j in range(n)] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        m[col] = [v / p for v in m[col]]
        for r in range(n):
            if r != col:
                f = m[r][col]
                m[r] = [v - f * w for v, w in zip(m[r], m[col])]
    return [m[i][n] for i in range(n)], [m[i][n + 1:] for i in range(n)]


def ols(rows, y):
    k = len(rows[0])
    xtx = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * v for r, v in zip(rows, y)) for i in range(k)]
    beta, inv = solve(xtx, xty)
    rss = sum((v - sum(c * x for c, x in zip(beta, r))) ** 2 for r, v in zip(rows, y))
    return beta, inv, rss


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture.csv")
    with open(path) as f:
        data = [(float(r["n"]), r["round"], float(r["value"])) for r in csv.DictReader(f)]
    rounds = sorted({r for _, r, _ in data})
    x = [math.log(n) for n, _, _ in data]
    y = [math.log(v) for _, _, v in data]
    dummies = [[1.0 if r == q else 0.0 for q in rounds] for _, r, _ in data]
    n_obs, n_rounds = len(data), len(rounds)

    rows = [d + [xi] for d, xi in zip(dummies, x)]
    beta, inv, rss = ols(rows, y)
    df = n_obs - n_rounds - 1
    b = beta[-1]
    se = math.sqrt(rss / df * inv[-1][-1])
    t = t_upper(ALPHA, df)
    print(f"slope b={b:.10f} se={se:.10f} df={df} t={t:.10f} lo={b - t * se:.10f} hi={b + t * se:.10f}")

    rows2 = [d + [xi, xi * xi] for d, xi in zip(dummies, x)]
    beta2, inv2, rss2 = ols(rows2, y)
    df2 = n_obs - n_rounds - 2
    s2 = rss2 / df2
    b2, c = beta2[-2], beta2[-1]
    tc = c / math.sqrt(s2 * inv2[-1][-1])
    xk = max(x)
    g = [1.0, 2.0 * xk]
    var = s2 * (inv2[-2][-2] * g[0] * g[0] + 2 * inv2[-2][-1] * g[0] * g[1] + inv2[-1][-1] * g[1] * g[1])
    local = b2 + 2.0 * c * xk
    half = t_upper(ALPHA, df2) * math.sqrt(var)
    print(f"curvature c={c:.10f} t={tc:.10f} t975={t_upper(0.025, df2):.10f} local={local:.10f} "
          f"lo={local - half:.10f} hi={local + half:.10f}")

    xbar, ybar = sum(x) / n_obs, sum(y) / n_obs
    sxx = sum((xi - xbar) ** 2 for xi in x)
    bp = sum((xi - xbar) * (yi - ybar) for xi, yi in zip(x, y)) / sxx
    s2p = sum((yi - ybar - bp * (xi - xbar)) ** 2 for xi, yi in zip(x, y)) / (n_obs - 2)
    tp = t_upper(ALPHA, n_obs - 2)
    gl = ybar - math.log(LIMIT)
    qa = bp * bp - tp * tp * s2p / sxx
    qb = 2 * bp * gl
    qc = gl * gl - tp * tp * s2p / n_obs
    disc = math.sqrt(qb * qb - 4 * qa * qc)
    d1, d2 = (-qb - disc) / (2 * qa), (-qb + disc) / (2 * qa)
    star = math.exp(xbar - gl / bp)
    print(f"crossing limit={LIMIT} n={star:.6f} lo={math.exp(xbar + min(d1, d2)):.6f} "
          f"hi={math.exp(xbar + max(d1, d2)):.6f}")


main()
