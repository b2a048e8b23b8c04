"""Conversions between protobuf messages and engine values: the only module that knows both."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import pyarrow as pa

from service.analyses import Unsolved
from service.clock import OutOfTime, SeatTime, TimeControl, Timing
from service.errors import BadArgument
from service.evidence.proofs import ConsistencyProof, InclusionProof
from service.evidence.signed import Checkpoint, TreeHead
from service.hub import OBSERVER, ApplyOutcome, Contributed, Created, LayoutSides, Logged, Proof
from service.rpc.bounds import (
    DEFAULT_SOLVE_NODES,
    FACTS_FIELDS,
    MAX_ANALYSIS_MILLIS,
    STORE_FIELDS,
)
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.query_stream import QueryValue
from service.storage.chain import MatchSecrets
from service.storage.events import COLUMNS, arrow_schema
from service.storage.facts import FACTS_SCHEMAS, FactsTables
from service.storage.simulated import SIM_SCHEMAS, SimulationRun
from sniff import (
    CountedEnd,
    Deal,
    Layout,
    LeaderChoice,
    Move,
    MoveKind,
    MoveNotationError,
    NotationError,
    OpenSide,
    Phase,
    RoundEnd,
    RoundEndKind,
    SeatView,
    Side,
    Tile,
    TileNotationError,
    points_for,
    winning_seats,
)
from sniff.rollout import DEFAULT_ROLLOUTS, Equities
from sniff.rules import TARGET, team_count
from sniff.solver import Solution
from sniff.tiles import TILES
from sniff.variants import VARIANTS, Orientation, Variant

_PHASES = {
    Phase.AWAITING_DEAL: pb.MATCH_PHASE_AWAITING_DEAL,
    Phase.PLAYING: pb.MATCH_PHASE_PLAYING,
    Phase.OVER: pb.MATCH_PHASE_OVER,
}
_CHOICES = {
    LeaderChoice.LOT: pb.LEADER_CHOICE_LOT,
    LeaderChoice.FINISHER: pb.LEADER_CHOICE_FINISHER,
    LeaderChoice.EXPLICIT: pb.LEADER_CHOICE_EXPLICIT,
    "lot": pb.LEADER_CHOICE_LOT,
    "finisher": pb.LEADER_CHOICE_FINISHER,
    "explicit": pb.LEADER_CHOICE_EXPLICIT,
}
_END_KINDS = {
    RoundEndKind.DOMINO: pb.ROUND_END_KIND_DOMINO,
    RoundEndKind.BLOCKED: pb.ROUND_END_KIND_BLOCKED,
    "domino": pb.ROUND_END_KIND_DOMINO,
    "blocked": pb.ROUND_END_KIND_BLOCKED,
}


_VARIANT_PB = {
    "american": pb.VARIANT_AMERICAN,
    "stubby": pb.VARIANT_STUBBY,
    "berndt": pb.VARIANT_BERNDT,
    "british": pb.VARIANT_BRITISH,
}
_VARIANT_OF_PB = {number: VARIANTS[name] for name, number in _VARIANT_PB.items()}
_VARIANT_OF_PB[pb.VARIANT_UNSPECIFIED] = VARIANTS["american"]
_ORIENTATION_PB = {
    Orientation.CROSS: pb.ORIENTATION_CROSS,
    Orientation.INLINE: pb.ORIENTATION_INLINE,
}
_ORIENTATION_OF_PB = {number: o for o, number in _ORIENTATION_PB.items()}


def name_of(match_id: str) -> str:
    return f"matches/{match_id}"


# -- engine -> proto ------------------------------------------------------------


_TILE_PB = tuple(pb.Tile(low=t.low, high=t.high) for t in TILES)


def tile_pb(tile: int) -> pb.Tile:
    """The message of a tile: a shared instance, so only ever copy it into another message."""
    return _TILE_PB[tile]


def tiles_pb(tiles: Iterable[int]) -> list[pb.Tile]:
    return [tile_pb(t) for t in tiles]


_SIDE_PB: tuple[pb.Side, ...] = (
    pb.SIDE_LOW,
    pb.SIDE_HIGH,
    pb.SIDE_LINE_A,
    pb.SIDE_LINE_B,
    pb.SIDE_BRANCH_A,
    pb.SIDE_BRANCH_B,
)
"""By the engine's `Side` (whose int order is the proto's, less its unspecified 0)."""


def side_pb(side: Side) -> pb.Side:
    return _SIDE_PB[side]


def variant_pb(variant: Variant | str) -> pb.Variant:
    return _VARIANT_PB[variant if isinstance(variant, str) else variant.name]


def variant_from_pb(value: pb.Variant) -> Variant:
    """The variant a request names; unset is American (old clients). Bounds refuse others."""
    return _VARIANT_OF_PB[value]


def _orientation_pb(move: Move) -> pb.Orientation:
    if move.orientation is None:
        return pb.ORIENTATION_UNSPECIFIED
    return _ORIENTATION_PB[move.orientation]


_MOVE_PB: dict[str, pb.Move] = {}
"""Each move's message by its notation, made once (a game has a few thousand moves)."""


