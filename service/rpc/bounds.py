"""The bounds of every number and string a client may send, checked where a request enters.

Each bound here is the one the proto documents at its field. A request that
breaks one is refused with `BadArgument` (INVALID_ARGUMENT, naming the
field) before the hub, the engine or the event log sees it, so no value a
client chose can overflow a column, break a view or cost unbounded work.
(Tiles and sides are checked where they are converted, `convert.py`, as
malformed moves; a deal's tiles, as bad deals by the engine.)
"""

from __future__ import annotations

import re
from typing import Final

from service.defaults import ROUND_LIMIT_MAX, TARGET_MAX, TARGET_MIN
from service.errors import BadArgument, LimitReached
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from sniff.dealing import SEED_LIMIT
from sniff.seeds import ENTROPY_SIZE

MAX_SEED: Final = SEED_LIMIT - 1
"""Seeds are what the engine deals from: 0 .. 2^64-1 (the whole uint64 field)."""
MAX_SEATS: Final = 4
MAX_MOVE_COUNT: Final = 1_000_000
"""The largest `expected_move_count` (far beyond any match to TARGET_MAX)."""
MAX_SEQUENCE: Final = 2**31 - 1
"""The largest `from_sequence` (event seqs are 32-bit in the log)."""
MAX_TOKEN_LENGTH: Final = 256
"""Tokens the service makes are 32 characters; the house key at most this many too."""
MAX_NOTATION_LENGTH: Final = 32
"""The longest notation, `[a|b]@[c|d]:branch_a`, has 20 characters."""
MAX_PLACEMENTS: Final = 28
"""ScoreLayout: no layout holds more tiles than the set has."""
MAX_HAND_TILES: Final = 7
MAX_SET_TILES: Final = 28
MAX_QUERY_LENGTH: Final = 100_000
"""Characters of one Query's SQL text."""
MAX_QUERY_PARAMETERS: Final = 100
MAX_PARAMETER_LENGTH: Final = 10_000
"""Characters of one text parameter of a Query."""

MAX_IMPORT_CHUNK: Final = 1 << 20
"""Bytes of one ImportMatches message's `arrow_ipc` and facts fields together."""
MAX_IMPORT_BYTES: Final = 1 << 30
"""Bytes of one ImportMatches call: some two million events."""

MATCH_ID: Final = re.compile(r"[0-9a-f]{16}")
"""The form of the ids CreateMatch makes (`secrets.token_hex(8)`)."""


def _refuse(field: str, message: str) -> BadArgument:
    return BadArgument(field, f"{field}: {message}")


def match_id(value: str, field: str = "match_id") -> None:
    if not MATCH_ID.fullmatch(value):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise _refuse(field, f"{shown!r} is not a match id (16 lowercase hex digits)")


def token(value: str, field: str = "token") -> None:
    if len(value) > MAX_TOKEN_LENGTH:
        raise _refuse(field, f"longer than {MAX_TOKEN_LENGTH} characters")


def seat(value: int, field: str = "seat") -> None:
    if value >= MAX_SEATS:
        raise _refuse(field, f"{value} is not a seat (0 to {MAX_SEATS - 1})")


def notation(value: str, field: str = "notation") -> None:
    if len(value) > MAX_NOTATION_LENGTH:
        raise _refuse(field, f"longer than {MAX_NOTATION_LENGTH} characters")


def deal(msg: pb.Deal, field: str) -> None:
    if len(msg.hands) > MAX_SEATS:
        raise _refuse(f"{field}.hands", f"{len(msg.hands)} hands (at most {MAX_SEATS})")
    for i, hand in enumerate(msg.hands):
        if len(hand.tiles) > MAX_HAND_TILES:
            raise _refuse(f"{field}.hands[{i}]", f"{len(hand.tiles)} tiles (at most 7)")
    if len(msg.boneyard_tiles) > MAX_SET_TILES:
        raise _refuse(f"{field}.boneyard_tiles", f"{len(msg.boneyard_tiles)} tiles (at most 28)")
    seat(msg.leader, f"{field}.leader")


# -- one check per request ----------------------------------------------------------


def _target(
    request: pb.CreateMatchRequest | pb.AnalyzePositionRequest | pb.SolveRequest,
) -> None:
    """The one target check of the requests that may name a target (service/defaults.py holds
    the bounds the command line uses too)."""
    if request.HasField("target") and not TARGET_MIN <= request.target <= TARGET_MAX:
        raise _refuse(
            "target", f"{request.target} is out of range ({TARGET_MIN} to {TARGET_MAX:,})"
        )


