"""A sequential probability ratio test between two bots, as chess engines' test farms run one.

A fixed number of deals either wastes play (the difference was plain after a
few) or stops short of settling it. A sequential test looks after every deal
and stops as soon as the evidence is strong enough either way, with error
rates fixed in advance: Wald's SPRT, in the generalized form Stockfish's test
farm (fishtest) uses, which needs no model of how the results spread beyond
their mean.

The observation is one deal: the first bot's mean score over the deal's
rotations (1 a match its side scored more in, 0.5 a tie, 0 a loss). With two
bots a deal has two rotations, so a deal's score is one of 0, 1/4, 1/2, 3/4, 1:
a game pair of the chess farms, whose five outcomes (the pentanomial model)
carry the correlation of the two matches of one deal instead of pretending
they are independent. H0 says the first bot's expected score is `score(ELO0)`,
H1 `score(ELO1)`, with the logistic map `score(elo) = 1 / (1 + 10^(-elo/400))`.

The log-likelihood ratio is generalized: under each hypothesis the
distribution over the five outcomes is the most likely one (for the counts
seen) whose mean is that hypothesis's score, an empirical-likelihood fit
with one Lagrange multiplier. Outcomes not yet seen get a count of 1/1000,
as fishtest does, so that a test whose every deal so far was a win has a
finite ratio. The test accepts H1 once the ratio reaches log((1 - beta) /
alpha), H0 once it falls to log(beta / (1 - alpha)) (docs/statistics.md).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

OUTCOMES: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A deal's possible scores with two rotations (the pentanomial outcomes)."""
UNSEEN: Final = 1e-3
"""The count given to an outcome not yet seen (fishtest's regularization)."""
ELO_LIMIT: Final = 1000.0
"""Hypotheses beyond +-1000 Elo (a score within 0.3% of 0 or 1) are refused."""


class AlreadyDecided(RuntimeError):
    """A deal counted after the test decided: the caller should have stopped at the decision."""


class Decision(enum.Enum):
    H0 = "H0 accepted"
    H1 = "H1 accepted"


def elo_score(elo: float) -> float:
    """The expected score of a player `elo` points stronger (the logistic Elo curve)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def expected_mle(values: Sequence[float], probs: Sequence[float], mean: float) -> tuple[float, ...]:
    """The distribution on `values` closest (most likely) to the empirical `probs` whose
    mean is `mean`: p_i = probs_i / (1 + theta (values_i - mean)), theta the root of
    sum probs_i (values_i - mean) / (1 + theta (values_i - mean)) = 0, found by bisection
    (the sum falls as theta grows). `mean` must lie strictly between the least and the
    greatest value of positive probability."""
    support = [v for v, p in zip(values, probs, strict=True) if p > 0]
    low, high = min(support), max(support)
    if not low < mean < high:
        raise ValueError(f"no distribution on {low}..{high} has the mean {mean}")
    # 1 + theta (v - mean) > 0 for every v of the support: theta in (-1/(high-mean), 1/(mean-low))
    lo, hi = -1.0 / (high - mean), 1.0 / (mean - low)

    def slope(theta: float) -> float:
        return sum(
            p * (v - mean) / (1.0 + theta * (v - mean))
            for v, p in zip(values, probs, strict=True)
            if p > 0
        )

    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if slope(mid) > 0:
            lo = mid
        else:
            hi = mid
    theta = (lo + hi) / 2
    return tuple(p / (1.0 + theta * (v - mean)) for v, p in zip(values, probs, strict=True))


def generalized_llr(
    values: Sequence[float], counts: Sequence[float], s0: float, s1: float
) -> float:
    """The generalized log-likelihood ratio of mean `s1` against mean `s0` for outcomes
    `values` seen `counts` times: N sum f_i log(p1_i / p0_i), f the frequencies, p0 and p1
    `expected_mle` under each mean."""
    total = sum(counts)
    probs = [c / total for c in counts]
    p0 = expected_mle(values, probs, s0)
    p1 = expected_mle(values, probs, s1)
    return total * sum(
        f * (math.log(b) - math.log(a)) for f, a, b in zip(probs, p0, p1, strict=True) if f > 0
    )


def outcome_index(score: float) -> int:
    """Which of `OUTCOMES` a deal's score is; ValueError for a score that is none of them."""
    index = round(score * 4)
    if not 0 <= index <= 4 or abs(index / 4 - score) > 1e-9:
        raise ValueError(f"a deal's score is one of 0, 1/4, 1/2, 3/4, 1, not {score}")
    return index