def move_pb(move: Move) -> pb.Move:
    """The message of a move: a shared instance, so only ever copy it into another message."""
    msg = _MOVE_PB.get(move.text)
    if msg is None:
        msg = _MOVE_PB[move.text] = _new_move_pb(move)
    return msg


def _new_move_pb(move: Move) -> pb.Move:
    if move.kind is MoveKind.PLACE:
        assert move.tile is not None
        assert move.board_tile is not None
        assert move.side is not None
        place = pb.Move.Place(
            tile=tile_pb(move.tile),
            board_tile=tile_pb(move.board_tile),
            side=side_pb(move.side),
            orientation=_orientation_pb(move),
        )
        return pb.Move(place=place, notation=str(move))
    if move.kind is MoveKind.LEAD:
        assert move.tile is not None
        lead = pb.Move.Lead(tile=tile_pb(move.tile), orientation=_orientation_pb(move))
        return pb.Move(lead=lead, notation=str(move))
    if move.kind is MoveKind.DRAW:
        return pb.Move(draw=pb.Move.Draw(), notation="draw")
    msg = pb.Move(notation="pass")
    getattr(msg, "pass").SetInParent()  # `pass` is a Python keyword
    return msg


_COUNTED_PB: dict[tuple[int, int, int], pb.CountedEnd] = {}
_OPEN_PB: dict[tuple[int, int, int], pb.OpenSide] = {}
"""Counted ends and open sides by (tile, side, value), made once: shared instances."""


def counted_ends_pb(ends: Iterable[CountedEnd]) -> list[pb.CountedEnd]:
    out = []
    for c in ends:
        key = (c.tile, int(c.side), c.value)
        msg = _COUNTED_PB.get(key)
        if msg is None:
            msg = pb.CountedEnd(tile=tile_pb(c.tile), side=side_pb(c.side), value=c.value)
            _COUNTED_PB[key] = msg
        out.append(msg)
    return out


def open_sides_pb(sides: Iterable[OpenSide]) -> list[pb.OpenSide]:
    out = []
    for o in sides:
        key = (o.tile, int(o.side), o.value)
        msg = _OPEN_PB.get(key)
        if msg is None:
            msg = _OPEN_PB[key] = pb.OpenSide(
                tile=tile_pb(o.tile), side=side_pb(o.side), value=o.value
            )
        out.append(msg)
    return out


def hands_pb(hands: Iterable[Iterable[int]]) -> list[pb.Hand]:
    return [pb.Hand(tiles=tiles_pb(h)) for h in hands]


def round_end_pb(
    end: RoundEnd, round_index: int, hands: Sequence[Sequence[int]] | None
) -> pb.RoundEnd:
    msg = pb.RoundEnd(
        round_index=round_index,
        kind=_END_KINDS[end.kind],
        pips=list(end.pips),
        deductions=list(end.deductions),
        scores=list(end.scores),
        remaining_hands=hands_pb(hands or ()),
    )
    if end.finisher is not None:
        msg.finisher = end.finisher
    return msg


def leader_choice_pb(choice: LeaderChoice | str) -> pb.LeaderChoice:
    return _CHOICES[choice]


def create_response(created: Created) -> pb.CreateMatchResponse:
    match = created.match
    response = pb.CreateMatchResponse(
        name=name_of(created.match_id),
        match_id=created.match_id,
        seat_tokens=list(created.seat_tokens),
        observer_token=created.observer_token,
        target=match.target,
        variant=variant_pb(match.variant),
        seed_commitment=hex_of(created.seed_commitment),
    )
    if match.history:  # a match with seat entropy is dealt later (ContributeEntropy)
        response.leader = match.leader
        response.leader_choice = leader_choice_pb(match.history[-1].leader_choice)
        response.turn = match.turn
    if match.round_limit is not None:
        response.round_limit = match.round_limit
    if created.time_control is not None:
        response.time_control.CopyFrom(time_control_pb(created.time_control))
    return response


_OUT_OF_TIME_PB: Final = {
    OutOfTime.DEFAULT_MOVE: pb.OUT_OF_TIME_DEFAULT_MOVE,
    OutOfTime.FORFEIT: pb.OUT_OF_TIME_FORFEIT,
}


