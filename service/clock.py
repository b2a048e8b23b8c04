"""Time controls: a match's clocks, kept by the server (docs/service.md, "Time controls").

A seat's clock runs from the moment its decision is available (the previous
action applied, or the round dealt) until the server receives its answer, by
ApplyMove or Play alike: the hub stamps an answer when it arrives
(`Hub.apply_once`), before it waits for the match's lock, so the order in
which threads take the lock decides nothing. Time beyond the move limit comes
out of the seat's bank; when the answer would need more than both, the seat
is out of time, and the hub acts for it (`Hub.time_out`) through the very
path a move takes.

The clock reads a monotonic-time callable given to the hub, so the
accounting is tested exactly with a clock the test moves. What fires a
timeout when no answer comes at all is the `Timekeeper`, one thread that
sleeps until the earliest deadline of every match and then asks the hub to
act; a test without real time calls `Timekeeper.run_due` itself.

Times are whole milliseconds: an answer's time is the clock's difference
rounded to the nearest millisecond.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from service.errors import BadArgument
from sniff.bots import BOTS

MOVE_LIMIT_MAX_MS: Final = 3_600_000
"""The longest move limit a time control may set: an hour."""
BANK_MAX_MS: Final = 86_400_000
"""The largest time bank a time control may set: a day."""
DEFAULT_POLICIES: Final = ("greedy", "random")
"""The bots that may choose a move for a seat out of time: those of `sniff.bots.BOTS` that
need no search, so the server's move costs microseconds, not the seconds of a search."""
FORFEIT_SEATS: Final = (2, 4)
"""Seat counts where a forfeit has one other side to win (3 seats have two)."""
_log = logging.getLogger(__name__)

_TICK_SECONDS: Final = 1.0
"""The longest the timekeeper sleeps without looking again (a deadline set meanwhile wakes
it at once; this only bounds the cost of a missed wake-up)."""


class OutOfTime(enum.Enum):
    """What the server does for a seat whose move limit and bank are spent."""

    DEFAULT_MOVE = "default_move"
    """The server plays a move chosen by the time control's policy; the match goes on."""
    FORFEIT = "forfeit"
    """The seat forfeits: the match ends, won by the other side."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A match's time control, fixed at creation and logged in its `match_created` detail."""

    move_limit_ms: int
    bank_ms: int
    out_of_time: OutOfTime
    policy: str | None = None
    """The bot that chooses for a seat out of time (DEFAULT_MOVE only)."""

    def check(self, seats: int) -> None:
        """Refuse, naming the field, a time control the service cannot keep for `seats`."""
        if not 1 <= self.move_limit_ms <= MOVE_LIMIT_MAX_MS:
            raise BadArgument(
                "time_control.move_limit_ms",
                f"time_control.move_limit_ms: {self.move_limit_ms} is out of range "
                f"(1 to {MOVE_LIMIT_MAX_MS:,})",
            )
        if not 0 <= self.bank_ms <= BANK_MAX_MS:
            raise BadArgument(
                "time_control.bank_ms",
                f"time_control.bank_ms: {self.bank_ms} is out of range (0 to {BANK_MAX_MS:,})",
            )
        if self.out_of_time is OutOfTime.DEFAULT_MOVE:
            if self.policy not in DEFAULT_POLICIES:
                known = "a bot that searches" if self.policy in BOTS else "no such bot"
                raise BadArgument(
                    "time_control.policy",
                    f"time_control.policy: {self.policy!r} is {known}: the default move is "
                    f"chosen by one of {', '.join(DEFAULT_POLICIES)}",
                )
        elif self.policy:
            raise BadArgument(
                "time_control.policy",
                "time_control.policy: a forfeit chooses no move: leave the policy empty",
            )
        elif seats not in FORFEIT_SEATS:
            raise BadArgument(
                "time_control.out_of_time",
                f"time_control.out_of_time: a forfeit with {seats} seats has no one other side "
                "to win: use a default move",
            )

    def detail(self) -> dict[str, Any]:
        """As the `match_created` detail keeps it (`time_control`)."""
        kept: dict[str, Any] = {
            "move_limit_ms": self.move_limit_ms,
            "bank_ms": self.bank_ms,
            "out_of_time": self.out_of_time.value,
        }
        if self.policy is not None:
            kept["policy"] = self.policy
        return kept

    @classmethod
    def of_detail(cls, created: Mapping[str, Any]) -> TimeControl | None:
        """The time control a `match_created` detail holds, or None for a match without one."""
        kept = created.get("time_control")
        if kept is None:
            return None
        return cls(
            int(kept["move_limit_ms"]),
            int(kept["bank_ms"]),
            OutOfTime(kept["out_of_time"]),
            kept.get("policy"),
        )