def pentanomial(scores: Sequence[float]) -> list[int]:
    """How many deals scored each of `OUTCOMES`."""
    counts = [0] * len(OUTCOMES)
    for score in scores:
        counts[outcome_index(score)] += 1
    return counts


def parse_hypotheses(text: str) -> tuple[float, float]:
    """`ELO0,ELO1` (ELO0 < ELO1, each within +-1000); ValueError with the reason."""
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"--sprt is ELO0,ELO1 (like -10,10), not {text!r}")
    try:
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"--sprt is ELO0,ELO1, two numbers (like -10,10), not {text!r}") from None
    if not all(math.isfinite(e) and abs(e) <= ELO_LIMIT for e in (elo0, elo1)):
        raise ValueError(f"--sprt's Elo values must be within +-{ELO_LIMIT:g}, not {text!r}")
    if not elo0 < elo1:
        raise ValueError(f"--sprt ELO0,ELO1 needs ELO0 < ELO1, not {text!r}")
    return elo0, elo1


@dataclass(frozen=True, slots=True)
class Sprt:
    """The test's design: H0 the first bot is `elo0` stronger, H1 `elo1`; `alpha` the chance
    of accepting H1 when H0 holds, `beta` of accepting H0 when H1 holds."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def check(self) -> None:
        """ValueError for a design that is not a test."""
        if not self.elo0 < self.elo1:
            raise ValueError(f"--sprt needs ELO0 < ELO1, not {self.elo0:g},{self.elo1:g}")
        if not all(abs(e) <= ELO_LIMIT for e in (self.elo0, self.elo1)):
            raise ValueError(f"--sprt's Elo values must be within +-{ELO_LIMIT:g}")
        for name, value in (("--sprt-alpha", self.alpha), ("--sprt-beta", self.beta)):
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5 (exclusive), not {value:g}")

    @property
    def lower(self) -> float:
        """At or below this log-likelihood ratio H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above this log-likelihood ratio H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[int]) -> float:
        """The log-likelihood ratio of H1 against H0 after deals with these pentanomial
        counts (unseen outcomes regularized)."""
        regular = [c if c > 0 else UNSEEN for c in counts]
        return generalized_llr(OUTCOMES, regular, elo_score(self.elo0), elo_score(self.elo1))

    def decide(self, llr: float) -> Decision | None:
        if llr >= self.upper:
            return Decision.H1
        if llr <= self.lower:
            return Decision.H0
        return None

    def to_json(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


@dataclass(frozen=True, slots=True)
class SprtOutcome:
    """Where a test stands after `deals` deals."""

    test: Sprt
    deals: int
    counts: tuple[int, ...]
    llr: float
    decision: Decision | None

    @property
    def score(self) -> float:
        """The first bot's mean score a deal."""
        return sum(c * v for c, v in zip(self.counts, OUTCOMES, strict=True)) / self.deals

    def to_json(self) -> dict[str, object]:
        return {
            **self.test.to_json(),
            "decision": "no decision" if self.decision is None else self.decision.value,
            "llr": round(self.llr, 4),
            "lower": round(self.test.lower, 4),
            "upper": round(self.test.upper, 4),
            "deals": self.deals,
            "score": None if not self.deals else round(self.score, 4),
            "pentanomial": list(self.counts),
        }


class Sequential:
    """The test fed one deal's score at a time, in deal order."""

    def __init__(self, test: Sprt) -> None:
        self.test = test
        self.counts = [0] * len(OUTCOMES)
        self.deals = 0
        self.llr = 0.0
        self.decision: Decision | None = None

    def add(self, score: float) -> Decision | None:
        """Count one more deal; the decision once the ratio crosses a bound (then final)."""
        if self.decision is not None:
            raise AlreadyDecided("the test has decided: no deal is counted after it")
        self.counts[outcome_index(score)] += 1
        self.deals += 1
        self.llr = self.test.llr(self.counts)
        self.decision = self.test.decide(self.llr)
        return self.decision

    def outcome(self) -> SprtOutcome:
        return SprtOutcome(self.test, self.deals, tuple(self.counts), self.llr, self.decision)


def run_sprt(test: Sprt, scores: Sequence[float]) -> SprtOutcome:
    """The test over deals' scores in order, stopped at the first deal that decides it (the
    scores after it are not counted)."""
    seq = Sequential(test)
    for score in scores:
        if seq.add(score) is not None:
            break
    return seq.outcome()
