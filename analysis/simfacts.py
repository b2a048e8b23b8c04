"""Simulated matches as facts: the kernel's int32 rows straight into Arrow columns.

A facts-only run (`sniff simulate`, docs/simulate.md) stores of each match its settings,
its result and its facts, never a per-match Python object: `kernel_matches_raw` hands
back native int32 rows (`sniff/simulated.py` documents their columns), and `facts_tables`
turns them into the Arrow tables the log's writer inserts with one statement per table
(`service/storage/simulated.sql`), with numpy. The Python engine gives the same rows
(`engine_rows`), so a run stores the same facts whichever played it.

The tables hold what varies per match; what a whole run shares (seats, variant, target,
players, source) comes from its `simulation_runs` row when they are inserted. Match ids
are `<run>-<i>` (eight digits); the rounds' and decisions' `match_id` columns are
dictionary-encoded over the chunk's match ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from sniff.facts import OUTCOMES
from sniff.simulated import (
    LIMIT,
    MatchSettings,
    PlayedMatch,
    engine_matches,
    kernel_matches_raw,
)

SEATS_MAX: Final = 4
MATCH_COLS: Final = 5 + SEATS_MAX
ROUND_COLS: Final = 14 + 5 * SEATS_MAX
DECISION_COLS: Final = 9
_ORIENTATIONS: Final = ("cross", "inline")
_ENDINGS: Final = ("domino", "blocked")


@dataclass(frozen=True, slots=True)
class RawRows:
    """The kernel's rows of some matches: int32 arrays of shape (n, width), in either
    memory order."""

    matches: np.ndarray[Any, Any]
    rounds: np.ndarray[Any, Any]
    decisions: np.ndarray[Any, Any]


@dataclass(frozen=True, slots=True)
class SimTables:
    """A chunk's facts as Arrow tables (`simulated.sql` reads them): one row per match
    (its facts, seed and end), per round and per Sniff decision."""

    matches: pa.Table
    rounds: pa.Table
    decisions: pa.Table


def _ints(data: bytes, width: int) -> np.ndarray[Any, Any]:
    """The kernel's rows as an (n, width) array stored column by column (Fortran order:
    `facts_tables` reads whole columns; the C transpose is several times numpy's)."""
    from sniff import _kernel

    columns = np.frombuffer(_kernel.columns(data, width), dtype=np.int32)
    return columns.reshape(width, -1).T


def kernel_rows(settings: MatchSettings, seeds: Sequence[int]) -> RawRows:
    """The matches seeded `seeds`, played by the kernel (it must be built)."""
    matches, rounds, decisions, _ = kernel_matches_raw(settings, seeds)  # bot seeds in C
    return RawRows(
        _ints(matches, MATCH_COLS), _ints(rounds, ROUND_COLS), _ints(decisions, DECISION_COLS)
    )


def engine_rows(settings: MatchSettings, seeds: Sequence[int]) -> RawRows:
    """The same rows as `kernel_rows`, of the matches the engine plays (the reference)."""
    return rows_of(engine_matches(settings, seeds, record=True))


def played_rows(settings: MatchSettings, seeds: Sequence[int], backend: str) -> RawRows:
    """`kernel_rows` for backend "c", `engine_rows` for "python"."""
    if backend == "c":
        return kernel_rows(settings, seeds)
    if backend == "python":
        return engine_rows(settings, seeds)
    raise ValueError(f"backend {backend!r}: use 'c' or 'python'")


def _opt(value: int | None) -> int:
    return -1 if value is None else value


def _wide(values: Sequence[int] | None) -> list[int]:
    out = list(values or ())
    return out + [0] * (SEATS_MAX - len(out))


