"""The `ismcts` bot: information-set Monte Carlo tree search over its seat's view.

Single-observer ISMCTS (Cowling, Powley & Whitehouse 2012, "SO-ISMCTS"). One
tree, seen from the bot's seat: its root is the bot's decision, an edge is an
action as every seat sees it (a placement, a draw, a pass), so a node stands
for the bot's information set after that sequence of actions. The tiles a
draw brings are not edges: they come from each iteration's determinization.

**An iteration**

1. draws a determinization: the hidden tiles (other hands, the boneyard
   order) from `sampler.Sampler`, exactly uniform among the deals consistent
   with the view, turned into a `PlayoutState` by rollout.py's
   `_Determinizer`. Only the view is read, so no hidden tile is;
2. descends from the root, at each node choosing among the actions
   *available in this determinization* by UCB1 with availability counts
   (``mean + c * sqrt(ln(available) / visits)``, `mean` the child's average
   value for the side that moves into it, `available` how often the child
   was available when its parent was visited), until an action never tried
   from that node: it expands that one child (a random one among the
   untried). A node with one available action (a forced draw or pass, the
   one placeable tile) is gone through and expanded on the way: there is
   nothing to choose there;
3. evaluates the position reached: the round's end if it ended in the tree;
   with two seats and an empty boneyard (every tile known to both players)
   the exact solver's value (`solver.solve`, `SOLVER_NODES` nodes at most,
   cached per node and deal; a playout when it is `NotSolved`); otherwise a
   playout of the rest of the round by the greedy policy for every seat,
   run by the kernel `BATCH` leaves at a time (several determinizations per
   call);
4. backs up each side's round net result, from the root's decision to the end
   of the round (rollout.py's equity: the side's points minus its
   deductions, minus the others' — with three seats minus the mean of the two
   others), adding to each node on the path the value of the side whose seat
   moved into it. Partners share a side, so with four seats a seat's partner
   is searched as an ally.

A visit is counted when an iteration passes through a node, its value when
the batch's playouts come back, so the iterations of one batch are spread
over the tree rather than all taking the same path.

**The root prior** (progressive bias; Chaslot et al. 2008, and the "prior
knowledge" of Gelly & Silver 2007): before its iterations the tree plays
`PRIOR_ROLLOUTS` flat rollouts a legal move at the root, the rollout bot's
analysis (rollout.py: every move on the same sampled deals and playout seeds,
so the moves' differences are paired), and starts each root child with
`PRIOR_WEIGHT` visits at that equity. UCB1 then spends the iterations on the
moves it cannot yet tell apart from the best, and the tree below them refines
the greedy play the rollouts assumed. Without it the root's moves are told
apart by a few hundred unpaired iterations, noisier than the rollout bot's
paired estimate of the same thing, the likely reason the tree alone did not
beat the rollout bot (docs/benchmarks.md, "The search bot").
`prior=0` turns it off.

**The choice** is the root action visited most (the prior's visits
included); ties go to the higher mean value, then to the first in the
engine's canonical order. A forced move, and
a placement that reaches the target at once, are played without searching
(as the `rollout` bot does).

**Budget**: `playouts` iterations a move (each one playout, or one exact or
end-of-round value), or `millis` of wall time (whole batches until the time
is up), or both (whichever ends first), refused as rollout.py's
`check_budget` refuses. A budget in playouts is reproducible from the seed.
The root prior's rollouts are not counted in `playouts`; they are made in
full first, and their time counts in `millis`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from sniff import playout
from sniff.match import Phase, legal_moves_of
from sniff.moves import Move
from sniff.playout import PlayoutState, Policy
from sniff.rollout import (
    BATCH as ROLLOUT_BATCH,
)
from sniff.rollout import (
    MAX_ROLLOUTS,
    MIN_ROLLOUTS,
    NotToPlay,
    _Determinizer,
    _paired_batch,
    _winning_move,
    check_budget,
    policy_named,
)
from sniff.rules import value_for_side
from sniff.sampler import Sampler
from sniff.solver import Budget, NotSolved, _Node, _root, _Search, solve
from sniff.view import SeatView

BOT_PLAYOUTS: Final = 500
"""The `ismcts` bot's default budget per move: under 100 ms a move on the development
machine (`scripts/bench_ismcts.py` measures it)."""
BATCH: Final = 8
"""Leaves played out per round trip to the playout kernel."""
EXPLORATION: Final = 50.0
"""UCB1's exploration constant, in points of round net result (the values backed up).
In an ad hoc duplicate run against the rollout bot at 300 playouts (2 seats, 200 deals
each, not kept as a script) 25, 50 and 100 did equally well within the noise (95% half
widths of 3 points a round) and 10 worse; 50 did best."""
SOLVER_NODES: Final = 400
"""The exact solver's node budget at a leaf: small, since it is pure Python and runs once
per iteration that reaches a new endgame position."""

PRIOR_ROLLOUTS: Final = 300
"""Flat rollouts a legal move at the root before the tree's iterations (`_Tree.seed_root`):
common random numbers, so the first estimate of the root's moves is paired and precise;
about a third of the time per move at the default budget."""
PRIOR_WEIGHT: Final = 50
"""The visits those rollouts count for in each root child: UCB1 then treats the flat equity
as 50 iterations' worth, so the tree spends its own iterations on the moves it cannot yet
tell apart from the best and below them refines what greedy play would have made."""

_STEPS: Final = Budget(nodes=1)
"""The budget of the `_Search` a tree makes only for its `step` (the rules of one action,
as the playouts play them): it never searches."""


class _TreeNode:
    """One information set of the bot: reached by `move`, made by a seat of `side`."""

    __slots__ = ("avail", "children", "move", "side", "total", "visits")

    def __init__(self, move: Move | None, side: int) -> None:
        self.move = move
        self.side = side
        self.visits = 0
        self.avail = 1
        self.total = 0.0
        self.children: dict[int, _TreeNode] = {}
        """By the move's id: moves are interned (moves.py), and a dataclass hashes slowly."""