def create_match(request: pb.CreateMatchRequest) -> None:
    if request.seat_count not in (2, 3, 4):
        raise _refuse("seat_count", f"{request.seat_count} (must be 2, 3 or 4)")
    _target(request)
    if request.HasField("seed") and request.seed > MAX_SEED:
        raise _refuse("seed", f"{request.seed} is out of range (0 to 2^64-1)")
    if request.HasField("first_deal"):
        deal(request.first_deal, "first_deal")
        if request.seat_entropy:
            raise _refuse("seat_entropy", "a match with seat entropy is not given a first_deal")
    variant(request.variant)
    if request.HasField("round_limit") and not 1 <= request.round_limit <= ROUND_LIMIT_MAX:
        raise _refuse(
            "round_limit", f"{request.round_limit} is out of range (1 to {ROUND_LIMIT_MAX:,})"
        )
    if request.players and len(request.players) != request.seat_count:
        raise _refuse(
            "players", f"{len(request.players)} names for {request.seat_count} seats (one a seat)"
        )
    for i, name in enumerate(request.players):
        if not 1 <= len(name) <= MAX_NAME_LENGTH:
            raise _refuse(f"players[{i}]", f"1 to {MAX_NAME_LENGTH} characters, not {len(name)}")
    if len(request.run_id) > MAX_NAME_LENGTH:
        raise _refuse("run_id", f"longer than {MAX_NAME_LENGTH} characters")


def variant(value: int, field: str = "variant") -> None:
    if value not in pb.Variant.values():
        raise _refuse(field, f"{value} is not a variant (VARIANT_UNSPECIFIED ... VARIANT_BRITISH)")


def contribute_entropy(request: pb.ContributeEntropyRequest) -> None:
    match_id(request.match_id)
    token(request.token)
    if len(request.entropy) != ENTROPY_SIZE:
        raise _refuse("entropy", f"give {ENTROPY_SIZE} bytes, not {len(request.entropy)}")


def deal_round(request: pb.DealRoundRequest) -> None:
    match_id(request.match_id)
    token(request.token)
    if request.HasField("deal"):
        deal(request.deal, "deal")


def list_legal_moves(request: pb.ListLegalMovesRequest) -> None:
    match_id(request.match_id)
    token(request.token)
    seat(request.seat)


def apply_move(request: pb.ApplyMoveRequest) -> None:
    match_id(request.match_id)
    token(request.token)
    seat(request.seat)
    if request.WhichOneof("action") == "notation":
        notation(request.notation)
    if request.expected_move_count > MAX_MOVE_COUNT:
        raise _refuse(
            "expected_move_count",
            f"{request.expected_move_count} is out of range (0 to {MAX_MOVE_COUNT:,})",
        )


def score_layout(request: pb.ScoreLayoutRequest) -> None:
    variant(request.variant)
    if len(request.placements) > MAX_PLACEMENTS:
        raise _refuse("placements", f"{len(request.placements)} (at most {MAX_PLACEMENTS})")
    for i, placement in enumerate(request.placements):
        if placement.WhichOneof("kind") == "notation":
            notation(placement.notation, f"placements[{i}].notation")


def match_token(request: pb.GetScoresRequest | pb.GetStateRequest) -> None:
    match_id(request.match_id)
    token(request.token)


def watch_match(request: pb.WatchMatchRequest) -> None:
    match_id(request.match_id)
    token(request.token)
    if request.from_sequence > MAX_SEQUENCE:
        raise _refuse("from_sequence", f"{request.from_sequence} is out of range (0 to 2^31-1)")


MAX_PLAY_SEATS: Final = 256
"""Seats one Play stream may play (PlayOpen.seats)."""
MAX_ROUND_INDEX: Final = 10_000
"""The largest round a Play answer may name (no match to TARGET_MAX lasts as long)."""


def play_open(request: pb.PlayOpen) -> None:
    count = len(request.seats)
    if not 1 <= count <= MAX_PLAY_SEATS:
        raise _refuse("open.seats", f"{count} seats (1 to {MAX_PLAY_SEATS})")
    for i, s in enumerate(request.seats):
        match_id(s.match_id, f"open.seats[{i}].match_id")
        token(s.token, f"open.seats[{i}].token")
        if s.HasField("resume_move_count") and s.resume_move_count > MAX_MOVE_COUNT:
            raise _refuse(
                f"open.seats[{i}].resume_move_count",
                f"{s.resume_move_count} is out of range (0 to {MAX_MOVE_COUNT:,})",
            )


def play_answer(request: pb.PlayAnswer) -> None:
    match_id(request.match_id, "answer.match_id")
    seat(request.seat, "answer.seat")
    if request.move_count > MAX_MOVE_COUNT:
        raise _refuse(
            "answer.move_count", f"{request.move_count} is out of range (0 to {MAX_MOVE_COUNT:,})"
        )
    which = request.WhichOneof("action")
    if which == "notation":
        notation(request.notation, "answer.notation")
    if which == "deal" and request.deal.round_index > MAX_ROUND_INDEX:
        raise _refuse(
            "answer.deal.round_index",
            f"{request.deal.round_index} is out of range (0 to {MAX_ROUND_INDEX:,})",
        )


