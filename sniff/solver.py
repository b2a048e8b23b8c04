"""Exact values of the moves of a round whose every tile is placed (docs/analysis.md,
"Exact endgames").

A rollout estimates a move's equity by letting policies play the round out on
sampled deals. When every tile's place is known (a `PlayoutState`: with two
seats and an empty boneyard that is simply what both players know; with a
known boneyard order or more seats it is the "double-dummy" case), the round
is a finite game of perfect information and a move's value can be computed
exactly instead: every seat plays perfectly for its side.

**The value** of a move for the mover's side is `value_for_side(gains, side)`
over the rest of the round, the move included, where `gains[s]` is the points
side `s` scores from now minus its seats' deductions at the round's end (none
when a side reaches the target, §8). That is exactly what a playout's
`PlayoutResult.net(side)` measures, so an exact value and a rollout equity are
figures of one kind: the equity of perfect play on a known deal.

* 2 or 4 seats (two sides): the round is zero-sum (`gain - other`), and the
  solver is a negamax with alpha-beta pruning, moves ordered by their
  immediate points, and a transposition table keyed by the canonical state
  (what the layout is as far as the future is concerned, the hands, the turn,
  the pending drawn tile, how far the boneyard has been drawn); each entry
  holds for a range of scores, those at which every line it rests on ends as
  it did (`_Search`).
* 3 seats (three sides, not zero-sum): max^n. Each side maximises its own
  `value_for_side`; among moves of equal value for the mover the first in the
  engine's canonical order (`legal_moves_of`) is played, so the solution is
  one definite equilibrium, the same every time.

Draws are not chance here: the boneyard's order is part of the state, so a
draw is a forced action, like a pass.

**The budget** (`Budget`) caps the nodes searched and/or the wall-clock time.
When it runs out, `solve` raises `NotSolved`, carrying for each move the best
bounds known (exact where that move's search finished) and bounds on the
position's value; it never returns a value it has not proven.

The search plays the engine's own rules: legal moves from `legal_moves_of`, the
counted ends from `Layout.place` (each child a `Layout.copy`), the end of the
round as `playout.python_playout` ends it. No I/O.

**Two backends**, as for playouts (`backend.py`): this module's search in pure Python,
and its transcription in the compiled kernel (`_kernel.c`, "the exact solver"), some 30
to 50 times as fast, which `solve` uses when the kernel is built (`backend=` chooses).
They give the same `Solution` but for `nodes`, and the same `NotSolved` semantics (the
bounds may differ, each proven); the kernel's table has a fixed size (24 MB, reused from
one solve to the next) where Python's grows with the search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from sniff.backend import BACKEND
from sniff.backend import kernel as _kernel
from sniff.errors import SniffError
from sniff.layout import SLOT_VALUE, Layout, points_for
from sniff.match import legal_moves_of
from sniff.moves import Move, MoveKind
from sniff.playout import PlayoutState, move_of
from sniff.rules import deduction, team_count, team_of, value_for_side
from sniff.tiles import BIT, IS_DOUBLE, PIPS, pips_of

MAX_PLACEMENT_POINTS: Final = 45
"""No placement scores more: a layout has at most four counted ends (two arms from the lead,
two more from the Sniff's branches or stubs), each worth at most 12 (a double 6-6 counted
2·6), so the ends sum is at most 48 and the points, a multiple of five, at most 45. Used
only for the bounds `NotSolved` reports on moves whose search did not finish."""

DEFAULT_NODES: Final = 2_000_000
"""The default budget in nodes: some 10 to 20 seconds of pure Python on one core."""

_TIME_CHECK_EVERY: Final = 1024
"""Nodes between two looks at the clock (a time budget is honoured to about this grain)."""


class BadBudget(SniffError):
    """A budget that allows no search: no limit at all, or a limit that is not positive."""

    kind = "bad_budget"


class NotPerfectInformation(SniffError):
    """A position whose hidden tiles the players do not know, solved without saying that a
    double-dummy value (every tile known to every seat) is what the caller wants."""

    kind = "not_perfect_information"


@dataclass(frozen=True, slots=True)
class Budget:
    """How much searching `solve` may do before it gives up: `nodes` (positions visited)
    and/or `millis` (wall-clock milliseconds, checked every 1,024 nodes). At least one must
    be given; each given limit must be positive. A node budget makes the outcome
    reproducible; a time budget does not."""

    nodes: int | None = DEFAULT_NODES
    millis: float | None = None

    def __post_init__(self) -> None:
        if self.nodes is None and self.millis is None:
            raise BadBudget("a budget needs a limit: nodes, millis or both")
        if self.nodes is not None and (
            isinstance(self.nodes, bool) or not isinstance(self.nodes, int) or self.nodes <= 0
        ):
            raise BadBudget(f"a node budget is a positive integer, not {self.nodes!r}")
        if self.millis is not None and (
            isinstance(self.millis, bool)
            or not isinstance(self.millis, int | float)
            or not self.millis > 0  # also refuses NaN
        ):
            raise BadBudget(
                f"a time budget is a positive number of milliseconds, not {self.millis!r}"
            )


@dataclass(frozen=True, slots=True)
class MoveValue:
    """One legal move and its exact value for the mover's side."""

    move: Move
    value: float


