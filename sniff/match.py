"""The full state of a match: hands, boneyard, layout, turn, scores and history.

`Match` holds hidden information (every hand, the boneyard order); what one
seat may see is a separate object built by `view` (see `view.py`), so no
layer above can leak a hidden tile by handing on this object's fields.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from sniff.dealing import check_seed, lot, shuffled
from sniff.errors import (
    BadDeal,
    CannotDraw,
    CannotPass,
    MatchOver,
    MustPlace,
    MustPlaceDrawn,
    NoRoundInPlay,
    NotYourTurn,
    RoundInPlay,
    TileNotInHand,
)
from sniff.layout import SLOT_MATCHING, Layout
from sniff.moves import DRAW, PASS, Move, MoveKind
from sniff.rules import (
    HAND_SIZE,
    SEAT_COUNTS,
    TARGET,
    Seat,
    deduction,
    team_count,
    team_of,
)
from sniff.tiles import (
    BIT,
    IS_DOUBLE,
    NAMES,
    SET_SIZE,
    TILES,
    Tile,
    pips_of,
    tiles_of,
)
from sniff.variants import AMERICAN, Variant, variant_named


class Phase(enum.Enum):
    AWAITING_DEAL = "awaiting_deal"
    PLAYING = "playing"
    OVER = "over"


class LeaderChoice(enum.Enum):
    """How a round's leader was chosen (§2); recorded so a replay needs no generator."""

    LOT = "lot"
    FINISHER = "finisher"
    EXPLICIT = "explicit"


class RoundEndKind(enum.Enum):
    DOMINO = "domino"
    BLOCKED = "blocked"


# Enum members as module constants for the hot paths: in Python 3.11 reading one as a class
# attribute (`Phase.PLAYING`) costs about 100 ns, more than the test it is read for.
_AWAITING_DEAL: Final = Phase.AWAITING_DEAL
_PLAYING: Final = Phase.PLAYING
_OVER: Final = Phase.OVER
_LEAD: Final = MoveKind.LEAD
_PLACE: Final = MoveKind.PLACE
_DRAW: Final = MoveKind.DRAW


@dataclass(frozen=True, slots=True)
class Deal:
    """One round's deal: each seat's hand, the boneyard in draw order, and the leader."""

    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    leader: Seat

    @staticmethod
    def of(hands: Sequence[Sequence[int]], boneyard: Sequence[int], leader: int) -> Deal:
        if any(not 0 <= t < SET_SIZE for t in (*boneyard, *(t for h in hands for t in h))):
            raise BadDeal("a deal names a tile number outside 0..27")
        return Deal(
            tuple(tuple(TILES[t] for t in h) for h in hands),
            tuple(TILES[t] for t in boneyard),
            leader,
        )

    def check(self, seats: int) -> None:
        """Raise `BadDeal` unless this is exactly the 28 tiles in the right hand sizes."""
        if len(self.hands) != seats:
            raise BadDeal(f"the deal has {len(self.hands)} hands for {seats} seats")
        size = HAND_SIZE[seats]
        for seat, hand in enumerate(self.hands):
            if len(hand) != size:
                raise BadDeal(f"seat {seat} holds {len(hand)} tiles; {seats} seats get {size} each")
        seen: set[int] = set()
        for t in (t for h in self.hands for t in h):
            if t in seen:
                raise BadDeal(f"tile {NAMES[t]} is dealt twice")
            seen.add(t)
        for t in self.boneyard:
            if t in seen:
                raise BadDeal(f"tile {NAMES[t]} is both dealt and in the boneyard, or twice there")
            seen.add(t)
        if len(seen) != SET_SIZE:
            missing = ", ".join(NAMES[t] for t in range(SET_SIZE) if t not in seen)
            raise BadDeal(f"the deal is missing {missing}")
        if not (isinstance(self.leader, int) and 0 <= self.leader < seats):
            raise BadDeal(f"leader {self.leader!r} is not a seat of a {seats}-seat match")


@dataclass(frozen=True, slots=True)
class RoundEnd:
    """How a round ended and what it cost each hand (§7). Scores are per seat."""

    kind: RoundEndKind
    finisher: Seat | None
    pips: tuple[int, ...]
    deductions: tuple[int, ...]
    scores: tuple[int, ...]