@dataclass(frozen=True, slots=True)
class SeatTime:
    """One seat's clock as a reply shows it."""

    seat: int
    move_time_left_ms: int
    bank_left_ms: int
    running: bool


@dataclass(slots=True)
class MatchClock:
    """The clocks of one match: each seat's bank, and the one decision being timed.

    Changed only under the match's lock. A deal is timed too, against no
    seat's bank: when nobody deals within the move limit, the server deals the
    next round itself from the match's seed (there is no choice in it).
    """

    control: TimeControl
    banks: list[int]
    seat: int | None = None
    """The seat whose decision is timed; None for a deal, or when nothing is timed."""
    move_count: int | None = None
    """The move count of the decision timed; None when nothing is."""
    deal_round: int | None = None
    """The round whose deal is timed; None for a seat's decision."""
    since: float = 0.0
    """When the decision became available, on the hub's clock (seconds)."""

    @classmethod
    def new(cls, control: TimeControl, seats: int) -> MatchClock:
        return cls(control, [control.bank_ms] * seats)

    def start(self, seat: int, move_count: int, now: float) -> None:
        """Time `seat`'s decision at `move_count` from `now`, with a whole move limit."""
        self.seat, self.move_count, self.deal_round, self.since = seat, move_count, None, now

    def start_deal(self, round_index: int, move_count: int, now: float) -> None:
        """Time the deal of `round_index` from `now`."""
        self.seat, self.move_count, self.deal_round, self.since = None, move_count, round_index, now

    def stop(self) -> None:
        self.seat = self.move_count = self.deal_round = None

    def elapsed_ms(self, now: float) -> int:
        return max(0, round((now - self.since) * 1000))

    def allowance_ms(self) -> int:
        """How long the timed decision may take in all: the move limit, and the seat's bank."""
        bank = 0 if self.seat is None else self.banks[self.seat]
        return self.control.move_limit_ms + bank

    def bank_after(self, received: float) -> int | None:
        """The seat's bank if its answer was received at `received`; None when it was out of
        time by then (the allowance spent: an answer must come strictly before)."""
        assert self.seat is not None
        elapsed = self.elapsed_ms(received)
        if elapsed >= self.allowance_ms():
            return None
        return self.banks[self.seat] - max(0, elapsed - self.control.move_limit_ms)

    def deadline(self) -> float | None:
        """When the timed decision runs out, on the hub's clock; None when nothing is timed."""
        if self.move_count is None:
            return None
        return self.since + self.allowance_ms() / 1000

    def times(self, now: float) -> tuple[SeatTime, ...]:
        """Every seat's clock at `now`: the running one's time left, the others' whole."""
        limit = self.control.move_limit_ms
        out = []
        for seat, bank in enumerate(self.banks):
            if seat == self.seat and self.move_count is not None:
                elapsed = self.elapsed_ms(now)
                out.append(
                    SeatTime(
                        seat,
                        max(0, limit - elapsed),
                        max(0, bank - max(0, elapsed - limit)),
                        True,
                    )
                )
            else:
                out.append(SeatTime(seat, limit, bank, False))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Timing:
    """A match's time control and clocks as GetState shows them."""

    control: TimeControl
    times: tuple[SeatTime, ...]
    forfeited_seat: int | None


class Timekeeper:
    """Fires timeouts: calls `expire(match_id)` once a match's deadline has passed.

    `expire` must check the deadline again under the match's lock (an answer
    may have come meanwhile): the timekeeper only says when to look. One
    thread serves every match; it starts with `start` and ends with `stop`.
    """

    def __init__(self, now: Callable[[], float], expire: Callable[[str], None]) -> None:
        self._now = now
        self._expire = expire
        self._deadlines: dict[str, float] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def set(self, match_id: str, deadline: float | None) -> None:
        """The match's deadline from now on (None: nothing is timed)."""
        with self._cond:
            if deadline is None:
                self._deadlines.pop(match_id, None)
            else:
                self._deadlines[match_id] = deadline
                self._cond.notify()

    def deadline(self, match_id: str) -> float | None:
        return self._deadlines.get(match_id)

    def run_due(self) -> list[str]:
        """Ask the hub to act on every match whose deadline has passed; their ids."""
        now = self._now()
        with self._cond:
            due = [m for m, d in self._deadlines.items() if d <= now]
        for match_id in due:
            self._expire(match_id)
        return due

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sniff-clock", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                first = min(self._deadlines.values(), default=None)
                wait = _TICK_SECONDS if first is None else first - self._now()
                if wait > 0:
                    self._cond.wait(min(wait, _TICK_SECONDS))
                    continue
            try:
                self.run_due()
            except Exception:  # a storage failure: the deadline stays, and is tried again
                _log.exception("a timeout could not be applied")
                with self._cond:
                    self._cond.wait(_TICK_SECONDS)