@dataclass(frozen=True, slots=True)
class RootAction:
    """One of the bot's legal moves after the search: how often it was tried (the root
    prior's weight included) and what it was worth on average to the bot's side (its equity
    under the search's play, the prior's rollouts counted at that weight)."""

    move: Move
    visits: int
    mean: float


@dataclass(frozen=True, slots=True)
class Searched:
    """The root's actions in canonical order, the one chosen, and the iterations made."""

    actions: tuple[RootAction, ...]
    best: Move
    playouts: int
    seed: int


def check_prior(prior: int, prior_weight: int) -> None:
    """Refuse a root prior that is neither off (0) nor `MIN_ROLLOUTS` to `MAX_ROLLOUTS`
    rollouts a move at a weight of 1 visit or more."""
    if isinstance(prior, bool) or not isinstance(prior, int):
        raise ValueError(f"a root prior is a whole number of rollouts a move, not {prior!r}")
    if prior and not MIN_ROLLOUTS <= prior <= MAX_ROLLOUTS:
        raise ValueError(
            f"a root prior is 0 (none) or {MIN_ROLLOUTS} to {MAX_ROLLOUTS:,} rollouts a move, "
            f"not {prior!r}"
        )
    if prior and prior_weight < 1:
        raise ValueError(f"a root prior weighs 1 visit or more, not {prior_weight!r}")


def _best(actions: Sequence[RootAction]) -> Move:
    """The most visited; ties to the higher mean, then the first in canonical order."""
    top = max(range(len(actions)), key=lambda i: (actions[i].visits, actions[i].mean, -i))
    return actions[top].move