def query(request: pb.QueryRequest) -> None:
    token(request.token)
    if len(request.sql) > MAX_QUERY_LENGTH:
        raise _refuse("sql", f"longer than {MAX_QUERY_LENGTH:,} characters")
    if len(request.parameters) > MAX_QUERY_PARAMETERS:
        raise _refuse("parameters", f"{len(request.parameters)} (at most {MAX_QUERY_PARAMETERS})")
    for i, p in enumerate(request.parameters):
        if p.WhichOneof("value") == "string_value" and len(p.string_value) > MAX_PARAMETER_LENGTH:
            raise _refuse(f"parameters[{i}]", f"longer than {MAX_PARAMETER_LENGTH:,} characters")


FACTS_FIELDS: Final = (
    "match_facts_arrow_ipc",
    "round_facts_arrow_ipc",
    "sniff_decisions_arrow_ipc",
)
"""ImportMatches' facts fields, in the order of the facts tables."""
IMPORT_FIELDS: Final = ("arrow_ipc", *FACTS_FIELDS)
"""The byte fields of an ImportMatches message: the events, then the three facts tables."""


STORE_FIELDS: Final = ("matches_arrow_ipc", "rounds_arrow_ipc", "decisions_arrow_ipc")
"""The byte fields of a StoreSimulated message: a chunk's matches, rounds and decisions."""


def import_chunk(
    request: pb.ImportMatchesRequest | pb.StoreSimulatedRequest,
    received: int,
    fields: tuple[str, ...] = IMPORT_FIELDS,
) -> int:
    """One message of an import, after `received` bytes of the call's earlier messages; the
    bytes it brings."""
    size = sum(len(getattr(request, name)) for name in fields)
    if size > MAX_IMPORT_CHUNK:
        name = next((f for f in fields if len(getattr(request, f)) == size), "the message")
        raise _refuse(name, f"more than {MAX_IMPORT_CHUNK:,} bytes")
    if received + size > MAX_IMPORT_BYTES:
        raise LimitReached("import_bytes", f"an import holds at most {MAX_IMPORT_BYTES:,} bytes")
    return size


# -- analyses ---------------------------------------------------------------------------

MIN_ANALYSIS_ROLLOUTS: Final = 2
"""A standard error needs two samples."""
MAX_ANALYSIS_ROLLOUTS: Final = 10_000
"""Samples per move: 10,000 on a decision of 10 moves is about a second of one core."""
MAX_ANALYSIS_MILLIS: Final = 5_000
"""The longest an analysis runs, whatever its budget or the caller's deadline."""
MAX_POSITION_ACTIONS: Final = 120
"""A round has at most 28 placements, 14 draws (2 seats) and a few passes per seat."""
MIN_SCORE: Final = -1_000_000
"""Scores may go below zero (docs/rules.md §7), but not without end."""


def _deadline(msg: pb.AnalysisBudget | pb.SolveBudget, field: str) -> None:
    """The deadline of an analysis's or a solve's budget: 1 ms to the service's maximum."""
    if msg.HasField("deadline_millis") and not 1 <= msg.deadline_millis <= MAX_ANALYSIS_MILLIS:
        raise _refuse(
            f"{field}.deadline_millis",
            f"{msg.deadline_millis} is out of range (1 to {MAX_ANALYSIS_MILLIS:,} ms)",
        )


def budget(msg: pb.AnalysisBudget, field: str = "budget") -> None:
    if msg.HasField("rollouts") and not (
        MIN_ANALYSIS_ROLLOUTS <= msg.rollouts <= MAX_ANALYSIS_ROLLOUTS
    ):
        raise _refuse(
            f"{field}.rollouts",
            f"{msg.rollouts} is out of range ({MIN_ANALYSIS_ROLLOUTS} to "
            f"{MAX_ANALYSIS_ROLLOUTS:,})",
        )
    _deadline(msg, field)


def policy(value: int, field: str = "policy") -> None:
    if value not in pb.PlayoutPolicy.values():
        raise _refuse(field, f"{value} is not a playout policy")


def analyze(request: pb.AnalyzeRequest) -> None:
    match_id(request.match_id)
    token(request.token)
    budget(request.budget)
    policy(request.policy)