def time_control_pb(control: TimeControl) -> pb.TimeControl:
    return pb.TimeControl(
        move_limit_ms=control.move_limit_ms,
        bank_ms=control.bank_ms,
        out_of_time=_OUT_OF_TIME_PB[control.out_of_time],
        policy=control.policy or "",
    )


def time_control_from_pb(msg: pb.TimeControl) -> TimeControl:
    """A request's time control, as the hub checks it (`TimeControl.check`); an
    `out_of_time` that names no rule is refused here."""
    for rule, value in _OUT_OF_TIME_PB.items():
        if msg.out_of_time == value:
            return TimeControl(msg.move_limit_ms, msg.bank_ms, rule, msg.policy or None)
    raise BadArgument(
        "time_control.out_of_time",
        f"time_control.out_of_time: {msg.out_of_time} is not OUT_OF_TIME_DEFAULT_MOVE or "
        "OUT_OF_TIME_FORFEIT",
    )


def seat_clock_pb(t: SeatTime) -> pb.SeatClock:
    return pb.SeatClock(
        seat=t.seat,
        move_time_left_ms=t.move_time_left_ms,
        bank_left_ms=t.bank_left_ms,
        running=t.running,
    )


def with_timing(msg: pb.MatchState, timing: Timing | None) -> pb.MatchState:
    """`msg` with the match's time control and clocks, when it has them."""
    if timing is not None:
        msg.time_control.CopyFrom(time_control_pb(timing.control))
        msg.clocks.extend(seat_clock_pb(t) for t in timing.times)
        if timing.forfeited_seat is not None:
            msg.forfeited_seat = timing.forfeited_seat
    return msg


def contribute_response(contributed: Contributed) -> pb.ContributeEntropyResponse:
    msg = pb.ContributeEntropyResponse(
        seat=contributed.seat,
        entropy_seats=list(contributed.entropy_seats),
        dealt=contributed.dealt is not None,
    )
    if contributed.dealt is not None:
        leader, choice = contributed.dealt
        msg.leader = leader
        msg.leader_choice = leader_choice_pb(choice)
    return msg


def deal_response(round_index: int, leader: int, choice: LeaderChoice) -> pb.DealRoundResponse:
    return pb.DealRoundResponse(
        round_index=round_index, leader=leader, leader_choice=leader_choice_pb(choice)
    )


def score_layout_response(layout: Layout) -> pb.ScoreLayoutResponse:
    return pb.ScoreLayoutResponse(
        counted_ends=counted_ends_pb(layout.counted_ends()),
        ends_sum=layout.ends,
        points=points_for(layout.ends),
        open_sides=open_sides_pb(layout.open_sides()),
    )


def hex_of(data: bytes | None) -> str:
    """Hashes, commitments and secrets travel as lowercase hex; '' when there is none."""
    return "" if data is None else data.hex()


def reveal_pb(secrets: MatchSecrets | None) -> pb.Reveal | None:
    if secrets is None or secrets.seed is None:
        return None
    return pb.Reveal(
        seed=secrets.seed, seed_salt=secrets.salt.hex(), chain_secret=secrets.chain_secret.hex()
    )


def apply_response(outcome: ApplyOutcome) -> pb.ApplyMoveResponse:
    result = outcome.result
    msg = pb.ApplyMoveResponse(
        seat=result.seat,
        move=move_pb(result.move),
        move_count=outcome.move_count,
        points=result.points,
        counted_ends=counted_ends_pb(outcome.counted_ends),
        ends_sum=outcome.ends_sum,
        scores=list(outcome.scores),
    )
    if result.drawn is not None:
        msg.drawn_tile.CopyFrom(tile_pb(result.drawn))
    if result.round_end is not None:
        msg.round_end.CopyFrom(
            round_end_pb(result.round_end, outcome.round_index, outcome.remaining_hands)
        )
    if result.match_over:
        msg.match_end.CopyFrom(
            match_end_pb(
                result.winner,
                outcome.scores,
                result.round_end is not None,
                outcome.revealed,
            )
        )
    if outcome.turn is not None:
        msg.turn = outcome.turn
    msg.chain_head = hex_of(outcome.chain_head)
    msg.chain_head_sequence = outcome.chain_head_seq or 0
    if outcome.checkpoint is not None:
        msg.checkpoint.CopyFrom(checkpoint_pb(outcome.checkpoint))
    return msg


def checkpoint_pb(c: Checkpoint) -> pb.SignedCheckpoint:
    return pb.SignedCheckpoint(
        log_id=c.log_id, match_id=c.match_id, seq=c.seq, head=c.head, signature=c.signature.hex()
    )


