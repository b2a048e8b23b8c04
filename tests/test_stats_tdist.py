"""Student's t quantile (analysis/stats/tdist.py) against known values and closed forms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis.stats.tdist import regularized_beta, t975, t_quantile, t_upper_tail


@pytest.mark.parametrize(
    ("df", "expected"),
    [
        (1, 12.706204736174698),
        (2, 4.302652729749464),
        (10, 2.2281388519862744),
        (30, 2.0422724563012373),
        (1000, 1.9623390808264078),
        (10**12, 1.959963984540054),  # t - z = (z³ + z) / (4 df): 2.4e-12 here
        (math.inf, 1.959963984540054),
    ],
)
def test_t975_matches_known_values(df: float, expected: float) -> None:
    assert t975(df) == pytest.approx(expected, abs=1e-9)


def _cdf_odd(t: float, df: int) -> float:
    """The closed form of the t distribution function for df = 3 and 5."""
    theta = math.atan(t / math.sqrt(df))
    c, s = math.cos(theta), math.sin(theta)
    series = 1.0 if df == 3 else 1 + 2 / 3 * c * c
    return 0.5 + (theta + s * c * series) / math.pi


@pytest.mark.parametrize("df", [3, 5])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995, 0.9999])
def test_quantile_inverts_the_closed_form_distribution(df: int, p: float) -> None:
    assert _cdf_odd(t_quantile(p, df), df) == pytest.approx(p, abs=1e-13)


@given(st.floats(0.001, 0.999), st.floats(0.5, 5_000))
def test_quantile_inverts_the_tail_and_is_antisymmetric(p: float, df: float) -> None:
    t = t_quantile(p, df)
    assert t_upper_tail(t, df) == pytest.approx(1 - p, rel=1e-9, abs=1e-12)
    assert t_quantile(1 - p, df) == pytest.approx(-t, abs=1e-9)


def test_quantile_is_continuous_where_the_method_changes() -> None:
    below, above = t975(1999), t975(2001)
    assert below > t975(2000) > above
    assert below - above == pytest.approx(2 * (t975(1999) - t975(2000)), rel=1e-3)


def test_regularized_beta_known_values() -> None:
    assert regularized_beta(0.5, 2, 2) == pytest.approx(0.5, abs=1e-15)
    assert regularized_beta(0.3, 1, 1) == pytest.approx(0.3, abs=1e-15)
    # I_x(a, 1) = x^a
    assert regularized_beta(0.7, 3.5, 1) == pytest.approx(0.7**3.5, abs=1e-14)


@pytest.mark.parametrize(("p", "df"), [(0, 5), (1, 5), (0.5, 0), (0.9, -1)])
def test_quantile_refuses_impossible_arguments(p: float, df: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        t_quantile(p, df)