def rows_of(played: Sequence[PlayedMatch]) -> RawRows:
    """`PlayedMatch`es (of `engine_matches(..., record=True)`) as the kernel's rows; the
    kernel's rows also hold the decisions of a round cut by the win, which no table keeps
    and these leave out."""
    matches: list[list[int]] = []
    rounds: list[list[int]] = []
    decisions: list[list[int]] = []
    for m, p in enumerate(played):
        f = p.facts
        matches.append(
            [
                _opt(f.winner),
                int(p.ended == LIMIT),
                len(f.rounds),
                _opt(f.first_leader),
                p.actions,
                *_wide(f.scores),
            ]
        )
        for r, moves in zip(f.rounds, p.moves, strict=True):
            rounds.append(
                [
                    m,
                    r.round,
                    r.leader,
                    int(r.complete),
                    _opt(r.maker),
                    _opt(r.sniff_index),
                    _opt(r.double),
                    0 if r.orientation is None else 1 + _ORIENTATIONS.index(r.orientation),
                    _opt(r.covered_after),
                    -1 if r.ending is None else _ENDINGS.index(r.ending),
                    _opt(r.finisher),
                    len(moves),
                    r.sniff_points,
                    r.sniff_points_maker_side,
                    *_wide(r.net),
                    *_wide(r.points),
                    *_wide(r.deductions),
                    *_wide(r.placements),
                    *_wide(r.scoring_placements),
                ]
            )
            for d in r.decisions:
                decisions.append(
                    [
                        m,
                        d.round,
                        d.seat,
                        d.placement_index,
                        d.double,
                        OUTCOMES.index(d.outcome),
                        int(d.mover_is_leader),
                        d.same_outcome_before,
                        d.same_outcome_after,
                    ]
                )

    def array(rows: list[list[int]], width: int) -> np.ndarray[Any, Any]:
        return np.array(rows, dtype=np.int32).reshape(-1, width)

    return RawRows(
        array(matches, MATCH_COLS), array(rounds, ROUND_COLS), array(decisions, DECISION_COLS)
    )


# -- rows to Arrow ---------------------------------------------------------------------


def _nullable(values: np.ndarray[Any, Any], arrow: pa.DataType) -> pa.Array:
    """-1 as null."""
    return pa.array(values, arrow, mask=values < 0)


def _per_seat(
    block: np.ndarray[Any, Any], seats: int, arrow: pa.DataType, mask: Any = None
) -> pa.Array:
    """Columns (n, SEATS_MAX) as a list column of `seats` values a row (null where `mask`)."""
    n = len(block)
    offsets = pa.array(np.arange(0, (n + 1) * seats, seats, dtype=np.int32))
    values = pa.array(np.ascontiguousarray(block[:, :seats]).reshape(-1), arrow)
    if mask is None:
        return pa.ListArray.from_arrays(offsets, values)
    return pa.ListArray.from_arrays(offsets, values, mask=pa.array(mask))


def side_values(
    net: np.ndarray[Any, Any], seat: np.ndarray[Any, Any], seats: int
) -> np.ndarray[Any, Any]:
    """`facts.side_value` a row: the side's net minus the other sides' mean (floats as
    Python makes them: both operands are exact in a double, so one correctly rounded
    division and one subtraction)."""
    rows = np.arange(len(net))
    mine = net[rows, seat].astype(np.float64)
    if seats == 4:
        others = net[rows, (seat + 1) % 4].astype(np.float64)
        values: np.ndarray[Any, Any] = mine - others
        return values
    total = net[:, :seats].sum(axis=1).astype(np.float64)
    values = mine - (total - mine) / (seats - 1)
    return values


def _dictionary(indices: np.ndarray[Any, Any], words: Sequence[str], mask: Any = None) -> pa.Array:
    return pa.DictionaryArray.from_arrays(
        pa.array(indices, pa.int8(), mask=mask), pa.array(list(words), pa.string())
    )