def tree_head_pb(h: TreeHead) -> pb.SignedTreeHead:
    return pb.SignedTreeHead(
        log_id=h.log_id,
        tree_size=h.tree_size,
        root_hash=h.root_hash,
        timestamp_ms=h.timestamp_ms,
        signature=h.signature.hex(),
    )


def inclusion_pb(p: InclusionProof) -> pb.GetInclusionProofResponse:
    return pb.GetInclusionProofResponse(
        match_id=p.match_id,
        seq=p.seq,
        head=p.head,
        leaf_index=p.leaf_index,
        tree_head=tree_head_pb(p.tree_head),
        path_hashes=[h.hex() for h in p.path],
    )


def consistency_pb(p: ConsistencyProof) -> pb.GetConsistencyProofResponse:
    return pb.GetConsistencyProofResponse(
        from_tree_head=tree_head_pb(p.old),
        to_tree_head=tree_head_pb(p.new),
        path_hashes=[h.hex() for h in p.path],
    )


def match_end_pb(
    winner: int | None,
    scores: Sequence[int],
    at_limit: bool,
    revealed: MatchSecrets | None = None,
) -> pb.MatchEnd:
    msg = pb.MatchEnd(scores=list(scores), round_limit_reached=at_limit)
    if winner is not None:
        msg.winner = winner
        msg.winning_seats.extend(winning_seats(winner, len(scores)))
    reveal = reveal_pb(revealed)
    if reveal is not None:
        msg.reveal.CopyFrom(reveal)
    return msg


_PLACED_PB: dict[tuple[str, Orientation | None, bool], pb.PlacedTile] = {}
"""Each placement's message, made once (moves are interned, and a game has few)."""


def _placed_pb(move: Move, orientation: Orientation | None, sniff: bool) -> pb.PlacedTile:
    """A placement on the layout: a shared instance, so only ever copy it into another
    message. `orientation`: the Sniff rule's, for the Sniff (`sniff`) only."""
    key = (move.text, orientation, sniff)
    msg = _PLACED_PB.get(key)
    if msg is None:
        msg = pb.PlacedTile(
            tile=tile_pb(move.tile or 0),
            board_tile=tile_pb(move.board_tile) if move.board_tile is not None else None,
            side=side_pb(move.side) if move.side is not None else pb.SIDE_UNSPECIFIED,
            sniff=sniff,
            orientation=pb.ORIENTATION_UNSPECIFIED
            if orientation is None
            else _ORIENTATION_PB[orientation],
        )
        _PLACED_PB[key] = msg
    return msg


def state_pb(
    match_id: str,
    v: SeatView,
    choice: LeaderChoice | None,
    proof: Proof,
    sides: LayoutSides | None = None,
) -> pb.MatchState:
    """`sides`: the layout's open sides and counted ends, when the caller read them from the
    match (`Pending.sides`); else they are read from the layout rebuilt from the view."""
    if sides is None:
        layout = v.layout  # rebuilt from the placements: once, for both its sides and its ends
        sides = (layout.open_sides(), layout.counted_ends())
    sniff = v.sniff_index
    orientation = None if v.sniff_rule is None else v.sniff_rule.orientation
    msg = pb.MatchState(
        name=name_of(match_id),
        match_id=match_id,
        seat_count=v.seats,
        target=v.target,
        round_index=max(v.round_index, 0),
        phase=_PHASES[v.phase],
        leader=v.leader or 0,
        leader_choice=_CHOICES[choice] if choice is not None else pb.LEADER_CHOICE_UNSPECIFIED,
        viewer_tiles=tiles_pb(v.hand),
        hand_sizes=list(v.hand_sizes),
        boneyard_size=v.boneyard_size,
        layout_tiles=[
            _placed_pb(m, orientation if m.tile == sniff else None, m.tile == sniff)
            for m in v.round_actions
            if m.is_placement
        ],
        open_sides=open_sides_pb(sides[0]),
        counted_ends=counted_ends_pb(sides[1]),
        ends_sum=v.ends_sum,
        scores=list(v.scores),
        move_count=v.move_count,
        hands=hands_pb(v.hands or ()),
        boneyard_tiles=tiles_pb(v.boneyard or ()),
        variant=variant_pb(v.variant),
    )
    if v.round_limit is not None:
        msg.round_limit = v.round_limit
    if v.turn is not None:
        msg.turn = v.turn
    if v.viewer is not None:
        msg.viewer_seat = v.viewer
    if v.drawn is not None:
        msg.pending_drawn_tile.CopyFrom(tile_pb(v.drawn))
    if v.winner is not None:
        msg.winner = v.winner
    msg.seed_commitment = hex_of(proof.seed_commitment)
    msg.chain_head = hex_of(proof.head)
    msg.chain_head_sequence = proof.head_seq or 0
    if proof.entropy_seats is not None:
        msg.seat_entropy = True
        msg.entropy_seats.extend(proof.entropy_seats)
    if proof.checkpoint is not None:
        msg.checkpoint.CopyFrom(checkpoint_pb(proof.checkpoint))
    reveal = reveal_pb(proof.revealed)
    if reveal is not None:
        msg.reveal.CopyFrom(reveal)
    return msg