def search(
    view: SeatView,
    *,
    playouts: int | None = None,
    millis: float | None = None,
    seed: int = 0,
    exploration: float = EXPLORATION,
    solver_nodes: int = SOLVER_NODES,
    policy: str | Policy = Policy.GREEDY,
    prior: int = PRIOR_ROLLOUTS,
    prior_weight: int = PRIOR_WEIGHT,
    backend: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Searched:
    """The search of the module text from `view`, the seat to play's own.

    Without a budget, `BOT_PLAYOUTS`. Raises `NotToPlay` unless the view's seat is
    to play, `BadBudget` for a budget out of bounds, and the sampler's
    `ImpossibleView` for a view no real match can produce."""
    check_budget(playouts, millis, "playouts per move")
    if not math.isfinite(exploration) or exploration < 0:
        raise ValueError(f"the exploration constant is a number >= 0, not {exploration!r}")
    Budget(nodes=solver_nodes)  # refuses a node budget that is not a positive integer
    if playouts is None and millis is None:
        playouts = BOT_PLAYOUTS
    if view.viewer is None or view.phase is not Phase.PLAYING or view.turn != view.viewer:
        raise NotToPlay("the search is made for the seat to play, from its own view")
    check_prior(prior, prior_weight)
    tree = _Tree(view, random.Random(seed), exploration, solver_nodes, policy_named(policy))
    wanted = MAX_ROLLOUTS if playouts is None else playouts
    deadline = None if millis is None else clock() + millis / 1000.0
    if prior:
        tree.seed_root(prior, prior_weight, backend)
    done = 0
    while done < wanted:
        size = min(BATCH, wanted - done)
        tree.batch(size, backend)
        done += size
        if deadline is not None and done >= MIN_ROLLOUTS and clock() >= deadline:
            break
    children = tree.root.children
    actions = []
    for move in view.legal:
        node = children.get(id(move))
        if node is None or not node.visits:
            actions.append(RootAction(move, 0, math.nan))
        else:
            actions.append(RootAction(move, node.visits, node.total / node.visits))
    return Searched(tuple(actions), _best(actions), done, seed)


_Leaf = tuple[list[_TreeNode], list[int], "PlayoutState | None", "list[float] | None"]
"""An iteration waiting for its value: the path from the root, the points each side scored
in the tree, and either the state to play out or every side's value already known."""


class _Tree:
    """The search tree of one decision and what its iterations share."""

    def __init__(
        self,
        view: SeatView,
        rng: random.Random,
        exploration: float,
        solver_nodes: int,
        policy: Policy,
    ) -> None:
        self.view = view
        self.viewer = view.viewer
        self.rng = rng
        self.c = exploration
        self.solver = Budget(nodes=solver_nodes)
        self.policy = policy
        self.sampler = Sampler(view)
        self.determinize = _Determinizer(view)
        self.seats = view.seats
        self.teams = view.teams
        self.sides = max(self.teams) + 1
        assert view.turn is not None
        self.root = _TreeNode(None, self.teams[view.turn])
        self.rules: _Search | None = None
        """The solver's rules of one action (`step`), made on the first determinization."""
        self.exact: dict[tuple[object, ...], float | None] = {}
        """Solved leaves: (node, hands, turn, drawn) -> the mover's value (None: NotSolved)."""

    def batch(self, size: int, backend: str | None) -> None:
        """`size` iterations: descents, then their playouts in one kernel call, then backups."""
        leaves = [
            self.descend(self.determinize.state(self.sampler.sample(self.rng))) for _ in range(size)
        ]
        seeds = [self.rng.getrandbits(64) for _ in range(size)]
        wanted = [i for i, leaf in enumerate(leaves) if leaf[3] is None]
        if wanted:
            states = [s for i in wanted if (s := leaves[i][2]) is not None]
            played = playout.rollouts(
                states,
                self.policy,
                [seeds[i] for i in wanted],
                backend=backend,
            )
            for k, i in enumerate(wanted):
                gains = [p + played.gains[side][k] for side, p in enumerate(leaves[i][1])]
                leaves[i] = (leaves[i][0], leaves[i][1], None, self.values(gains))
        for path, _, _, values in leaves:
            assert values is not None
            for node in path:
                node.total += values[node.side]

    def seed_root(self, prior: int, weight: int, backend: str | None) -> None:
        """Progressive bias at the root: each legal move's child starts with `weight` visits
        at its flat rollout equity (rollout.py's, `prior` common-random-number playouts a
        move on the tree's own determinizations), so the tree refines a paired, low-noise
        first estimate instead of telling the moves apart from a few hundred unpaired
        iterations."""
        view, rng = self.view, self.rng
        side = self.teams[self.viewer] if self.viewer is not None else 0
        moves = view.legal_moves()
        totals = [0.0] * len(moves)
        done = 0
        while done < prior:
            size = min(ROLLOUT_BATCH, prior - done)
            batch = _paired_batch(
                self.sampler, self.determinize, rng, moves, size, self.policy, side, backend
            )
            for i, got in enumerate(batch):
                totals[i] += math.fsum(got)
            done += size
        root = self.root
        for move, total in zip(moves, totals, strict=True):
            child = root.children[id(move)] = _TreeNode(move, side)
            child.visits = child.avail = weight
            child.total = total / prior * weight
        root.visits += weight

    def values(self, gains: Sequence[int]) -> list[float]:
        return [value_for_side(gains, side) for side in range(self.sides)]

    def descend(self, state: PlayoutState) -> _Leaf:
        """Select, expand and step the rules down the tree on one determinization: the path
        and what is needed to value its end (module text)."""
        rng, teams, c = self.rng, self.teams, self.c
        rules = self.rules
        if rules is None:
            rules = self.rules = _Search(state, _STEPS)
        # Its `step` reads the boneyard's order from `bone`, the one thing of the state that
        # differs between determinizations (the rest are the view's public facts).
        rules.bone = state.boneyard
        bone_count = len(state.boneyard)
        at: _Node = _root(state)
        node = self.root
        node.visits += 1
        path: list[_TreeNode] = []
        points = [0] * self.sides
        expanded = False
        while True:
            layout, hands, turn, drawn, pos, _ = at
            legal = legal_moves_of(layout, hands[turn], drawn, bone_count - pos)
            children = node.children
            if len(legal) == 1:
                move = legal[0]
                child = children.get(id(move))
                if child is None:
                    child = children[id(move)] = _TreeNode(move, teams[turn])
                else:
                    child.avail += 1
            else:
                untried = [m for m in legal if id(m) not in children]
                if untried:
                    if expanded:
                        return self.leaf(path, points, node, state, at)
                    expanded = True
                    move = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
                    for m in legal:
                        if id(m) in children:
                            children[id(m)].avail += 1
                    child = children[id(move)] = _TreeNode(move, teams[turn])
                else:
                    best = -math.inf
                    child = node
                    for m in legal:
                        other = children[id(m)]
                        other.avail += 1
                        n = other.visits
                        score = (
                            other.total / n + c * math.sqrt(math.log(other.avail) / n)
                            if n
                            else math.inf
                        )
                        if score > best:
                            best, child = score, other
                    move = child.move  # type: ignore[assignment]
            child.visits += 1
            path.append(child)
            got, end, at = rules.step(at, move)
            if got:
                points[teams[turn]] += got
            if end is not None:
                gains = [p - d for p, d in zip(points, end, strict=True)]
                return path, points, None, self.values(gains)
            node = child

    def leaf(
        self,
        path: list[_TreeNode],
        points: list[int],
        node: _TreeNode,
        state: PlayoutState,
        at: _Node,
    ) -> _Leaf:
        """The state to play out from `at`; or, with two seats and an empty boneyard where the
        solver solves it within its budget, every side's value from its exact value."""
        layout, hands, turn, drawn, pos, needs = at
        leaf = state.stepped(
            tuple(state.target - n for n in needs),
            layout.placements,
            hands,
            state.boneyard[pos:],
            turn,
            drawn,
        )
        if self.seats != 2 or pos < len(state.boneyard):
            return path, points, leaf, None
        key = (id(node), hands, turn, drawn)
        if key in self.exact:
            value = self.exact[key]
        else:
            try:
                value = solve(leaf, self.solver).value
            except NotSolved:
                value = None
            self.exact[key] = value
        if value is None:
            return path, points, leaf, None
        mover = self.teams[turn]
        values = self.values(points)
        return (
            path,
            points,
            None,
            [v + (value if side == mover else -value) for side, v in enumerate(values)],
        )


class IsmctsBot:
    """Chooses by the search of the module text from its own seat's view, `playouts` a move
    (default `BOT_PLAYOUTS`) and/or at most `millis` per decision; a forced move and a
    placement that wins the match at once are made without searching. Reproducible from its
    seed with a budget in playouts.

    A view that is not a `SeatView` (a gRPC client's picture of its position, `RemoteView`)
    holds no history of the round to sample from: the bot then asks where the view was
    served for its ranking (`ranked_moves`, the service's rollout analysis), as the
    `rollout` bot does."""

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        *,
        playouts: int | None = None,
        millis: float | None = None,
        exploration: float = EXPLORATION,
        prior: int = PRIOR_ROLLOUTS,
        prior_weight: int = PRIOR_WEIGHT,
    ) -> None:
        self.prior, self.prior_weight = prior, prior_weight
        check_budget(playouts, millis, "playouts per move")
        check_prior(prior, prior_weight)
        if not math.isfinite(exploration) or exploration < 0:
            raise ValueError(f"the exploration constant is a number >= 0, not {exploration!r}")
        self.playouts = BOT_PLAYOUTS if playouts is None and millis is None else playouts
        self.millis = millis
        self.exploration = exploration
        self.rng = random.Random(seed)

    def choose(self, view: object) -> Move:
        legal: list[Move] = view.legal_moves()  # type: ignore[attr-defined]
        if len(legal) == 1:
            return legal[0]
        winning = _winning_move(view, legal)
        if winning is not None:
            return winning
        seed = self.rng.getrandbits(64)
        if isinstance(view, SeatView):
            return search(
                view,
                playouts=self.playouts,
                millis=self.millis,
                seed=seed,
                exploration=self.exploration,
                prior=self.prior,
                prior_weight=self.prior_weight,
            ).best
        ranked = getattr(view, "ranked_moves", None)
        if ranked is None:
            raise TypeError(
                "the ismcts bot needs its seat's SeatView, or a view that can be analysed "
                "where it was served (ranked_moves)"
            )
        best: Move = ranked(self.playouts, self.millis, seed)[0]
        return best


__all__ = [
    "BATCH",
    "BOT_PLAYOUTS",
    "EXPLORATION",
    "SOLVER_NODES",
    "IsmctsBot",
    "RootAction",
    "Searched",
    "search",
]