class ActionResult(NamedTuple):
    """What one applied action did. `drawn` is hidden information: only the drawer may see it.

    A named tuple, not a frozen dataclass like the engine's other values: one is made for
    every action, and a frozen dataclass's `__init__` (a guarded `__setattr__` a field)
    cost 1.1 µs of an action's few, a named tuple's 0.3 µs. It is as immutable.
    """

    seat: Seat
    move: Move
    points: int
    ends_sum: int | None
    drawn: Tile | None = None
    round_end: RoundEnd | None = None
    winner: Seat | None = None
    """The winning seat when this action ended the match with a winner (§8)."""
    match_over: bool = False
    """True when this action ended the match: a win, or the round limit (then `winner` may
    be None: a draw)."""


_new: Final = tuple.__new__
"""`_new(ActionResult, fields)`: a result from all its fields in order, as `apply` makes one
for every action, without the constructor's keywords and defaults (a third of a
microsecond an action)."""


class RoundLog:
    """One round as played: its deal, every action and the points each scored."""

    __slots__ = ("actions", "deal", "end", "leader_choice", "points", "scores")

    def __init__(self, deal: Deal, leader_choice: LeaderChoice) -> None:
        self.deal = deal
        self.leader_choice = leader_choice
        self.actions: list[Move] = []
        self.points: list[int | None] = []
        self.end: RoundEnd | None = None
        self.scores: tuple[int, ...] = ()
        """Scores per seat when the round stopped (its end, or the winning placement)."""


def legal_moves_of(layout: Layout, hand: int, drawn: int, boneyard_left: int) -> list[Move]:
    """The lawful actions of a seat holding `hand` (§6): the placements of the placeable tile
    it just drew (`drawn`, -1 if none), else of its hand, else draw or pass."""
    if drawn >= 0:
        return layout.moves_for(BIT[drawn])
    if hand & layout.playable:
        return layout.moves_for(hand)
    return [DRAW] if boneyard_left else [PASS]


