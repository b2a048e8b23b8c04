"""Student's t quantile, accurate to about 1e-12, without SciPy.

The confidence intervals of docs/statistics.md need t(0.975, df) for a few hundred
cells. The quantile is found by safeguarded Newton iterations on the exact
upper tail, P(T > t) = I_x(df/2, 1/2) / 2 with x = df / (df + t²), the
regularized incomplete beta function evaluated by its continued fraction
(modified Lentz). Above `ASYMPTOTIC_DF` degrees of freedom the log-gamma
prefactor would lose digits to cancellation, and the Cornish-Fisher
expansion in 1/df (Abramowitz & Stegun 26.7.5, four terms) is exact to far
better than 1e-12 there; df = 1 and 2 have closed forms.
"""

from __future__ import annotations

import math
from functools import cache
from statistics import NormalDist

ASYMPTOTIC_DF = 2_000
_EPS = 1e-16
_TINY = 1e-300


def _beta_cf(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b) (converges fast for x < (a + 1) / (a + b + 2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1_000_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (x={x}, a={a}, b={b})")


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1 and a, b > 0."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], not {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(x, a, b) / a
    return 1.0 - front * _beta_cf(1.0 - x, b, a) / b


def t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom."""
    if t < 0:
        return 1.0 - t_upper_tail(-t, df)
    return 0.5 * regularized_beta(df / (df + t * t), df / 2.0, 0.5)


def t_density(t: float, df: float) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))


def _cornish_fisher(z: float, df: float) -> float:
    z2 = z * z
    g1 = (z2 + 1) * z / 4
    g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
    g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
    g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@cache
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with `df` > 0 degrees of freedom (0 < p < 1)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, not {p}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    if math.isinf(df) or df >= ASYMPTOTIC_DF:
        return z if math.isinf(df) else _cornish_fisher(z, df)
    q = 1.0 - p
    # Bracket the root of t_upper_tail(t) = q, then Newton steps kept inside the bracket.
    lo, hi = 0.0, max(1.0, _cornish_fisher(z, df))
    while t_upper_tail(hi, df) > q:
        lo, hi = hi, hi * 2
    t = min(max(_cornish_fisher(z, df), lo), hi)
    for _ in range(200):
        f = t_upper_tail(t, df) - q
        if f > 0:
            lo = t
        else:
            hi = t
        step = f / t_density(t, df)
        nxt = t + step
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2
        if abs(nxt - t) <= 1e-15 * max(1.0, abs(t)):
            return nxt
        t = nxt
    return t


def t975(df: float) -> float:
    """t(0.975, df): the multiplier of a two-sided 95% interval."""
    return t_quantile(0.975, df)