def scores_pb(v: SeatView, proof: Proof) -> pb.GetScoresResponse:
    over = v.phase is Phase.OVER
    msg = pb.GetScoresResponse(scores=list(v.scores), target=v.target, over=over)
    if v.winner is not None:
        msg.winner = v.winner
        msg.winning_seats.extend(winning_seats(v.winner, v.seats))
    msg.chain_head = hex_of(proof.head)
    msg.chain_head_sequence = proof.head_seq or 0
    if proof.checkpoint is not None:
        msg.checkpoint.CopyFrom(checkpoint_pb(proof.checkpoint))
    return msg


def event_pb(
    match_id: str, role: int, logged: Logged, *, keyed: bool, ends_sum: int
) -> pb.MatchEvent:
    """One logged event as `role` may see it: hidden tiles are left out.

    `ends_sum` is the layout's sum after an action (`Hub.layout_sum`): the log
    keeps none for a draw or a pass, and the stream must say what ApplyMove said.
    """
    e = logged.event
    d: dict[str, Any] = dict(e.detail or {})
    msg = pb.MatchEvent(sequence=e.seq)
    if e.kind == "match_created":
        created = pb.MatchCreated(
            name=name_of(match_id),
            seat_count=d["seats"],
            target=d["target"],
            variant=variant_pb(d.get("variant", "american")),
            seed_commitment=d.get("seed_commitment") or "",
        )
        if d.get("round_limit") is not None:
            created.round_limit = d["round_limit"]
        control = TimeControl.of_detail(d)
        if control is not None:
            created.time_control.CopyFrom(time_control_pb(control))
        msg.match_created.CopyFrom(created)
    elif e.kind == "round_dealt":
        hands = [[Tile.parse(t) for t in h] for h in d["hands"]]
        visible = [h if role in (OBSERVER, seat) else [] for seat, h in enumerate(hands)]
        msg.round_dealt.CopyFrom(
            pb.RoundDealt(
                round_index=e.round or 0,
                leader=d["leader"],
                leader_choice=_CHOICES[d["leader_choice"]],
                hands=hands_pb(visible),
                hand_sizes=[len(h) for h in hands],
                boneyard_size=len(d["boneyard"]),
                boneyard_tiles=tiles_pb(Tile.parse(t) for t in d["boneyard"])
                if role == OBSERVER
                else [],
                explicit_deal=d.get("dealt_by") == "request",
            )
        )
    elif e.kind == "action":
        assert e.move is not None
        applied = pb.ActionApplied(
            round_index=e.round or 0,
            action_index=e.action_index or 0,
            move_count=logged.move_count,
            seat=e.seat or 0,
            move=move_pb(Move.parse(e.move)),
            points=e.points or 0,
            ends_sum=ends_sum,
        )
        if e.drawn is not None and role in (OBSERVER, e.seat):
            applied.drawn_tile.CopyFrom(tile_pb(Tile.parse(e.drawn)))
        if d.get("bank_ms") is not None:
            applied.bank_left_ms = d["bank_ms"]
        applied.timeout_policy = d.get("timeout") or ""
        msg.action_applied.CopyFrom(applied)
    elif e.kind == "round_ended":
        round_end = pb.RoundEnd(
            round_index=e.round or 0,
            kind=_END_KINDS[d["end"]],
            pips=d["pips"],
            deductions=d["deductions"],
            scores=d["scores"],
            remaining_hands=hands_pb([Tile.parse(t) for t in h] for h in d.get("hands", [])),
        )
        if d.get("finisher") is not None:
            round_end.finisher = d["finisher"]
        msg.round_ended.CopyFrom(pb.RoundEnded(round_end=round_end))
    else:
        end = match_end_pb(
            d["winner"],
            d["scores"],
            bool(d.get("round_limit_reached")),
            MatchSecrets.from_detail(d),
        )
        forfeit = d.get("forfeit")
        if forfeit is not None:
            end.forfeited_seat = forfeit["seat"]
        msg.match_ended.CopyFrom(pb.MatchEnded(match_end=end))
    # A match without a chain secret (begun before schema 3) gets its head only at the end.
    if e.kind == "match_ended" or (keyed and e.kind == "round_ended"):
        msg.chain_head = hex_of(e.hash)
        if logged.checkpoint is not None:
            msg.checkpoint.CopyFrom(checkpoint_pb(logged.checkpoint))
    return msg