class Match:
    """A match in progress: the game state that `apply` advances one action at a time."""

    __slots__ = (
        "bone_pos",
        "boneyard",
        "draw_seats",
        "drawn",
        "drawn_by",
        "hand_sizes",
        "hands",
        "history",
        "layout",
        "leader",
        "move_count",
        "next_leader",
        "phase",
        "round_index",
        "round_limit",
        "scores",
        "seats",
        "seed",
        "target",
        "teams",
        "turn",
        "variant",
        "winner",
    )

    def __init__(
        self,
        seats: int = 2,
        *,
        seed: int | None = None,
        target: int | None = None,
        deal: Deal | None = None,
        auto_deal: bool = True,
        variant: Variant | str = AMERICAN,
        round_limit: int | None = None,
    ) -> None:
        """A new match; unless `auto_deal` is false, its first round is dealt at once.

        Without a seed the match draws one (`secrets`), so that every match,
        seeded or not, can show afterwards how its deals were made (`dealing.py`).
        """
        if seats not in SEAT_COUNTS:
            raise ValueError(f"Sniff is played by 2, 3 or 4, not {seats}")
        if target is not None and target <= 0:
            raise ValueError(f"a target must be positive, not {target}")
        if round_limit is not None and round_limit <= 0:
            raise ValueError(f"a round limit must be positive, not {round_limit}")
        self.variant = variant if isinstance(variant, Variant) else variant_named(variant)
        self.seats = seats
        self.target = TARGET[seats] if target is None else target
        self.round_limit = round_limit
        self.seed = secrets.randbits(63) if seed is None else check_seed(seed)
        self.teams = tuple(team_of(s, seats) for s in range(seats))
        self.scores = [0] * team_count(seats)
        self.phase = _AWAITING_DEAL
        self.round_index = -1
        self.move_count = 0
        self.next_leader: Seat | None = None
        self.winner: Seat | None = None
        self.history: list[RoundLog] = []
        self.hands = [0] * seats
        self.hand_sizes = [0] * seats
        """Per seat, the tiles it holds: kept with `hands` so that a view, made for every bot
        decision, copies the sizes instead of counting every hand's bits."""
        self.boneyard: list[Tile] = []
        self.bone_pos = 0
        self.draw_seats: list[Seat] = []
        """Who drew each boneyard tile drawn so far this round, in draw order."""
        self.drawn_by: list[tuple[Tile, ...]] = [()] * seats
        """Per seat, the tiles it drew this round in draw order: kept as each draw is made so
        that a seat's view (`view.py`) takes its own draws without searching the boneyard."""
        self.layout = Layout(self.variant)
        self.turn: Seat = -1
        self.leader: Seat = -1
        self.drawn = -1
        if auto_deal or deal is not None:
            self.deal(deal)

    # -- reading the state -------------------------------------------------

    def seat_scores(self) -> tuple[int, ...]:
        """Scores per seat (partners carry the same number)."""
        scores = self.scores
        if self.seats != 4:
            return tuple(scores)
        return (scores[0], scores[1], scores[0], scores[1])

    def hand(self, seat: Seat) -> list[Tile]:
        return tiles_of(self.hands[seat])

    @property
    def boneyard_left(self) -> int:
        return len(self.boneyard) - self.bone_pos

    def legal_moves(self) -> list[Move]:
        """Every lawful action for the seat to play, in canonical order (§3, §6).

        Placements come first, ordered by place (board tile, then side) and then
        by tile; a lead lists tiles in ascending order. With no placement the
        only action is `draw`, or `pass` once the boneyard is empty.
        """
        if self.phase is not _PLAYING:
            return []
        return legal_moves_of(
            self.layout, self.hands[self.turn], self.drawn, len(self.boneyard) - self.bone_pos
        )

    def check(self, move: Move, seat: Seat | None = None) -> None:
        """Raise the specific `IllegalMove` that `apply` would raise; change nothing."""
        if self.phase is not _PLAYING:
            if self.phase is _OVER:
                raise MatchOver(f"the match is over: {self.result_text()}")
            raise NoRoundInPlay("the round is over: the next round must be dealt first")
        turn = self.turn
        if seat is not None and seat != turn:
            raise NotYourTurn(f"it is seat {turn}'s turn, not seat {seat}'s")
        hand = self.hands[turn]
        kind = move.kind
        drawn = self.drawn
        if kind <= _PLACE:
            t = move.tile
            assert t is not None
            if not hand >> t & 1:
                where = self._whereabouts(t)
                raise TileNotInHand(f"tile {NAMES[t]} is not in seat {turn}'s hand ({where})")
            if drawn >= 0 and t != drawn:
                raise MustPlaceDrawn(
                    f"seat {turn} drew {NAMES[drawn]}, which can be placed: it must be placed now"
                )
            self.layout.check(move)
            return
        if drawn >= 0:
            raise MustPlaceDrawn(
                f"seat {turn} drew {NAMES[drawn]}, which can be placed: it must be placed now"
            )
        if hand & self.layout.playable:
            word = "draw" if kind is _DRAW else "pass"
            raise MustPlace(f"seat {turn} holds a tile that can be placed and may not {word}")
        if kind is _DRAW:
            if self.bone_pos >= len(self.boneyard):
                raise CannotDraw("the boneyard is empty: nothing to draw (pass instead)")
        elif self.bone_pos < len(self.boneyard):
            raise CannotPass(f"seat {turn} may not pass while the boneyard holds tiles: draw")

    def _whereabouts(self, t: int) -> str:
        if self.layout.covered[t] >= 0:
            return "it is already on the layout"
        for seat, hand in enumerate(self.hands):
            if hand >> t & 1:
                return f"seat {seat} holds it: out of turn"
        return "it is still in the boneyard"

    # -- changing the state ------------------------------------------------

    def apply(self, move: Move, seat: Seat | None = None) -> ActionResult:
        """Make one action for the seat to play (optionally checking it is `seat`).

        An illegal action raises its specific `IllegalMove` and leaves the
        state exactly as it was.
        """
        s = self.turn
        kind = move.kind
        # The common lawful actions are recognised here, by every condition `check` would
        # test for them (`Layout.check`'s too); anything else, lawful or not, goes through
        # `check`, which raises the specific error (or finds it lawful: a lead, a Sniff).
        if self.phase is not _PLAYING or (seat is not None and seat != s):
            self.check(move, seat)
        elif kind is _PLACE:
            t = move.tile
            assert t is not None
            layout = self.layout
            slot = move.slot
            drawn = self.drawn
            # (A slot among the targets means the layout is not empty; SLOT_MATCHING holds
            # the tiles with a half of the slot's value.)
            if not (
                self.hands[s] >> t & 1
                and (drawn < 0 or t == drawn)
                and layout.covered[t] < 0
                and slot in layout.targets
                and SLOT_MATCHING[slot] >> t & 1
                and move.orientation is None
                and not (IS_DOUBLE[t] and layout.sniff < 0)
            ):
                self.check(move, seat)
        elif kind is _LEAD or not (
            self.drawn < 0
            and not self.hands[s] & self.layout.playable
            and (self.bone_pos < len(self.boneyard)) is (kind is _DRAW)
        ):
            self.check(move, seat)
        log = self.history[-1]
        log.actions.append(move)
        self.move_count += 1
        if kind <= _PLACE:
            t = move.tile
            assert t is not None
            hands = self.hands
            hands[s] ^= BIT[t]
            self.hand_sizes[s] -= 1
            self.drawn = -1
            ends = self.layout.place(move)
            points = ends if ends > 0 and ends % 5 == 0 else 0  # points_for, inlined
            log.points.append(points)
            if points:
                team = self.teams[s]
                self.scores[team] += points
                if self.scores[team] >= self.target:
                    self.phase = _OVER
                    self.winner = s
                    log.scores = self.seat_scores()
                    return ActionResult(s, move, points, ends, winner=s, match_over=True)
            if not hands[s]:
                return self._round_over(s, move, points, ends, None, s)
            if self.bone_pos == len(self.boneyard) and self._blocked():
                return self._round_over(s, move, points, ends, None, None)
            self.turn = (s + 1) % self.seats
            return _new(ActionResult, (s, move, points, ends, None, None, None, False))
        log.points.append(None)
        if kind is _DRAW:
            t = self.boneyard[self.bone_pos]
            self.bone_pos += 1
            self.draw_seats.append(s)
            self.drawn_by[s] += (t,)
            self.hands[s] |= BIT[t]
            self.hand_sizes[s] += 1
            if BIT[t] & self.layout.playable:
                self.drawn = t
            elif self.bone_pos == len(self.boneyard) and self._blocked():
                return self._round_over(s, move, 0, None, t, None)
            return _new(ActionResult, (s, move, 0, None, t, None, None, False))
        self.turn = (s + 1) % self.seats
        return _new(ActionResult, (s, move, 0, None, None, None, None, False))

    def _blocked(self) -> bool:
        playable = self.layout.playable
        return not any(h & playable for h in self.hands)

    def _round_over(
        self,
        seat: Seat,
        move: Move,
        points: int,
        ends: int | None,
        drawn: Tile | None,
        finisher: Seat | None,
    ) -> ActionResult:
        """End the round; end the match too if this was the round limit's last round (§8).
        Returns the result of the action that ended it (`seat` made `move`)."""
        end = self._end_round(finisher)
        if self.round_limit is None or self.round_index + 1 < self.round_limit:
            return _new(ActionResult, (seat, move, points, ends, drawn, end, None, False))
        self.phase = _OVER
        best = max(self.scores)
        leaders = [team for team, score in enumerate(self.scores) if score == best]
        # The side ahead wins; with two or more sides level on top the match is drawn.
        self.winner = leaders[0] if len(leaders) == 1 else None
        return _new(ActionResult, (seat, move, points, ends, drawn, end, self.winner, True))

    def forfeit(self, seat: Seat) -> Seat:
        """End the match at once, won by the side `seat` is not on, the scores as they stand;
        the winner (the first seat of that side). This is how the service ends a match whose
        seat ran out of time under a forfeit time control (docs/service.md): no rule of play
        makes it. Only with 2 or 4 seats, where there is one other side."""
        if self.phase is _OVER:
            raise MatchOver("the match is over: nobody can forfeit it")
        if self.seats == 3 or not 0 <= seat < self.seats:
            raise ValueError(f"seat {seat} of a {self.seats}-seat match cannot forfeit")
        self.phase = _OVER
        self.winner = (seat + 1) % 2
        return self.winner

    def result_text(self) -> str:
        """How the match ended, in words: who won, or a draw at the round limit."""
        if self.phase is not _OVER:
            return "the match is in play"
        if self.winner is None:
            return f"drawn at the round limit of {self.round_limit}"
        return f"seat {self.winner} won"

    def _end_round(self, finisher: Seat | None) -> RoundEnd:
        pips = tuple(map(pips_of, self.hands))
        deductions = tuple(map(deduction, pips))
        for seat, d in enumerate(deductions):
            self.scores[self.teams[seat]] -= d
        end = RoundEnd(
            RoundEndKind.DOMINO if finisher is not None else RoundEndKind.BLOCKED,
            finisher,
            pips,
            deductions,
            self.seat_scores(),
        )
        log = self.history[-1]
        log.end = end
        log.scores = end.scores
        self.next_leader = finisher
        self.phase = _AWAITING_DEAL
        self.turn = -1
        return end

    def deal(self, deal: Deal | None = None) -> Deal:
        """Start the next round, from the match's generator or from an explicit deal (§2).

        The leader is the last round's finisher, else drawn by lot; an explicit
        deal after a domino must name that finisher.
        """
        if self.phase is _OVER:
            raise MatchOver(f"the match is over: {self.result_text()}")
        if self.phase is _PLAYING:
            raise RoundInPlay("a round is in play: it must end before the next deal")
        if deal is None:
            deal, choice = self.seeded_deal(self.round_index + 1)
        else:
            deal.check(self.seats)
            if self.next_leader is not None and deal.leader != self.next_leader:
                raise BadDeal(
                    f"seat {self.next_leader} dominoed the last round and must lead, "
                    f"not seat {deal.leader}"
                )
            choice = (
                LeaderChoice.FINISHER if self.next_leader is not None else LeaderChoice.EXPLICIT
            )
        self.hands = [sum(map(BIT.__getitem__, h)) for h in deal.hands]
        self.hand_sizes = list(map(len, deal.hands))
        self.boneyard = list(deal.boneyard)
        self.bone_pos = 0
        self.draw_seats = []
        self.drawn_by = [()] * self.seats
        self.layout = Layout(self.variant)
        self.leader = self.turn = deal.leader
        self.drawn = -1
        self.round_index += 1
        self.phase = _PLAYING
        self.history.append(RoundLog(deal, choice))
        return deal

    def seeded_deal(self, round_index: int) -> tuple[Deal, LeaderChoice]:
        """The deal the match's seed makes for `round_index` (`dealing.py`), with its leader:
        the last round's finisher, else the lot."""
        tiles = shuffled(self.seed, round_index, list(TILES))
        if self.next_leader is not None:
            leader, choice = self.next_leader, LeaderChoice.FINISHER
        else:
            leader, choice = lot(self.seed, round_index, self.seats), LeaderChoice.LOT
        size = HAND_SIZE[self.seats]
        deal = Deal(
            tuple([tuple(tiles[i : i + size]) for i in range(0, self.seats * size, size)]),
            tuple(tiles[self.seats * size :]),
            leader,
        )
        return deal, choice

    def copy(self, keep_history: bool = True) -> Match:
        """An independent copy for search and rollouts.

        Without `keep_history` the copy keeps only the current round's deal (no
        past actions), which makes copies for rollouts cost a few microseconds.
        """
        other = Match.__new__(Match)
        other.seats = self.seats
        other.variant = self.variant
        other.target = self.target
        other.round_limit = self.round_limit
        other.seed = self.seed
        other.teams = self.teams
        other.scores = self.scores[:]
        other.phase = self.phase
        other.round_index = self.round_index
        other.move_count = self.move_count
        other.next_leader = self.next_leader
        other.winner = self.winner
        if keep_history:
            other.history = [_copy_log(r) for r in self.history]
        elif self.history:
            last = self.history[-1]
            other.history = [RoundLog(last.deal, last.leader_choice)]
        else:
            other.history = []
        other.hands = self.hands[:]
        other.hand_sizes = self.hand_sizes[:]
        other.boneyard = self.boneyard
        other.bone_pos = self.bone_pos
        other.draw_seats = self.draw_seats[:]
        other.drawn_by = self.drawn_by[:]
        other.layout = self.layout.copy()
        other.turn = self.turn
        other.leader = self.leader
        other.drawn = self.drawn
        return other


def _copy_log(log: RoundLog) -> RoundLog:
    other = RoundLog(log.deal, log.leader_choice)
    other.actions = log.actions[:]
    other.points = log.points[:]
    other.end = log.end
    other.scores = log.scores
    return other