@dataclass(frozen=True, slots=True)
class MoveBounds:
    """One legal move and what is proven of its value for the mover's side: `low <= value <=
    high` (equal when its search finished)."""

    move: Move
    low: float
    high: float

    @property
    def exact(self) -> bool:
        return self.low == self.high


@dataclass(frozen=True, slots=True)
class Solution:
    """The exact value of every legal move of a position, for the side of the seat to play.

    `moves` are in the engine's canonical order; `best` is the first of them with the
    highest value (the tie rule of max^n, and used with two sides too); `value` is the
    position's value, `best`'s. `line` is a best line from the position to the end of the
    round (`best` first; forced draws and passes included), along which every seat plays a
    move of the value the search proved, so playing it out gains exactly `value`: with two
    sides, at each position the first move in canonical order of the position's value;
    with three, the move max^n chose. Both are definite, so both backends give the same
    line (and everything else here but `nodes`)."""

    side: int
    """The side of the seat to play, whose values these are."""
    moves: tuple[MoveValue, ...]
    best: Move
    value: float
    line: tuple[Move, ...]
    nodes: int
    """Positions visited, the line's included. The kernel's table is not Python's (fixed
    size, other replacement), so the two backends visit different numbers of positions."""

    def value_of(self, move: Move) -> float:
        """The value of one legal move (KeyError if it is not legal here)."""
        for mv in self.moves:
            if mv.move == move:
                return mv.value
        raise KeyError(f"{move} is not a legal move of this position")


class NotSolved(Exception):
    """The budget ran out before every move's value was proven.

    Not an error in the input: the position is lawful, the budget too small for it. Carries
    what is proven: each legal move's bounds (exact for the moves whose search finished), and
    bounds on the position's value (the best move's)."""

    def __init__(self, side: int, moves: tuple[MoveBounds, ...], nodes: int, reason: str):
        self.side = side
        self.moves = moves
        self.nodes = nodes
        self.reason = reason
        """``"nodes"`` or ``"millis"``: which limit ran out."""
        self.low = max(m.low for m in moves)
        """The position's value is at least this (the mover can always play the move whose
        lower bound it is)."""
        self.high = max(m.high for m in moves)
        """... and at most this."""
        exact = sum(m.exact for m in moves)
        super().__init__(
            f"not solved: the {reason} budget ran out after {nodes} nodes, with {exact} of "
            f"{len(moves)} moves exact; the position's value is in [{self.low}, {self.high}]"
        )


class _OutOfBudget(Exception):
    """Raised inside the search when the budget runs out; `solve` turns it into NotSolved."""


# A search node: the layout (never changed once made: a child places on a copy), every
# seat's hand, whose turn it is, the pending drawn tile (-1 none), how many boneyard tiles
# have been drawn, and per side the points still needed to reach the target (<= 0 once a
# side has reached it, which ends the round).
_Node = tuple[Layout, tuple[int, ...], int, int, int, tuple[int, ...]]
_Key = tuple[object, ...]
_Entry = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
"""A table entry: its payload (two sides: low, high, best move's index; three: each side's
gain, the chosen move's index), then per side `reach` and `over` (`_Search`'s docstring).
`_Search.lookup` gives the same shape with, instead of those two, the lowest positive need
and the highest need at a win (<= 0; _NO_WIN if none) that the entry's lines reach from the
needs looked up."""

_NO_WIN: Final = -(1 << 62)

_ENTRIES_PER_KEY: Final = 16
"""At most this many results a position, each for its own range of scores (near a target
one position is reached with scores in several ranges, and each range is searched once)."""

_ARM: Final = tuple(
    2 * v + IS_DOUBLE[slot >> 3] if v >= 0 else -1 for slot, v in enumerate(SLOT_VALUE)
)
"""An open side as an arm of the layout, by slot: its value, and whether its tile is a double
(only a later double's line_b can be such an arm; the Sniff's sides are not arms)."""