# -- proto -> engine ------------------------------------------------------------


def tile_from_pb(msg: pb.Tile, what: str = "tile") -> Tile:
    if not (0 <= msg.low <= msg.high <= 6):
        raise TileNotationError(
            f"{what} {msg.low}-{msg.high} is not a tile (need 0 <= low <= high <= 6)"
        )
    return Tile.of(msg.low, msg.high)


def _orientation_from_pb(value: pb.Orientation) -> Orientation | None:
    if value == pb.ORIENTATION_UNSPECIFIED:
        return None
    try:
        return _ORIENTATION_OF_PB[value]
    except KeyError:
        raise MoveNotationError(f"{value} is not an orientation") from None


def move_from_pb(msg: pb.Move) -> Move:
    kind = msg.WhichOneof("kind")
    if kind == "lead":
        lead = Move.lead(tile_from_pb(msg.lead.tile))
        return lead.oriented(_orientation_from_pb(msg.lead.orientation))
    if kind == "place":
        side = msg.place.side
        if not pb.SIDE_LOW <= side <= pb.SIDE_BRANCH_B:
            raise MoveNotationError("a placement must name its side (SIDE_LOW ... SIDE_BRANCH_B)")
        place = Move.place(
            tile_from_pb(msg.place.tile),
            tile_from_pb(msg.place.board_tile, "board tile"),
            Side(side - 1),
        )
        return place.oriented(_orientation_from_pb(msg.place.orientation))
    if kind == "draw":
        return Move.draw()
    if kind == "pass":
        return Move.pass_()
    raise MoveNotationError("the move sets none of lead, place, draw or pass")


def move_of_request(request: pb.ApplyMoveRequest | pb.PlayAnswer) -> Move:
    """The action of an ApplyMove request (or a Play answer), structured or in notation."""
    which = request.WhichOneof("action")
    if which == "notation":
        return Move.parse(request.notation)
    if which == "move":
        return move_from_pb(request.move)
    raise NotationError("the request carries no move: set `move` or `notation`")


def placements_from_pb(placements: Iterable[pb.Placement]) -> list[Move]:
    """ScoreLayout's placements as moves, each parsed (whether it can be made is not checked)."""
    moves = []
    for i, placement in enumerate(placements):
        which = placement.WhichOneof("kind")
        if which == "notation":
            moves.append(Move.parse(placement.notation))
        elif which == "move":
            moves.append(move_from_pb(placement.move))
        else:
            raise NotationError(f"placement {i} sets neither `move` nor `notation`")
    return moves


def query_params(parameters: Iterable[pb.QueryParameter]) -> list[QueryValue]:
    """A Query's parameters as values to bind (SQL NULL as None)."""
    values: list[QueryValue] = []
    for p in parameters:
        which = p.WhichOneof("value")
        value: QueryValue = None
        if which is not None and which != "null_value":
            value = getattr(p, which)
        values.append(value)
    return values


IMPORT_COLUMNS: Final = COLUMNS[:-1]
"""The columns of an import's events: those of events_all but logged_at (the log stamps it)."""


def _ipc_columns(field: str, data: bytes, columns: Sequence[str], rows: str) -> pa.Table:
    """One of ImportMatches' Arrow IPC streams, as a table of `columns` (in that order):
    INVALID_ARGUMENT naming `field` for bytes that are no such stream or lack a column."""
    try:
        table = pa.ipc.open_stream(data).read_all()
    except (pa.ArrowException, ValueError) as exc:
        raise BadArgument(field, f"{field}: not an Arrow IPC stream ({exc})") from None
    missing = [name for name in columns if name not in table.column_names]
    if missing:
        raise BadArgument(field, f"{field}: the {rows} lack the column {missing[0]}")
    return table.select(list(columns))


def events_table(data: bytes) -> pa.Table:
    """ImportMatches' Arrow IPC stream as a table in the log's columns, `logged_at` null."""
    table = _ipc_columns("arrow_ipc", data, IMPORT_COLUMNS, "events")
    return table.append_column(
        arrow_schema().field("logged_at"),
        pa.nulls(table.num_rows, pa.timestamp("us", tz="UTC")),
    )