def facts_tables(
    raw: RawRows, run: str, first: int, seeds: Sequence[int] | np.ndarray[Any, Any], seats: int
) -> SimTables:
    """The Arrow tables of the matches `first`, `first + 1`, ... of run `run` (their rows
    in `raw`, seeded `seeds`)."""
    # Columns, each contiguous: reading a column of the row-major arrays strides through
    # memory at every use (it cost more than the rest of the conversion).
    m, r, d = (np.ascontiguousarray(a.T) for a in (raw.matches, raw.rounds, raw.decisions))
    n = m.shape[1]
    ids = pa.array([f"{run}-{i:08d}" for i in range(first, first + n)], pa.string())
    complete = r[3].astype(bool)
    incomplete = np.bincount(r[0], weights=~complete, minlength=n).astype(np.int16)
    matches = pa.table(
        {
            "match_id": ids,
            "seed": pa.array(np.asarray(seeds, dtype=np.uint64), pa.uint64()),
            "winner": _nullable(m[0], pa.int8()),
            "ended": pa.array(m[1], pa.int8()),
            "rounds": pa.array(m[2], pa.int16()),
            "first_leader": pa.array(m[3], pa.int8()),
            "actions": pa.array(m[4], pa.int32()),
            "scores": _per_seat(m[5:].T, seats, pa.int32()),
            "incomplete_rounds": pa.array(incomplete, pa.int16()),
        }
    )
    net = r[14 : 14 + SEATS_MAX].T
    side = np.where(r[4] < 0, r[2], r[4])
    value = side_values(net, side, seats)
    orientation = r[7]
    rounds = pa.table(
        {
            "match_id": pa.DictionaryArray.from_arrays(pa.array(r[0], pa.int32()), ids),
            "round": pa.array(r[1], pa.int16()),
            "complete": pa.array(complete),
            "leader": pa.array(r[2], pa.int8()),
            "sniff": pa.array(r[4] >= 0),
            "maker": _nullable(r[4], pa.int8()),
            "sniff_index": _nullable(r[5], pa.int16()),
            "double": _nullable(r[6], pa.int8()),
            "orientation": _dictionary(orientation - 1, _ORIENTATIONS, orientation == 0),
            "covered_after": _nullable(r[8], pa.int16()),
            "net": _per_seat(net, seats, pa.int32(), ~complete),
            "value": pa.array(value, pa.float64(), mask=~complete),
            "sniff_points": pa.array(r[12], pa.int32()),
            "sniff_points_maker_side": pa.array(r[13], pa.int32()),
            "sniff_points_others": pa.array(r[12] - r[13], pa.int32()),
            "ending": _dictionary(r[9], _ENDINGS, ~complete),
            "finisher": _nullable(r[10], pa.int8()),
            "points": _per_seat(r[18:22].T, seats, pa.int32()),
            "deductions": _per_seat(r[22:26].T, seats, pa.int32(), ~complete),
            "placements": _per_seat(r[26:30].T, seats, pa.int16()),
            "scoring_placements": _per_seat(r[30:34].T, seats, pa.int16()),
        }
    )
    # each decision's round (rounds are in match, round order): its net gives the value
    keys = r[0].astype(np.int64) * 65536 + r[1]
    at = np.searchsorted(keys, d[0].astype(np.int64) * 65536 + d[1])
    kept = complete[at]  # a round cut by the win has no decisions in the tables
    d, at = d[:, kept], at[kept]
    decisions = pa.table(
        {
            "match_id": pa.DictionaryArray.from_arrays(pa.array(d[0], pa.int32()), ids),
            "round": pa.array(d[1], pa.int16()),
            "seat": pa.array(d[2], pa.int8()),
            "placement_index": pa.array(d[3], pa.int16()),
            "double": pa.array(d[4], pa.int8()),
            "outcome": _dictionary(d[5], OUTCOMES),
            "mover_is_leader": pa.array(d[6].astype(bool)),
            "value": pa.array(side_values(net[at], d[2], seats), pa.float64()),
            "same_outcome_before": pa.array(d[7], pa.int16()),
            "same_outcome_after": pa.array(d[8], pa.int16()),
        }
    )
    return SimTables(matches, rounds, decisions)