class _Search:
    """One solve's search: the fixed facts of the round, the table and the counters.

    **Scores and the table.** A node's future depends on the scores only through the wins
    at the target, and a search result rests only on the lines it explored (alpha-beta's
    proof, or max^n's whole subtree). Along each of those lines each side's points still
    needed fell from its need at the node; the line ended as it did as long as every need
    stayed positive where it did and the winning side's (if one won) fell to 0 or below
    where it did. Shifting a side's need at the node by d shifts its whole line by d, so
    the result holds for every need n with `reach < n <= over`, where `reach` is the most
    points the side scored without winning on those lines and `over` the fewest with which
    it won (unbounded if it never won). The table keeps each result with these two per
    side, so that the same position reached with other scores shares the entry whenever
    its needs lie in that range (the common case: far from the target every result holds).
    To find them, the search keeps `lowest` (per side the lowest positive need reached) and
    `won` (the highest need at a win) over the lines searched since the innermost node
    with a table entry was entered.
    """

    def __init__(self, state: PlayoutState, budget: Budget) -> None:
        self.seats = state.seats
        self.sides = team_count(state.seats)
        self.teams = tuple(team_of(s, state.seats) for s in range(state.seats))
        self.bone = state.boneyard
        self.bone_pips = tuple(
            sum(PIPS[t] for t in state.boneyard[i:]) for i in range(len(state.boneyard) + 1)
        )
        self.table: dict[_Key, list[_Entry]] = {}
        """key -> [(payload, reach, over), ...] (class docstring), the newest first."""
        self.lowest: tuple[int, ...] = ()
        self.won: tuple[int, ...] = ()
        self.history: dict[int, int] = {}
        """Per move (by id: moves are interned, and a dataclass hashes slowly), how often it
        was best or cut the search off (for the move order)."""
        self.nodes = 0
        self.node_limit = budget.nodes
        self.deadline = (
            None if budget.millis is None else time.perf_counter() + budget.millis / 1000.0
        )
        self.check_at = 0
        self.reason = ""
        self._next_check()

    # -- the budget ----------------------------------------------------------------------

    def _next_check(self) -> None:
        nxt = self.nodes + _TIME_CHECK_EVERY if self.deadline is not None else 1 << 62
        if self.node_limit is not None:
            nxt = min(nxt, self.node_limit)
        self.check_at = nxt

    def _check(self) -> None:
        """Called when `nodes` reaches `check_at`: stop, or set the next check."""
        if self.node_limit is not None and self.nodes >= self.node_limit:
            self.reason = "nodes"
            raise _OutOfBudget
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.reason = "millis"
            raise _OutOfBudget
        self._next_check()

    # -- the rules: one step --------------------------------------------------------------

    def step(self, node: _Node, move: Move) -> tuple[int, tuple[int, ...] | None, _Node]:
        """Make `move` (legal) at `node`: the points it scores for the mover's side, and
        either the round's end (per side the deductions taken: none after a win at the
        target) or the next node. The round goes on and ends exactly as
        `playout.python_playout` (and `Match.apply`) make it."""
        layout, hands, turn, _, pos, needs = node
        kind = move.kind
        if kind <= MoveKind.PLACE:
            tile = move.tile
            assert tile is not None
            child = layout.copy()
            got = points_for(child.place(move))
            hand = hands[turn] ^ BIT[tile]
            hands = (*hands[:turn], hand, *hands[turn + 1 :])
            if got:
                side = self.teams[turn]
                need = needs[side] - got
                needs = (*needs[:side], need, *needs[side + 1 :])
                if need <= 0:
                    return got, (0,) * self.sides, (child, hands, turn, -1, pos, needs)
            if not hand or (pos == len(self.bone) and not any(h & child.playable for h in hands)):
                return got, self._deductions(hands), (child, hands, turn, -1, pos, needs)
            return got, None, (child, hands, (turn + 1) % self.seats, -1, pos, needs)
        if kind is MoveKind.DRAW:
            got_tile = self.bone[pos]
            pos += 1
            hands = (*hands[:turn], hands[turn] | BIT[got_tile], *hands[turn + 1 :])
            if BIT[got_tile] & layout.playable:
                return 0, None, (layout, hands, turn, got_tile, pos, needs)
            if pos == len(self.bone) and not any(h & layout.playable for h in hands):
                return 0, self._deductions(hands), (layout, hands, turn, -1, pos, needs)
            return 0, None, (layout, hands, turn, -1, pos, needs)
        return 0, None, (layout, hands, (turn + 1) % self.seats, -1, pos, needs)

    def settle(self, node: _Node) -> _Node:
        """`node` after the passes that are forced there: with the boneyard empty, each seat
        from the one to play that holds no placeable tile passes, until one does (the round
        is not blocked, or `step` would have ended it). A pass changes nothing but the turn,
        so the search skips those nodes; `step` itself makes every pass, for the best line."""
        layout, hands, turn, drawn, pos, needs = node
        if drawn >= 0 or pos < len(self.bone):
            return node
        playable = layout.playable
        if hands[turn] & playable:
            return node
        while True:
            turn = (turn + 1) % self.seats
            if hands[turn] & playable:
                return (layout, hands, turn, -1, pos, needs)

    def _deductions(self, hands: tuple[int, ...]) -> tuple[int, ...]:
        """Per side, what the round's count takes from it (§7: each hand rounded alone)."""
        out = [0] * self.sides
        for seat, hand in enumerate(hands):
            out[self.teams[seat]] += deduction(pips_of(hand))
        return tuple(out)

    @staticmethod
    def key(node: _Node) -> _Key:
        """The canonical state but for the scores: everything else the rest of the round
        depends on, and nothing more (for max^n: `exact_key`).

        The layout counts by its counted-ends sum, its Sniff (the tile, its covered sides
        and its rule) and its other open sides as a multiset of arms: each arm by its value
        and whether its tip is a later double (covering it takes 2·d off the ends, not d).
        Two layouts alike in these have the same futures, move for move (a move on one arm
        and the same tile on a like arm of the other count the same), so they have the same
        value; which tiles lie where, and in what order they came, does not matter. The
        scores are handled by the table (class docstring)."""
        layout, hands, turn, drawn, pos, _ = node
        sniff = layout.sniff
        arms = sorted([_ARM[s] for s in layout.targets if s >> 3 != sniff])
        return (
            layout.ends,
            sniff,
            layout.covered[sniff] if sniff >= 0 else -1,
            id(layout.rule),  # the rules are module constants; a dataclass hashes slowly
            *arms,
            -1,
            hands,
            turn,
            drawn,
            pos,
        )

    @staticmethod
    def exact_key(node: _Node) -> _Key:
        """The canonical state but for the scores, as max^n needs it: the layout by its
        covered sides, Sniff, Sniff's rule and stubs (its open sides and counted ends follow
        from these; the order of its placements does not matter). Not by arms as `key`:
        like layouts list their like moves in other orders, and max^n's tie rule follows the
        order, so like layouts may have other max^n values for the sides not to play."""
        layout, hands, turn, drawn, pos, _ = node
        return (
            tuple(layout.covered),
            layout.sniff,
            id(layout.rule),  # the rules are module constants; a dataclass hashes slowly
            layout.stubs,
            hands,
            turn,
            drawn,
            pos,
        )

    def lookup(self, key: _Key, needs: tuple[int, ...]) -> _Entry | None:
        """The stored result for the node `key` if it holds at `needs`, with the lowest
        positive need and highest winning need its lines reach from these; else None."""
        entries = self.table.get(key)
        if entries is None:
            return None
        if self.sides == 2:  # the common case, written out: this runs at every node
            n0, n1 = needs
            for payload, reach, over in entries:
                if reach[0] < n0 <= over[0] and reach[1] < n1 <= over[1]:
                    return payload, (n0 - reach[0], n1 - reach[1]), (n0 - over[0], n1 - over[1])
            return None
        for payload, reach, over in entries:
            if all(r < n <= o for n, r, o in zip(needs, reach, over, strict=True)):
                lowest = tuple(n - r for n, r in zip(needs, reach, strict=True))
                return payload, lowest, tuple(n - o for n, o in zip(needs, over, strict=True))
        return None

    def enter(self, needs: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Start tracking the lines of a node with these needs; returns what `leave` needs."""
        outer = self.lowest, self.won
        self.lowest = needs
        self.won = (_NO_WIN,) * self.sides
        return outer

    def leave(self, outer: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
        """The node's lines are lines of the enclosing node too."""
        self.rests_on(*outer)

    def rests_on(self, lowest: tuple[int, ...], won: tuple[int, ...]) -> None:
        """The result being found rests on lines reaching these needs (a table entry's)."""
        mine, high = self.lowest, self.won
        if len(mine) == 2:  # the common case, written out: this runs at every node
            a, b = mine
            c, d = lowest
            if c < a or d < b:
                self.lowest = (c if c < a else a, d if d < b else b)
            a, b = high
            c, d = won
            if c > a or d > b:
                self.won = (c if c > a else a, d if d > b else b)
            return
        if lowest != mine:
            self.lowest = tuple(map(min, lowest, mine))
        if won != high:
            self.won = tuple(map(max, won, high))

    def store(self, key: _Key, needs: tuple[int, ...], payload: tuple[int, ...]) -> None:
        """Keep a result found at `needs`, its lines having reached `lowest` and `won`."""
        reach = tuple(n - low for n, low in zip(needs, self.lowest, strict=True))
        over = tuple(n - w for n, w in zip(needs, self.won, strict=True))
        entries = self.table.get(key)
        if entries is None:
            self.table[key] = [(payload, reach, over)]
            return
        # The entries holding at `needs` are superseded (the one `lookup` gave is part of
        # this result); the others hold elsewhere and stay, the newest first.
        kept = [
            e
            for e in entries
            if not all(r < n <= o for n, r, o in zip(needs, e[1], e[2], strict=True))
        ]
        self.table[key] = [(payload, reach, over), *kept[: _ENTRIES_PER_KEY - 1]]

    def scored(self, side: int, need: int) -> None:
        """A line searched brought `side` down to `need` points still needed."""
        if need > 0:
            lowest = self.lowest
            if need < lowest[side]:
                self.lowest = (*lowest[:side], need, *lowest[side + 1 :])
        else:
            won = self.won
            if need > won[side]:
                self.won = (*won[:side], need, *won[side + 1 :])

    def legal(self, node: _Node) -> list[Move]:
        layout, hands, turn, drawn, pos, _ = node
        return legal_moves_of(layout, hands[turn], drawn, len(self.bone) - pos)

    def gain_bounds(self, node: _Node) -> tuple[tuple[int, int], ...]:
        """Per side, bounds on its gain from `node` to the round's end, from counting alone:
        no more than MAX_PLACEMENT_POINTS for each tile its seats may still place, no worse
        than losing its seats' hands with the whole rest of the boneyard drawn into each."""
        _, hands, _, _, pos, _ = node
        spare = len(self.bone) - pos
        rest = self.bone_pips[pos]
        out = []
        for side in range(self.sides):
            seats = range(side, self.seats, self.sides)
            tiles = spare + sum(hands[s].bit_count() for s in seats)
            worst = sum(deduction(pips_of(hands[s]) + rest) for s in seats)
            out.append((-worst, MAX_PLACEMENT_POINTS * tiles))
        return tuple(out)

    # -- two sides: negamax with alpha-beta -------------------------------------------------

    def value_bounds(self, node: _Node) -> tuple[int, int]:
        """Bounds on `node`'s value for the side to play, from the table if it holds the node
        (with more than one move), else from counting."""
        side = self.teams[node[2]]
        bounds = self.gain_bounds(node)
        low = bounds[side][0] - bounds[1 - side][1]
        high = bounds[side][1] - bounds[1 - side][0]
        entry = self.lookup(self.key(node), node[5])
        if entry is not None:
            low, high = max(low, entry[0][0]), min(high, entry[0][1])
        return low, high

    def negamax(self, node: _Node, alpha: int, beta: int) -> int:
        """The node's value for the side to play, fail-soft: exact if it lies strictly inside
        (alpha, beta), else a bound on the side it fell (<= alpha: an upper bound; >= beta:
        a lower bound)."""
        self.nodes += 1
        if self.nodes >= self.check_at:
            self._check()
        moves = self.legal(node)
        side = self.teams[node[2]]
        if len(moves) == 1:
            return self._move_value(node, moves[0], side, alpha, beta)
        key = self.key(node)
        needs = node[5]
        outer = self.enter(needs)
        entry = self.lookup(key, needs)
        first = -1
        low, high = -(1 << 62), 1 << 62
        if entry is not None:
            (low, high, first), lowest, won = entry
            self.rests_on(lowest, won)
            if low >= beta or low == high or high <= alpha:
                self.leave(outer)
                return low if low >= beta or low == high else high
        a, b = max(alpha, low), min(beta, high)
        a0, b0 = a, b
        best, best_i = -(1 << 62), -1
        for i in self._order(node[0], moves, first):
            v = self._move_value(node, moves[i], side, a, b)
            if v > best:
                best, best_i = v, i
                if v > a:
                    a = v
                    if a >= b:
                        break
        if best > a0:
            mid = id(moves[best_i])
            self.history[mid] = self.history.get(mid, 0) + 1
        # Fail-soft: `best` is exact inside the window searched (a0, b0), a bound outside it.
        if best <= a0:
            high, best_i = min(high, best), first
        elif best >= b0:
            low = max(low, best)
        else:
            low = high = best
        self.store(key, needs, (low, high, best_i))
        self.leave(outer)
        return best

    def _move_value(self, node: _Node, move: Move, side: int, alpha: int, beta: int) -> int:
        """`move`'s value for `side` (the mover's), searched in the window (alpha, beta)."""
        got, end, child = self.step(node, move)
        if got:
            self.scored(side, child[5][side])
        if end is not None:
            return got - end[side] + end[1 - side]
        child = self.settle(child)
        if self.teams[child[2]] == side:
            return got + self.negamax(child, alpha - got, beta - got)
        return got - self.negamax(child, got - beta, got - alpha)

    def _order(self, layout: Layout, moves: list[Move], first: int) -> list[int]:
        """Indices of `moves` in the order to search them: the table's best first, then by
        immediate points (most first), then by how often the move has been best or cut the
        search off elsewhere (the history heuristic), then in canonical order."""
        if not moves[0].is_placement:
            return [0]
        history = self.history
        keys = [
            (-points_for(layout.ends_after(m)), -history.get(id(m), 0), i)
            for i, m in enumerate(moves)
        ]
        keys.sort()
        order = [k[2] for k in keys]
        if first >= 0:
            order.remove(first)
            order.insert(0, first)
        return order

    # -- three sides: max^n ---------------------------------------------------------------

    def maxn(self, node: _Node) -> tuple[int, ...]:
        """Every side's gain from `node` to the round's end when each seat in turn plays the
        first move, in canonical order, of the highest `value_for_side` for its side."""
        self.nodes += 1
        if self.nodes >= self.check_at:
            self._check()
        moves = self.legal(node)
        if len(moves) == 1:
            return self.move_gains(node, moves[0])
        key = self.exact_key(node)
        needs = node[5]
        entry = self.lookup(key, needs)
        if entry is not None:
            self.rests_on(entry[1], entry[2])
            return entry[0][:-1]
        outer = self.enter(needs)
        side = self.teams[node[2]]
        best: tuple[int, ...] = ()
        best_i = -1
        top = -(1 << 62)
        for i, move in enumerate(moves):
            gains = self.move_gains(node, move)
            # value_for_side(gains, side) scaled by (sides - 1), in integers: no float ties.
            score = self.sides * gains[side] - sum(gains)
            if score > top:
                top, best, best_i = score, gains, i
        self.store(key, needs, (*best, best_i))
        self.leave(outer)
        return best

    def move_gains(self, node: _Node, move: Move) -> tuple[int, ...]:
        """Every side's gain from `node` on when `move` is made there, then max^n."""
        got, end, child = self.step(node, move)
        side = self.teams[node[2]]
        if got:
            self.scored(side, child[5][side])
        gains = [-d for d in end] if end is not None else list(self.maxn(self.settle(child)))
        gains[side] += got
        return tuple(gains)


def _root(state: PlayoutState) -> _Node:
    search_needs = tuple(state.target - s for s in state.scores)
    return (state.layout(), state.hands, state.turn, state.drawn, 0, search_needs)


def is_perfect_information(state: PlayoutState) -> bool:
    """Whether every seat knows every tile's place: two seats and an empty boneyard (each
    player's hand is then every tile neither on the layout nor in its own hand)."""
    return state.seats == 2 and not state.boneyard


def solve(
    state: PlayoutState,
    budget: Budget | None = None,
    *,
    double_dummy: bool = False,
    backend: str | None = None,
) -> Solution:
    """The exact value of every legal move of `state` for the side of the seat to play.

    Raises `NotSolved` (with the bounds proven) when `budget` (default `Budget()`) runs out,
    `BadBudget` for a budget that is not a `Budget`, and `NotPerfectInformation` for a state
    with hidden tiles (a boneyard, or more than two seats) unless `double_dummy` says that
    the value of the game in which every seat sees every tile is what is wanted.
    `backend` ("c" or "python"; default `backend.BACKEND`) chooses the search: the kernel's
    or this module's (module docstring).
    """
    if not isinstance(state, PlayoutState):
        raise TypeError(f"solve takes a PlayoutState, not {type(state).__name__}")
    if budget is None:
        budget = Budget()
    elif not isinstance(budget, Budget):
        raise BadBudget(f"give the budget as a Budget(nodes=..., millis=...), not {budget!r}")
    if not double_dummy and not is_perfect_information(state):
        raise NotPerfectInformation(
            f"with {state.seats} seats and {len(state.boneyard)} tiles in the boneyard the "
            "players do not see every tile: pass double_dummy=True for the value of the game "
            "in which every seat does (each seat's real choices may be worth less)"
        )
    if _backend(backend) == "c":
        return _kernel_solve(state, budget)
    return _solve_in(_Search(state, budget), state)


def _backend(backend: str | None) -> str:
    chosen = BACKEND if backend is None else backend
    if chosen not in ("c", "python"):
        raise ValueError(f"backend {backend!r}: use 'c' or 'python'")
    if chosen == "c" and _kernel is None:
        raise RuntimeError("the kernel sniff._kernel is not built")
    return chosen


_KERNEL_NODE_LIMIT: Final = 1 << 62
"""A node budget beyond any search, and within the kernel's 64-bit counter."""


def _kernel_solve(state: PlayoutState, budget: Budget) -> Solution:
    """`solve` by the kernel's search: its values, line and bounds made into this module's
    `Solution` or `NotSolved` exactly as the Python search makes them."""
    nodes_limit = 0 if budget.nodes is None else min(budget.nodes, _KERNEL_NODE_LIMIT)
    millis = 0.0 if budget.millis is None else float(budget.millis)
    reason, nodes, codes, lows, highs, line = _kernel.solve(state._packed, nodes_limit, millis)
    moves = [move_of(c) for c in codes]
    side = team_of(state.turn, state.seats)
    if reason == 0:
        if state.sides == 2:
            values = [float(v) for v in lows]
        else:
            values = [value_for_side(g, side) for g in lows]
        value = max(values)
        return Solution(
            side,
            tuple(MoveValue(m, v) for m, v in zip(moves, values, strict=True)),
            moves[values.index(value)],
            value,
            tuple(move_of(c) for c in line),
            nodes,
        )
    bounds = []
    for move, low, high in zip(moves, lows, highs, strict=True):
        if state.sides == 2:
            bounds.append(MoveBounds(move, float(low), float(high)))
        elif low == high:
            v = value_for_side(low, side)
            bounds.append(MoveBounds(move, v, v))
        else:  # every side's gain in [low, high]: as _maxn_not_solved bounds the value
            n = state.sides - 1
            others_high = sum(high) - high[side]
            others_low = sum(low) - low[side]
            bounds.append(
                MoveBounds(move, low[side] - others_high / n, high[side] - others_low / n)
            )
    raise NotSolved(side, tuple(bounds), nodes, "nodes" if reason == 1 else "millis")


def _solve_in(search: _Search, state: PlayoutState) -> Solution:
    """Solve `state` with `search` (made for it, or for the same position at other scores:
    the tests solve with a table filled at other scores, which must change nothing)."""
    root = _root(state)
    search.enter(root[5])
    moves = search.legal(root)
    side = search.teams[state.turn]
    if search.sides == 2:
        return _solve_two(search, root, moves, side)
    return _solve_maxn(search, root, moves, side)


def _solve_two(search: _Search, root: _Node, moves: list[Move], side: int) -> Solution:
    values: list[int | None] = [None] * len(moves)
    try:
        for i in search._order(root[0], moves, -1):
            values[i] = search._move_value(root, moves[i], side, -(1 << 62), 1 << 62)
    except _OutOfBudget:
        raise _two_not_solved(search, root, moves, side, values) from None
    exact = [v for v in values if v is not None]
    value = max(exact)
    best = exact.index(value)
    try:
        line = _line_two(search, root, moves[best], value)
    except _OutOfBudget:
        raise _two_not_solved(search, root, moves, side, values) from None
    return Solution(
        side,
        tuple(MoveValue(m, float(v)) for m, v in zip(moves, exact, strict=True)),
        moves[best],
        float(value),
        line,
        search.nodes,
    )


def _two_not_solved(
    search: _Search, root: _Node, moves: list[Move], side: int, values: list[int | None]
) -> NotSolved:
    """What the search proved before the budget ran out: the finished moves' values, and
    for the others their child's bounds from the table or from counting."""
    out = []
    for move, v in zip(moves, values, strict=True):
        if v is not None:
            out.append(MoveBounds(move, float(v), float(v)))
            continue
        got, end, child = search.step(root, move)
        if end is not None:
            exact = got - end[side] + end[1 - side]
            out.append(MoveBounds(move, float(exact), float(exact)))
            continue
        child = search.settle(child)
        low, high = search.value_bounds(child)
        if search.teams[child[2]] != side:
            low, high = -high, -low
        out.append(MoveBounds(move, float(got + low), float(got + high)))
    return NotSolved(side, tuple(out), search.nodes, search.reason)


def _line_two(search: _Search, node: _Node, move: Move, value: int) -> tuple[Move, ...]:
    """The canonical best line from the root: `move` (of value `value`), then at each node
    the first move in canonical order whose value equals the node's, to the round's end
    (each tested by a null-window search: values are integers with two sides)."""
    line = [move]
    side = search.teams[node[2]]
    while True:
        got, end, child = search.step(node, move)
        if end is not None:
            return tuple(line)
        value -= got
        if search.teams[child[2]] != side:
            value = -value
        node, side = child, search.teams[child[2]]
        moves = search.legal(node)
        move = moves[0] if len(moves) == 1 else _best_of(search, node, moves, side, value)
        line.append(move)


def _best_of(search: _Search, node: _Node, moves: list[Move], side: int, value: int) -> Move:
    """The first move of `node` in canonical order worth `value` (its value) for `side`, as
    a null-window search proves it: the canonical best line, whichever table found the
    values (the kernel's is another, and its line must be this one)."""
    for move in moves:
        if search._move_value(node, move, side, value - 1, value) >= value:
            return move
    raise AssertionError("no move reaches the value the search proved")  # pragma: no cover


def _solve_maxn(search: _Search, root: _Node, moves: list[Move], side: int) -> Solution:
    gains: list[tuple[int, ...] | None] = [None] * len(moves)
    try:
        for i, move in enumerate(moves):
            gains[i] = search.move_gains(root, move)
    except _OutOfBudget:
        raise _maxn_not_solved(search, root, moves, side, gains) from None
    exact = [g for g in gains if g is not None]
    values = [value_for_side(g, side) for g in exact]
    value = max(values)
    best = values.index(value)
    return Solution(
        side,
        tuple(MoveValue(m, v) for m, v in zip(moves, values, strict=True)),
        moves[best],
        value,
        _line_maxn(search, root, moves[best]),
        search.nodes,
    )


def _maxn_not_solved(
    search: _Search,
    root: _Node,
    moves: list[Move],
    side: int,
    gains: list[tuple[int, ...] | None],
) -> NotSolved:
    """The finished moves exactly; the others by the bounds of every side's gain from
    counting (or exactly, when the child is in the table)."""
    out = []
    for move, g in zip(moves, gains, strict=True):
        if g is None:
            got, end, child = search.step(root, move)
            if end is not None:
                g = tuple(got * (s == side) - d for s, d in enumerate(end))
            else:
                child = search.settle(child)
                entry = search.lookup(search.exact_key(child), child[5])
                if entry is not None:
                    g = tuple(x + got * (s == side) for s, x in enumerate(entry[0][:-1]))
                else:
                    bounds = search.gain_bounds(child)
                    lows = [lo + got * (s == side) for s, (lo, _) in enumerate(bounds)]
                    highs = [hi + got * (s == side) for s, (_, hi) in enumerate(bounds)]
                    others_high = sum(highs) - highs[side]
                    others_low = sum(lows) - lows[side]
                    n = search.sides - 1
                    out.append(
                        MoveBounds(move, lows[side] - others_high / n, highs[side] - others_low / n)
                    )
                    continue
        v = value_for_side(g, side)
        out.append(MoveBounds(move, v, v))
    return NotSolved(side, tuple(out), search.nodes, search.reason)


def _line_maxn(search: _Search, node: _Node, move: Move) -> tuple[Move, ...]:
    """The line max^n chose: `move`, then the table's choice (or the only move) at each node."""
    line = [move]
    while True:
        _, end, node = search.step(node, move)
        if end is not None:
            return tuple(line)
        moves = search.legal(node)
        if len(moves) == 1:
            move = moves[0]
        else:
            entry = search.lookup(search.exact_key(node), node[5])
            if entry is None:  # pragma: no cover - every searched node with a choice is stored
                search.maxn(node)
                entry = search.lookup(search.exact_key(node), node[5])
                assert entry is not None
            move = moves[entry[0][-1]]
        line.append(move)


__all__ = [
    "DEFAULT_NODES",
    "MAX_PLACEMENT_POINTS",
    "BadBudget",
    "Budget",
    "MoveBounds",
    "MoveValue",
    "NotPerfectInformation",
    "NotSolved",
    "Solution",
    "is_perfect_information",
    "solve",
]