def facts_tables(*streams: bytes) -> FactsTables | None:
    """ImportMatches' three facts streams (match_facts, round_facts, sniff_decisions) as
    tables in the log's facts columns; None when the client sent none."""
    if not any(streams):
        return None
    tables = []
    for name, data, schema in zip(FACTS_FIELDS, streams, FACTS_SCHEMAS, strict=True):
        if not data:
            tables.append(schema.empty_table())
            continue
        table = _ipc_columns(name, data, schema.names, "rows")
        try:
            tables.append(table.cast(schema))
        except (pa.ArrowException, ValueError) as exc:
            raise BadArgument(name, f"{name}: {exc}") from None
    return FactsTables(*tables)


def simulation_run_from_pb(msg: pb.SimulationRun) -> SimulationRun:
    """StoreSimulated's run (checked by the hub: `simulated.check_run`)."""
    variant = _VARIANT_OF_PB.get(msg.variant)
    if variant is None:
        raise BadArgument("run.variant", f"run.variant: no variant {msg.variant}")
    return SimulationRun(
        run_id=msg.run_id,
        matches=msg.matches,
        seats=msg.seats,
        bots=tuple(msg.bots),
        players=tuple(msg.players),
        seed=msg.seed,
        variant=variant.name,
        target=msg.target,
        round_limit=msg.round_limit if msg.HasField("round_limit") else None,
        stored="facts",
        sim_version=msg.sim_version,
        code_version=msg.code_version,
    )


def simulation_run_pb(run: SimulationRun) -> pb.SimulationRun:
    """The run as StoreSimulated sends it (`sniff simulate` through a service)."""
    msg = pb.SimulationRun(
        run_id=run.run_id,
        matches=run.matches,
        seats=run.seats,
        bots=list(run.bots),
        players=list(run.players),
        seed=run.seed,
        variant=_VARIANT_PB[run.variant],
        target=run.target,
        sim_version=run.sim_version,
        code_version=run.code_version,
    )
    if run.round_limit is not None:
        msg.round_limit = run.round_limit
    return msg


def simulated_tables(streams: dict[str, bytes]) -> tuple[pa.Table, pa.Table, pa.Table]:
    """StoreSimulated's three Arrow IPC streams as tables (checked by the hub)."""
    tables = []
    for name, schema in zip(STORE_FIELDS, SIM_SCHEMAS, strict=True):
        tables.append(_ipc_columns(name, streams[name], schema.names, "rows"))
    matches, rounds, decisions = tables
    return matches, rounds, decisions


def deal_from_pb(msg: pb.Deal) -> Deal:
    return Deal(
        tuple(tuple(tile_from_pb(t) for t in h.tiles) for h in msg.hands),
        tuple(tile_from_pb(t) for t in msg.boneyard_tiles),
        msg.leader,
    )


# -- analyses -----------------------------------------------------------------------


_POLICY_OF_PB = {
    pb.PLAYOUT_POLICY_UNSPECIFIED: "greedy",
    pb.PLAYOUT_POLICY_GREEDY: "greedy",
    pb.PLAYOUT_POLICY_RANDOM: "random",
}
_POLICY_PB = {"greedy": pb.PLAYOUT_POLICY_GREEDY, "random": pb.PLAYOUT_POLICY_RANDOM}


def policy_from_pb(value: pb.PlayoutPolicy) -> str:
    """The rollouts' policy a request names; unset is greedy. Bounds refuse other values."""
    return _POLICY_OF_PB[value]


def policy_pb(policy: str) -> pb.PlayoutPolicy:
    return _POLICY_PB[policy]


ANALYSIS_REPLY_MARGIN_MS: Final = 100.0
"""Of the caller's deadline, what an analysis leaves for its reply to reach the caller."""


def _work_and_millis(
    work: int | None, deadline_millis: int | None, default: int, caller_seconds: float | None
) -> tuple[int | None, float]:
    """An analysis's or a solve's budget: its work (rollouts, nodes; None: as much as the
    time allows) and its time cap in ms, the budget's deadline, the service's maximum and
    the caller's own deadline (`caller_seconds`, None: none), whichever is first. Neither
    work nor a deadline: `default` work."""
    millis = float(MAX_ANALYSIS_MILLIS)
    if deadline_millis is not None:
        millis = min(millis, deadline_millis)
    elif work is None:
        work = default
    if caller_seconds is not None:
        # Leave the reply time to travel; a caller with no time left still gets one batch.
        millis = max(1.0, min(millis, caller_seconds * 1000.0 - ANALYSIS_REPLY_MARGIN_MS))
    return work, millis