def analyze_position(request: pb.AnalyzePositionRequest) -> None:
    variant(request.variant)
    if request.seat_count not in (2, 3, 4):
        raise _refuse("seat_count", f"{request.seat_count} (must be 2, 3 or 4)")
    seats = request.seat_count
    _target(request)
    for name, values in (("scores", request.scores), ("hand_sizes", request.hand_sizes)):
        if len(values) != seats:
            raise _refuse(name, f"{len(values)} entries for {seats} seats (one per seat)")
    for i, score in enumerate(request.scores):
        if score < MIN_SCORE:
            raise _refuse(f"scores[{i}]", f"{score} is below {MIN_SCORE:,}")
    for i, size in enumerate(request.hand_sizes):
        if size > MAX_SET_TILES:
            raise _refuse(f"hand_sizes[{i}]", f"{size} tiles (at most {MAX_SET_TILES})")
    for name, value in (("viewer_seat", request.viewer_seat), ("leader", request.leader)):
        if value >= seats:
            raise _refuse(name, f"{value} is not a seat of a {seats}-seat match")
    for name, tiles in (("hand_tiles", request.hand_tiles), ("own_draws", request.own_draws)):
        if len(tiles) > MAX_SET_TILES:
            raise _refuse(name, f"{len(tiles)} tiles (at most {MAX_SET_TILES})")
    if len(request.actions) > MAX_POSITION_ACTIONS:
        raise _refuse("actions", f"{len(request.actions)} (at most {MAX_POSITION_ACTIONS})")
    for i, text in enumerate(request.actions):
        notation(text, f"actions[{i}]")
    budget(request.budget)
    policy(request.policy)


# -- exact solving ----------------------------------------------------------------------

MAX_SOLVE_NODES: Final = 20_000_000
"""Positions a Solve may visit: within its 5 seconds on this machine's pure Python search
the time runs out first; the bound keeps a reproducible budget from meaning "forever"."""
DEFAULT_SOLVE_NODES: Final = 200_000


def solve_budget(msg: pb.SolveBudget, field: str = "budget") -> None:
    if msg.HasField("nodes") and not 1 <= msg.nodes <= MAX_SOLVE_NODES:
        raise _refuse(f"{field}.nodes", f"{msg.nodes} is out of range (1 to {MAX_SOLVE_NODES:,})")
    _deadline(msg, field)


def solve(request: pb.SolveRequest) -> None:
    variant(request.variant)
    if request.seat_count not in (2, 3, 4):
        raise _refuse("seat_count", f"{request.seat_count} (must be 2, 3 or 4)")
    seats = request.seat_count
    _target(request)
    for name, count in (("scores", len(request.scores)), ("hands", len(request.hands))):
        if count != seats:
            raise _refuse(name, f"{count} entries for {seats} seats (one per seat)")
    for i, score in enumerate(request.scores):
        if score < MIN_SCORE:
            raise _refuse(f"scores[{i}]", f"{score} is below {MIN_SCORE:,}")
    for i, hand in enumerate(request.hands):
        if len(hand.tiles) > MAX_SET_TILES:
            raise _refuse(f"hands[{i}]", f"{len(hand.tiles)} tiles (at most {MAX_SET_TILES})")
    if len(request.boneyard_tiles) > MAX_SET_TILES:
        raise _refuse("boneyard_tiles", f"{len(request.boneyard_tiles)} tiles (at most 28)")
    if len(request.placements) > MAX_SET_TILES:
        raise _refuse("placements", f"{len(request.placements)} (at most {MAX_SET_TILES})")
    for i, text in enumerate(request.placements):
        notation(text, f"placements[{i}]")
    if request.turn >= seats:
        raise _refuse("turn", f"{request.turn} is not a seat of a {seats}-seat match")
    solve_budget(request.budget)


MAX_NAME_LENGTH: Final = 64
"""A player's name, a run id, an arena bot's name."""
BOT_NAME: Final = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""An arena bot's name: it is logged as a player and shown in reports, so plain."""
MAX_ARENA_SEATS: Final = 256


def bot_name(value: str, field: str) -> None:
    if not BOT_NAME.fullmatch(value):
        raise _refuse(field, f"{value[:80]!r}: 1 to 64 letters, digits, '.', '_' or '-'")


def arena_register(request: pb.ArenaRegister) -> None:
    bot_name(request.name, "register.name")
    if request.HasField("resume_secret"):
        token(request.resume_secret, "register.resume_secret")


def seat_arena_bots(request: pb.SeatArenaBotsRequest) -> None:
    count = len(request.seats)
    if not 1 <= count <= MAX_ARENA_SEATS:
        raise _refuse("seats", f"{count} seats (1 to {MAX_ARENA_SEATS})")
    for i, s in enumerate(request.seats):
        match_id(s.match_id, f"seats[{i}].match_id")
        token(s.token, f"seats[{i}].token")
        bot_name(s.bot, f"seats[{i}].bot")
        if s.HasField("bot_seed") and s.bot_seed > MAX_SEED:
            raise _refuse(f"seats[{i}].bot_seed", f"{s.bot_seed} is out of range (0 to 2^64-1)")