def budget_from_pb(
    budget: pb.AnalysisBudget, caller_seconds: float | None
) -> tuple[int | None, float]:
    """Rollouts per move (None: as many as the time allows) and the time cap in ms
    (`_work_and_millis`); neither rollouts nor a deadline: the default rollouts."""
    return _work_and_millis(
        budget.rollouts if budget.HasField("rollouts") else None,
        budget.deadline_millis if budget.HasField("deadline_millis") else None,
        DEFAULT_ROLLOUTS,
        caller_seconds,
    )


def move_equities_pb(result: Equities) -> list[pb.MoveEquity]:
    return [
        pb.MoveEquity(
            move=move_pb(e.move),
            equity=e.equity,
            standard_error=e.se,
            loss=e.loss,
            loss_standard_error=e.loss_se,
        )
        for e in result.moves
    ]


def position_from_pb(request: pb.AnalyzePositionRequest) -> dict[str, Any]:
    """The seat's picture as plain values (tiles as numbers, actions in notation, each
    parsed here so that a malformed one is refused before any work)."""
    for i, text in enumerate(request.actions):
        try:
            Move.parse(text)
        except NotationError as e:
            raise MoveNotationError(f"actions[{i}]: {e}") from None
    seats = request.seat_count
    return {
        "variant": variant_from_pb(request.variant).name,
        "seats": seats,
        "target": request.target if request.HasField("target") else TARGET[seats],
        "scores": list(request.scores),
        "viewer": request.viewer_seat,
        "leader": request.leader,
        "hand": [int(tile_from_pb(t, "hand_tiles")) for t in request.hand_tiles],
        "actions": list(request.actions),
        "own_draws": [int(tile_from_pb(t, "own_draws")) for t in request.own_draws],
        "hand_sizes": list(request.hand_sizes),
    }


# -- Solve --------------------------------------------------------------------------


def solve_position_from_pb(request: pb.SolveRequest) -> dict[str, Any]:
    """The position as plain values for the worker (tiles as numbers, placements parsed here
    so that a malformed one is refused before any work)."""
    placements = []
    for i, text in enumerate(request.placements):
        try:
            placements.append(str(Move.parse(text)))
        except NotationError as e:
            raise MoveNotationError(f"placements[{i}]: {e}") from None
    seats = request.seat_count
    scores = list(request.scores)
    sides = team_count(seats)
    per_side = [scores[s] for s in range(sides)]  # seat s of side s (partners share one)
    if seats == 4 and (scores[0] != scores[2] or scores[1] != scores[3]):
        raise BadArgument("scores", "scores: partners (seats 0 and 2, 1 and 3) carry one score")
    return {
        "variant": variant_from_pb(request.variant).name,
        "seats": seats,
        "target": request.target if request.HasField("target") else TARGET[seats],
        "scores": per_side,
        "placements": placements,
        "hands": [
            [int(tile_from_pb(t, f"hands[{i}]")) for t in hand.tiles]
            for i, hand in enumerate(request.hands)
        ],
        "boneyard": [int(tile_from_pb(t, "boneyard_tiles")) for t in request.boneyard_tiles],
        "turn": request.turn,
        "drawn": (
            int(tile_from_pb(request.drawn_tile, "drawn_tile"))
            if request.HasField("drawn_tile")
            else -1
        ),
    }


def solve_budget_from_pb(
    budget: pb.SolveBudget, caller_seconds: float | None
) -> tuple[int | None, float]:
    """Nodes (None: as many as the time allows) and the time cap in ms, as Analyze's
    (`_work_and_millis`); neither nodes nor a deadline: the default nodes."""
    return _work_and_millis(
        budget.nodes if budget.HasField("nodes") else None,
        budget.deadline_millis if budget.HasField("deadline_millis") else None,
        DEFAULT_SOLVE_NODES,
        caller_seconds,
    )


def solve_response_pb(result: Solution | Unsolved) -> pb.SolveResponse:
    if isinstance(result, Solution):
        return pb.SolveResponse(
            moves=[
                pb.MoveValue(
                    move=move_pb(m.move), exact=True, value=m.value, low=m.value, high=m.value
                )
                for m in result.moves
            ],
            solved=True,
            best=move_pb(result.best),
            value=result.value,
            low=result.value,
            high=result.value,
            nodes=result.nodes,
            line_moves=[move_pb(m) for m in result.line],
        )
    return pb.SolveResponse(
        moves=[
            pb.MoveValue(
                move=move_pb(m.move),
                exact=m.exact,
                value=(m.low + m.high) / 2,
                low=m.low,
                high=m.high,
            )
            for m in result.moves
        ],
        solved=False,
        low=result.low,
        high=result.high,
        nodes=result.nodes,
    )
