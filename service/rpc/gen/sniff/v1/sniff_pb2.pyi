from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_MATCH_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_TOKEN: _ClassVar[ErrorReason]
    ERROR_REASON_MALFORMED_MOVE: _ClassVar[ErrorReason]
    ERROR_REASON_ILLEGAL_MOVE: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_YOUR_TURN: _ClassVar[ErrorReason]
    ERROR_REASON_WRONG_PHASE: _ClassVar[ErrorReason]
    ERROR_REASON_MOVE_COUNT_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_DEAL: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_QUERY: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_LIMIT_REACHED: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_HOUSE_KEY: _ClassVar[ErrorReason]
    ERROR_REASON_STORAGE_FULL: _ClassVar[ErrorReason]
    ERROR_REASON_STORAGE_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_ORIENTATION: _ClassVar[ErrorReason]
    ERROR_REASON_AWAITING_ENTROPY: _ClassVar[ErrorReason]
    ERROR_REASON_ENTROPY_ALREADY_GIVEN: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_ARENA_KEY: _ClassVar[ErrorReason]
    ERROR_REASON_ARENA_OFF: _ClassVar[ErrorReason]
    ERROR_REASON_BOT_NAME_TAKEN: _ClassVar[ErrorReason]
    ERROR_REASON_BOT_NOT_CONNECTED: _ClassVar[ErrorReason]

class Variant(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VARIANT_UNSPECIFIED: _ClassVar[Variant]
    VARIANT_AMERICAN: _ClassVar[Variant]
    VARIANT_STUBBY: _ClassVar[Variant]
    VARIANT_BERNDT: _ClassVar[Variant]
    VARIANT_BRITISH: _ClassVar[Variant]

class Orientation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORIENTATION_UNSPECIFIED: _ClassVar[Orientation]
    ORIENTATION_CROSS: _ClassVar[Orientation]
    ORIENTATION_INLINE: _ClassVar[Orientation]

class Side(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIDE_UNSPECIFIED: _ClassVar[Side]
    SIDE_LOW: _ClassVar[Side]
    SIDE_HIGH: _ClassVar[Side]
    SIDE_LINE_A: _ClassVar[Side]
    SIDE_LINE_B: _ClassVar[Side]
    SIDE_BRANCH_A: _ClassVar[Side]
    SIDE_BRANCH_B: _ClassVar[Side]

class LeaderChoice(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LEADER_CHOICE_UNSPECIFIED: _ClassVar[LeaderChoice]
    LEADER_CHOICE_LOT: _ClassVar[LeaderChoice]
    LEADER_CHOICE_FINISHER: _ClassVar[LeaderChoice]
    LEADER_CHOICE_EXPLICIT: _ClassVar[LeaderChoice]

class RoundEndKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROUND_END_KIND_UNSPECIFIED: _ClassVar[RoundEndKind]
    ROUND_END_KIND_DOMINO: _ClassVar[RoundEndKind]
    ROUND_END_KIND_BLOCKED: _ClassVar[RoundEndKind]

class MatchPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_PHASE_UNSPECIFIED: _ClassVar[MatchPhase]
    MATCH_PHASE_AWAITING_DEAL: _ClassVar[MatchPhase]
    MATCH_PHASE_PLAYING: _ClassVar[MatchPhase]
    MATCH_PHASE_OVER: _ClassVar[MatchPhase]

class OutOfTime(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUT_OF_TIME_UNSPECIFIED: _ClassVar[OutOfTime]
    OUT_OF_TIME_DEFAULT_MOVE: _ClassVar[OutOfTime]
    OUT_OF_TIME_FORFEIT: _ClassVar[OutOfTime]

class PlayoutPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLAYOUT_POLICY_UNSPECIFIED: _ClassVar[PlayoutPolicy]
    PLAYOUT_POLICY_GREEDY: _ClassVar[PlayoutPolicy]
    PLAYOUT_POLICY_RANDOM: _ClassVar[PlayoutPolicy]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_MATCH_NOT_FOUND: ErrorReason
ERROR_REASON_BAD_TOKEN: ErrorReason
ERROR_REASON_MALFORMED_MOVE: ErrorReason
ERROR_REASON_ILLEGAL_MOVE: ErrorReason
ERROR_REASON_NOT_YOUR_TURN: ErrorReason
ERROR_REASON_WRONG_PHASE: ErrorReason
ERROR_REASON_MOVE_COUNT_MISMATCH: ErrorReason
ERROR_REASON_BAD_DEAL: ErrorReason
ERROR_REASON_BAD_QUERY: ErrorReason
ERROR_REASON_BAD_ARGUMENT: ErrorReason
ERROR_REASON_LIMIT_REACHED: ErrorReason
ERROR_REASON_BAD_HOUSE_KEY: ErrorReason
ERROR_REASON_STORAGE_FULL: ErrorReason
ERROR_REASON_STORAGE_UNAVAILABLE: ErrorReason
ERROR_REASON_BAD_ORIENTATION: ErrorReason
ERROR_REASON_AWAITING_ENTROPY: ErrorReason
ERROR_REASON_ENTROPY_ALREADY_GIVEN: ErrorReason
ERROR_REASON_BAD_ARENA_KEY: ErrorReason
ERROR_REASON_ARENA_OFF: ErrorReason
ERROR_REASON_BOT_NAME_TAKEN: ErrorReason
ERROR_REASON_BOT_NOT_CONNECTED: ErrorReason
VARIANT_UNSPECIFIED: Variant
VARIANT_AMERICAN: Variant
VARIANT_STUBBY: Variant
VARIANT_BERNDT: Variant
VARIANT_BRITISH: Variant
ORIENTATION_UNSPECIFIED: Orientation
ORIENTATION_CROSS: Orientation
ORIENTATION_INLINE: Orientation
SIDE_UNSPECIFIED: Side
SIDE_LOW: Side
SIDE_HIGH: Side
SIDE_LINE_A: Side
SIDE_LINE_B: Side
SIDE_BRANCH_A: Side
SIDE_BRANCH_B: Side
LEADER_CHOICE_UNSPECIFIED: LeaderChoice
LEADER_CHOICE_LOT: LeaderChoice
LEADER_CHOICE_FINISHER: LeaderChoice
LEADER_CHOICE_EXPLICIT: LeaderChoice
ROUND_END_KIND_UNSPECIFIED: RoundEndKind
ROUND_END_KIND_DOMINO: RoundEndKind
ROUND_END_KIND_BLOCKED: RoundEndKind
MATCH_PHASE_UNSPECIFIED: MatchPhase
MATCH_PHASE_AWAITING_DEAL: MatchPhase
MATCH_PHASE_PLAYING: MatchPhase
MATCH_PHASE_OVER: MatchPhase
OUT_OF_TIME_UNSPECIFIED: OutOfTime
OUT_OF_TIME_DEFAULT_MOVE: OutOfTime
OUT_OF_TIME_FORFEIT: OutOfTime
PLAYOUT_POLICY_UNSPECIFIED: PlayoutPolicy
PLAYOUT_POLICY_GREEDY: PlayoutPolicy
PLAYOUT_POLICY_RANDOM: PlayoutPolicy

class TimeControl(_message.Message):
    __slots__ = ("move_limit_ms", "bank_ms", "out_of_time", "policy")
    MOVE_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    move_limit_ms: int
    bank_ms: int
    out_of_time: OutOfTime
    policy: str
    def __init__(self, move_limit_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., out_of_time: _Optional[_Union[OutOfTime, str]] = ..., policy: _Optional[str] = ...) -> None: ...

class SeatClock(_message.Message):
    __slots__ = ("seat", "move_time_left_ms", "bank_left_ms", "running")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move_time_left_ms: int
    bank_left_ms: int
    running: bool
    def __init__(self, seat: _Optional[int] = ..., move_time_left_ms: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., running: _Optional[bool] = ...) -> None: ...

class Tile(_message.Message):
    __slots__ = ("low", "high")
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    low: int
    high: int
    def __init__(self, low: _Optional[int] = ..., high: _Optional[int] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("lead", "place", "draw", "notation")
    class Lead(_message.Message):
        __slots__ = ("tile", "orientation")
        TILE_FIELD_NUMBER: _ClassVar[int]
        ORIENTATION_FIELD_NUMBER: _ClassVar[int]
        tile: Tile
        orientation: Orientation
        def __init__(self, tile: _Optional[_Union[Tile, _Mapping]] = ..., orientation: _Optional[_Union[Orientation, str]] = ...) -> None: ...
    class Place(_message.Message):
        __slots__ = ("tile", "board_tile", "side", "orientation")
        TILE_FIELD_NUMBER: _ClassVar[int]
        BOARD_TILE_FIELD_NUMBER: _ClassVar[int]
        SIDE_FIELD_NUMBER: _ClassVar[int]
        ORIENTATION_FIELD_NUMBER: _ClassVar[int]
        tile: Tile
        board_tile: Tile
        side: Side
        orientation: Orientation
        def __init__(self, tile: _Optional[_Union[Tile, _Mapping]] = ..., board_tile: _Optional[_Union[Tile, _Mapping]] = ..., side: _Optional[_Union[Side, str]] = ..., orientation: _Optional[_Union[Orientation, str]] = ...) -> None: ...
    class Draw(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Pass(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    LEAD_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    DRAW_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    NOTATION_FIELD_NUMBER: _ClassVar[int]
    lead: Move.Lead
    place: Move.Place
    draw: Move.Draw
    notation: str
    def __init__(self, lead: _Optional[_Union[Move.Lead, _Mapping]] = ..., place: _Optional[_Union[Move.Place, _Mapping]] = ..., draw: _Optional[_Union[Move.Draw, _Mapping]] = ..., notation: _Optional[str] = ..., **kwargs) -> None: ...

class Hand(_message.Message):
    __slots__ = ("tiles",)
    TILES_FIELD_NUMBER: _ClassVar[int]
    tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    def __init__(self, tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ...) -> None: ...

class Deal(_message.Message):
    __slots__ = ("hands", "boneyard_tiles", "leader")
    HANDS_FIELD_NUMBER: _ClassVar[int]
    BONEYARD_TILES_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    boneyard_tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    leader: int
    def __init__(self, hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., boneyard_tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., leader: _Optional[int] = ...) -> None: ...

class CountedEnd(_message.Message):
    __slots__ = ("tile", "side", "value")
    TILE_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    tile: Tile
    side: Side
    value: int
    def __init__(self, tile: _Optional[_Union[Tile, _Mapping]] = ..., side: _Optional[_Union[Side, str]] = ..., value: _Optional[int] = ...) -> None: ...

class OpenSide(_message.Message):
    __slots__ = ("tile", "side", "value")
    TILE_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    tile: Tile
    side: Side
    value: int
    def __init__(self, tile: _Optional[_Union[Tile, _Mapping]] = ..., side: _Optional[_Union[Side, str]] = ..., value: _Optional[int] = ...) -> None: ...

class PlacedTile(_message.Message):
    __slots__ = ("tile", "board_tile", "side", "sniff", "orientation")
    TILE_FIELD_NUMBER: _ClassVar[int]
    BOARD_TILE_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    SNIFF_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    tile: Tile
    board_tile: Tile
    side: Side
    sniff: bool
    orientation: Orientation
    def __init__(self, tile: _Optional[_Union[Tile, _Mapping]] = ..., board_tile: _Optional[_Union[Tile, _Mapping]] = ..., side: _Optional[_Union[Side, str]] = ..., sniff: _Optional[bool] = ..., orientation: _Optional[_Union[Orientation, str]] = ...) -> None: ...

class Placement(_message.Message):
    __slots__ = ("move", "notation")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    NOTATION_FIELD_NUMBER: _ClassVar[int]
    move: Move
    notation: str
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., notation: _Optional[str] = ...) -> None: ...

class RoundEnd(_message.Message):
    __slots__ = ("round_index", "kind", "finisher", "pips", "deductions", "scores", "remaining_hands")
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    FINISHER_FIELD_NUMBER: _ClassVar[int]
    PIPS_FIELD_NUMBER: _ClassVar[int]
    DEDUCTIONS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REMAINING_HANDS_FIELD_NUMBER: _ClassVar[int]
    round_index: int
    kind: RoundEndKind
    finisher: int
    pips: _containers.RepeatedScalarFieldContainer[int]
    deductions: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    remaining_hands: _containers.RepeatedCompositeFieldContainer[Hand]
    def __init__(self, round_index: _Optional[int] = ..., kind: _Optional[_Union[RoundEndKind, str]] = ..., finisher: _Optional[int] = ..., pips: _Optional[_Iterable[int]] = ..., deductions: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., remaining_hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("winner", "winning_seats", "scores", "round_limit_reached", "forfeited_seat", "reveal")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    WINNING_SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_REACHED_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_SEAT_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    winner: int
    winning_seats: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    round_limit_reached: bool
    forfeited_seat: int
    reveal: Reveal
    def __init__(self, winner: _Optional[int] = ..., winning_seats: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., round_limit_reached: _Optional[bool] = ..., forfeited_seat: _Optional[int] = ..., reveal: _Optional[_Union[Reveal, _Mapping]] = ...) -> None: ...

class Reveal(_message.Message):
    __slots__ = ("seed", "seed_salt", "chain_secret")
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEED_SALT_FIELD_NUMBER: _ClassVar[int]
    CHAIN_SECRET_FIELD_NUMBER: _ClassVar[int]
    seed: int
    seed_salt: str
    chain_secret: str
    def __init__(self, seed: _Optional[int] = ..., seed_salt: _Optional[str] = ..., chain_secret: _Optional[str] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("seat_count", "target", "seed", "first_deal", "variant", "round_limit", "seat_entropy", "time_control", "players", "run_id")
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEAL_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEAT_ENTROPY_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    seat_count: int
    target: int
    seed: int
    first_deal: Deal
    variant: Variant
    round_limit: int
    seat_entropy: bool
    time_control: TimeControl
    players: _containers.RepeatedScalarFieldContainer[str]
    run_id: str
    def __init__(self, seat_count: _Optional[int] = ..., target: _Optional[int] = ..., seed: _Optional[int] = ..., first_deal: _Optional[_Union[Deal, _Mapping]] = ..., variant: _Optional[_Union[Variant, str]] = ..., round_limit: _Optional[int] = ..., seat_entropy: _Optional[bool] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., players: _Optional[_Iterable[str]] = ..., run_id: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("name", "match_id", "seat_tokens", "observer_token", "target", "leader", "leader_choice", "turn", "variant", "round_limit", "time_control", "seed_commitment")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OBSERVER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEADER_CHOICE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    match_id: str
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    observer_token: str
    target: int
    leader: int
    leader_choice: LeaderChoice
    turn: int
    variant: Variant
    round_limit: int
    time_control: TimeControl
    seed_commitment: str
    def __init__(self, name: _Optional[str] = ..., match_id: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[str]] = ..., observer_token: _Optional[str] = ..., target: _Optional[int] = ..., leader: _Optional[int] = ..., leader_choice: _Optional[_Union[LeaderChoice, str]] = ..., turn: _Optional[int] = ..., variant: _Optional[_Union[Variant, str]] = ..., round_limit: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seed_commitment: _Optional[str] = ...) -> None: ...

class ContributeEntropyRequest(_message.Message):
    __slots__ = ("match_id", "token", "entropy")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    entropy: bytes
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., entropy: _Optional[bytes] = ...) -> None: ...

class ContributeEntropyResponse(_message.Message):
    __slots__ = ("seat", "entropy_seats", "dealt", "leader", "leader_choice")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_SEATS_FIELD_NUMBER: _ClassVar[int]
    DEALT_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEADER_CHOICE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    entropy_seats: _containers.RepeatedScalarFieldContainer[int]
    dealt: bool
    leader: int
    leader_choice: LeaderChoice
    def __init__(self, seat: _Optional[int] = ..., entropy_seats: _Optional[_Iterable[int]] = ..., dealt: _Optional[bool] = ..., leader: _Optional[int] = ..., leader_choice: _Optional[_Union[LeaderChoice, str]] = ...) -> None: ...

class DealRoundRequest(_message.Message):
    __slots__ = ("match_id", "token", "deal")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    deal: Deal
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., deal: _Optional[_Union[Deal, _Mapping]] = ...) -> None: ...

class DealRoundResponse(_message.Message):
    __slots__ = ("round_index", "leader", "leader_choice")
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEADER_CHOICE_FIELD_NUMBER: _ClassVar[int]
    round_index: int
    leader: int
    leader_choice: LeaderChoice
    def __init__(self, round_index: _Optional[int] = ..., leader: _Optional[int] = ..., leader_choice: _Optional[_Union[LeaderChoice, str]] = ...) -> None: ...

class ListLegalMovesRequest(_message.Message):
    __slots__ = ("match_id", "token", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class ListLegalMovesResponse(_message.Message):
    __slots__ = ("moves",)
    MOVES_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[Move]
    def __init__(self, moves: _Optional[_Iterable[_Union[Move, _Mapping]]] = ...) -> None: ...

class ApplyMoveRequest(_message.Message):
    __slots__ = ("match_id", "token", "seat", "move", "notation", "expected_move_count")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    NOTATION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    seat: int
    move: Move
    notation: str
    expected_move_count: int
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., seat: _Optional[int] = ..., move: _Optional[_Union[Move, _Mapping]] = ..., notation: _Optional[str] = ..., expected_move_count: _Optional[int] = ...) -> None: ...

class ApplyMoveResponse(_message.Message):
    __slots__ = ("seat", "move", "move_count", "points", "counted_ends", "ends_sum", "drawn_tile", "round_end", "match_end", "turn", "scores", "chain_head", "chain_head_sequence", "checkpoint")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    COUNTED_ENDS_FIELD_NUMBER: _ClassVar[int]
    ENDS_SUM_FIELD_NUMBER: _ClassVar[int]
    DRAWN_TILE_FIELD_NUMBER: _ClassVar[int]
    ROUND_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move: Move
    move_count: int
    points: int
    counted_ends: _containers.RepeatedCompositeFieldContainer[CountedEnd]
    ends_sum: int
    drawn_tile: Tile
    round_end: RoundEnd
    match_end: MatchEnd
    turn: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    chain_head: str
    chain_head_sequence: int
    checkpoint: SignedCheckpoint
    def __init__(self, seat: _Optional[int] = ..., move: _Optional[_Union[Move, _Mapping]] = ..., move_count: _Optional[int] = ..., points: _Optional[int] = ..., counted_ends: _Optional[_Iterable[_Union[CountedEnd, _Mapping]]] = ..., ends_sum: _Optional[int] = ..., drawn_tile: _Optional[_Union[Tile, _Mapping]] = ..., round_end: _Optional[_Union[RoundEnd, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., turn: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., chain_head: _Optional[str] = ..., chain_head_sequence: _Optional[int] = ..., checkpoint: _Optional[_Union[SignedCheckpoint, _Mapping]] = ...) -> None: ...

class ScoreLayoutRequest(_message.Message):
    __slots__ = ("placements", "variant")
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    placements: _containers.RepeatedCompositeFieldContainer[Placement]
    variant: Variant
    def __init__(self, placements: _Optional[_Iterable[_Union[Placement, _Mapping]]] = ..., variant: _Optional[_Union[Variant, str]] = ...) -> None: ...

class ScoreLayoutResponse(_message.Message):
    __slots__ = ("counted_ends", "ends_sum", "points", "open_sides")
    COUNTED_ENDS_FIELD_NUMBER: _ClassVar[int]
    ENDS_SUM_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    OPEN_SIDES_FIELD_NUMBER: _ClassVar[int]
    counted_ends: _containers.RepeatedCompositeFieldContainer[CountedEnd]
    ends_sum: int
    points: int
    open_sides: _containers.RepeatedCompositeFieldContainer[OpenSide]
    def __init__(self, counted_ends: _Optional[_Iterable[_Union[CountedEnd, _Mapping]]] = ..., ends_sum: _Optional[int] = ..., points: _Optional[int] = ..., open_sides: _Optional[_Iterable[_Union[OpenSide, _Mapping]]] = ...) -> None: ...

class GetScoresRequest(_message.Message):
    __slots__ = ("match_id", "token")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class GetScoresResponse(_message.Message):
    __slots__ = ("scores", "target", "over", "winner", "winning_seats", "chain_head", "chain_head_sequence", "checkpoint")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    WINNING_SEATS_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    target: int
    over: bool
    winner: int
    winning_seats: _containers.RepeatedScalarFieldContainer[int]
    chain_head: str
    chain_head_sequence: int
    checkpoint: SignedCheckpoint
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., target: _Optional[int] = ..., over: _Optional[bool] = ..., winner: _Optional[int] = ..., winning_seats: _Optional[_Iterable[int]] = ..., chain_head: _Optional[str] = ..., chain_head_sequence: _Optional[int] = ..., checkpoint: _Optional[_Union[SignedCheckpoint, _Mapping]] = ...) -> None: ...

class GetStateRequest(_message.Message):
    __slots__ = ("match_id", "token")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class GetStateResponse(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: MatchState
    def __init__(self, state: _Optional[_Union[MatchState, _Mapping]] = ...) -> None: ...

class MatchState(_message.Message):
    __slots__ = ("name", "match_id", "seat_count", "target", "round_index", "phase", "leader", "leader_choice", "turn", "viewer_seat", "viewer_tiles", "hand_sizes", "boneyard_size", "layout_tiles", "open_sides", "counted_ends", "ends_sum", "scores", "pending_drawn_tile", "move_count", "hands", "boneyard_tiles", "winner", "variant", "round_limit", "seed_commitment", "chain_head", "chain_head_sequence", "reveal", "seat_entropy", "entropy_seats", "time_control", "clocks", "forfeited_seat", "checkpoint")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEADER_CHOICE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    VIEWER_SEAT_FIELD_NUMBER: _ClassVar[int]
    VIEWER_TILES_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    BONEYARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_TILES_FIELD_NUMBER: _ClassVar[int]
    OPEN_SIDES_FIELD_NUMBER: _ClassVar[int]
    COUNTED_ENDS_FIELD_NUMBER: _ClassVar[int]
    ENDS_SUM_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PENDING_DRAWN_TILE_FIELD_NUMBER: _ClassVar[int]
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    BONEYARD_TILES_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    SEAT_ENTROPY_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_SEATS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    CLOCKS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_SEAT_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    name: str
    match_id: str
    seat_count: int
    target: int
    round_index: int
    phase: MatchPhase
    leader: int
    leader_choice: LeaderChoice
    turn: int
    viewer_seat: int
    viewer_tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    boneyard_size: int
    layout_tiles: _containers.RepeatedCompositeFieldContainer[PlacedTile]
    open_sides: _containers.RepeatedCompositeFieldContainer[OpenSide]
    counted_ends: _containers.RepeatedCompositeFieldContainer[CountedEnd]
    ends_sum: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    pending_drawn_tile: Tile
    move_count: int
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    boneyard_tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    winner: int
    variant: Variant
    round_limit: int
    seed_commitment: str
    chain_head: str
    chain_head_sequence: int
    reveal: Reveal
    seat_entropy: bool
    entropy_seats: _containers.RepeatedScalarFieldContainer[int]
    time_control: TimeControl
    clocks: _containers.RepeatedCompositeFieldContainer[SeatClock]
    forfeited_seat: int
    checkpoint: SignedCheckpoint
    def __init__(self, name: _Optional[str] = ..., match_id: _Optional[str] = ..., seat_count: _Optional[int] = ..., target: _Optional[int] = ..., round_index: _Optional[int] = ..., phase: _Optional[_Union[MatchPhase, str]] = ..., leader: _Optional[int] = ..., leader_choice: _Optional[_Union[LeaderChoice, str]] = ..., turn: _Optional[int] = ..., viewer_seat: _Optional[int] = ..., viewer_tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., boneyard_size: _Optional[int] = ..., layout_tiles: _Optional[_Iterable[_Union[PlacedTile, _Mapping]]] = ..., open_sides: _Optional[_Iterable[_Union[OpenSide, _Mapping]]] = ..., counted_ends: _Optional[_Iterable[_Union[CountedEnd, _Mapping]]] = ..., ends_sum: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., pending_drawn_tile: _Optional[_Union[Tile, _Mapping]] = ..., move_count: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., boneyard_tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., winner: _Optional[int] = ..., variant: _Optional[_Union[Variant, str]] = ..., round_limit: _Optional[int] = ..., seed_commitment: _Optional[str] = ..., chain_head: _Optional[str] = ..., chain_head_sequence: _Optional[int] = ..., reveal: _Optional[_Union[Reveal, _Mapping]] = ..., seat_entropy: _Optional[bool] = ..., entropy_seats: _Optional[_Iterable[int]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., clocks: _Optional[_Iterable[_Union[SeatClock, _Mapping]]] = ..., forfeited_seat: _Optional[int] = ..., checkpoint: _Optional[_Union[SignedCheckpoint, _Mapping]] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id", "token", "from_sequence")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    from_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., from_sequence: _Optional[int] = ...) -> None: ...

class WatchMatchResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: MatchEvent
    def __init__(self, event: _Optional[_Union[MatchEvent, _Mapping]] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("open", "answer", "answers", "register")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    REGISTER_FIELD_NUMBER: _ClassVar[int]
    open: PlayOpen
    answer: PlayAnswer
    answers: PlayAnswers
    register: ArenaRegister
    def __init__(self, open: _Optional[_Union[PlayOpen, _Mapping]] = ..., answer: _Optional[_Union[PlayAnswer, _Mapping]] = ..., answers: _Optional[_Union[PlayAnswers, _Mapping]] = ..., register: _Optional[_Union[ArenaRegister, _Mapping]] = ...) -> None: ...

class ArenaRegister(_message.Message):
    __slots__ = ("name", "resume_secret")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESUME_SECRET_FIELD_NUMBER: _ClassVar[int]
    name: str
    resume_secret: str
    def __init__(self, name: _Optional[str] = ..., resume_secret: _Optional[str] = ...) -> None: ...

class ArenaRegistered(_message.Message):
    __slots__ = ("name", "resume_secret")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESUME_SECRET_FIELD_NUMBER: _ClassVar[int]
    name: str
    resume_secret: str
    def __init__(self, name: _Optional[str] = ..., resume_secret: _Optional[str] = ...) -> None: ...

class ListArenaBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListArenaBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[ArenaBot]
    def __init__(self, bots: _Optional[_Iterable[_Union[ArenaBot, _Mapping]]] = ...) -> None: ...

class ArenaBot(_message.Message):
    __slots__ = ("name", "seats_in_play", "seats_handed")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SEATS_IN_PLAY_FIELD_NUMBER: _ClassVar[int]
    SEATS_HANDED_FIELD_NUMBER: _ClassVar[int]
    name: str
    seats_in_play: int
    seats_handed: int
    def __init__(self, name: _Optional[str] = ..., seats_in_play: _Optional[int] = ..., seats_handed: _Optional[int] = ...) -> None: ...

class SeatArenaBotsRequest(_message.Message):
    __slots__ = ("seats",)
    SEATS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedCompositeFieldContainer[ArenaSeat]
    def __init__(self, seats: _Optional[_Iterable[_Union[ArenaSeat, _Mapping]]] = ...) -> None: ...

class ArenaSeat(_message.Message):
    __slots__ = ("match_id", "token", "bot", "bot_seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    bot: str
    bot_seed: int
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., bot: _Optional[str] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class SeatArenaBotsResponse(_message.Message):
    __slots__ = ("handed_seats",)
    HANDED_SEATS_FIELD_NUMBER: _ClassVar[int]
    handed_seats: int
    def __init__(self, handed_seats: _Optional[int] = ...) -> None: ...

class PlayAnswers(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[PlayAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[PlayAnswer, _Mapping]]] = ...) -> None: ...

class PlayOpen(_message.Message):
    __slots__ = ("seats",)
    SEATS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedCompositeFieldContainer[PlaySeat]
    def __init__(self, seats: _Optional[_Iterable[_Union[PlaySeat, _Mapping]]] = ...) -> None: ...

class PlaySeat(_message.Message):
    __slots__ = ("match_id", "token", "resume_move_count")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESUME_MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    resume_move_count: int
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., resume_move_count: _Optional[int] = ...) -> None: ...

class PlayAnswer(_message.Message):
    __slots__ = ("match_id", "seat", "move_count", "move", "notation", "deal")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    NOTATION_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    move_count: int
    move: Move
    notation: str
    deal: PlayDeal
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., move_count: _Optional[int] = ..., move: _Optional[_Union[Move, _Mapping]] = ..., notation: _Optional[str] = ..., deal: _Optional[_Union[PlayDeal, _Mapping]] = ...) -> None: ...

class PlayDeal(_message.Message):
    __slots__ = ("round_index",)
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    round_index: int
    def __init__(self, round_index: _Optional[int] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("updates",)
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    updates: _containers.RepeatedCompositeFieldContainer[PlayUpdate]
    def __init__(self, updates: _Optional[_Iterable[_Union[PlayUpdate, _Mapping]]] = ...) -> None: ...

class PlayUpdate(_message.Message):
    __slots__ = ("match_id", "seat", "opened", "event", "decision", "answered", "error", "registered")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OPENED_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REGISTERED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    opened: PlayOpened
    event: MatchEvent
    decision: PlayDecision
    answered: PlayAnswered
    error: PlayError
    registered: ArenaRegistered
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., opened: _Optional[_Union[PlayOpened, _Mapping]] = ..., event: _Optional[_Union[MatchEvent, _Mapping]] = ..., decision: _Optional[_Union[PlayDecision, _Mapping]] = ..., answered: _Optional[_Union[PlayAnswered, _Mapping]] = ..., error: _Optional[_Union[PlayError, _Mapping]] = ..., registered: _Optional[_Union[ArenaRegistered, _Mapping]] = ...) -> None: ...

class PlayOpened(_message.Message):
    __slots__ = ("move_count", "open_index", "token", "bot_seed")
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    OPEN_INDEX_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    move_count: int
    open_index: int
    token: str
    bot_seed: int
    def __init__(self, move_count: _Optional[int] = ..., open_index: _Optional[int] = ..., token: _Optional[str] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class PlayDecision(_message.Message):
    __slots__ = ("move_count", "move", "deal", "clock")
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    move_count: int
    move: PlayMoveDecision
    deal: PlayDealDecision
    clock: SeatClock
    def __init__(self, move_count: _Optional[int] = ..., move: _Optional[_Union[PlayMoveDecision, _Mapping]] = ..., deal: _Optional[_Union[PlayDealDecision, _Mapping]] = ..., clock: _Optional[_Union[SeatClock, _Mapping]] = ...) -> None: ...

class PlayMoveDecision(_message.Message):
    __slots__ = ("state", "moves")
    STATE_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    state: MatchState
    moves: _containers.RepeatedCompositeFieldContainer[Move]
    def __init__(self, state: _Optional[_Union[MatchState, _Mapping]] = ..., moves: _Optional[_Iterable[_Union[Move, _Mapping]]] = ...) -> None: ...

class PlayDealDecision(_message.Message):
    __slots__ = ("round_index",)
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    round_index: int
    def __init__(self, round_index: _Optional[int] = ...) -> None: ...

class PlayAnswered(_message.Message):
    __slots__ = ("move_count", "duplicate")
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    move_count: int
    duplicate: bool
    def __init__(self, move_count: _Optional[int] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class PlayError(_message.Message):
    __slots__ = ("move_count", "code", "reason", "message", "attributes")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    move_count: int
    code: int
    reason: ErrorReason
    message: str
    attributes: _containers.ScalarMap[str, str]
    def __init__(self, move_count: _Optional[int] = ..., code: _Optional[int] = ..., reason: _Optional[_Union[ErrorReason, str]] = ..., message: _Optional[str] = ..., attributes: _Optional[_Mapping[str, str]] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("sequence", "match_created", "round_dealt", "action_applied", "round_ended", "match_ended", "chain_head", "checkpoint")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    MATCH_CREATED_FIELD_NUMBER: _ClassVar[int]
    ROUND_DEALT_FIELD_NUMBER: _ClassVar[int]
    ACTION_APPLIED_FIELD_NUMBER: _ClassVar[int]
    ROUND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    CHAIN_HEAD_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    match_created: MatchCreated
    round_dealt: RoundDealt
    action_applied: ActionApplied
    round_ended: RoundEnded
    match_ended: MatchEnded
    chain_head: str
    checkpoint: SignedCheckpoint
    def __init__(self, sequence: _Optional[int] = ..., match_created: _Optional[_Union[MatchCreated, _Mapping]] = ..., round_dealt: _Optional[_Union[RoundDealt, _Mapping]] = ..., action_applied: _Optional[_Union[ActionApplied, _Mapping]] = ..., round_ended: _Optional[_Union[RoundEnded, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., chain_head: _Optional[str] = ..., checkpoint: _Optional[_Union[SignedCheckpoint, _Mapping]] = ...) -> None: ...

class SignedCheckpoint(_message.Message):
    __slots__ = ("log_id", "match_id", "seq", "head", "signature")
    LOG_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    log_id: str
    match_id: str
    seq: int
    head: str
    signature: str
    def __init__(self, log_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seq: _Optional[int] = ..., head: _Optional[str] = ..., signature: _Optional[str] = ...) -> None: ...

class SignedTreeHead(_message.Message):
    __slots__ = ("log_id", "tree_size", "root_hash", "timestamp_ms", "signature")
    LOG_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_SIZE_FIELD_NUMBER: _ClassVar[int]
    ROOT_HASH_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_MS_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    log_id: str
    tree_size: int
    root_hash: str
    timestamp_ms: int
    signature: str
    def __init__(self, log_id: _Optional[str] = ..., tree_size: _Optional[int] = ..., root_hash: _Optional[str] = ..., timestamp_ms: _Optional[int] = ..., signature: _Optional[str] = ...) -> None: ...

class GetLogKeyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetLogKeyResponse(_message.Message):
    __slots__ = ("public_key_pem", "log_id", "tree_head")
    PUBLIC_KEY_PEM_FIELD_NUMBER: _ClassVar[int]
    LOG_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_HEAD_FIELD_NUMBER: _ClassVar[int]
    public_key_pem: str
    log_id: str
    tree_head: SignedTreeHead
    def __init__(self, public_key_pem: _Optional[str] = ..., log_id: _Optional[str] = ..., tree_head: _Optional[_Union[SignedTreeHead, _Mapping]] = ...) -> None: ...

class GetInclusionProofRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetInclusionProofResponse(_message.Message):
    __slots__ = ("match_id", "seq", "head", "leaf_index", "tree_head", "path_hashes")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    LEAF_INDEX_FIELD_NUMBER: _ClassVar[int]
    TREE_HEAD_FIELD_NUMBER: _ClassVar[int]
    PATH_HASHES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seq: int
    head: str
    leaf_index: int
    tree_head: SignedTreeHead
    path_hashes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seq: _Optional[int] = ..., head: _Optional[str] = ..., leaf_index: _Optional[int] = ..., tree_head: _Optional[_Union[SignedTreeHead, _Mapping]] = ..., path_hashes: _Optional[_Iterable[str]] = ...) -> None: ...

class GetConsistencyProofRequest(_message.Message):
    __slots__ = ("from_size", "to_size")
    FROM_SIZE_FIELD_NUMBER: _ClassVar[int]
    TO_SIZE_FIELD_NUMBER: _ClassVar[int]
    from_size: int
    to_size: int
    def __init__(self, from_size: _Optional[int] = ..., to_size: _Optional[int] = ...) -> None: ...

class GetConsistencyProofResponse(_message.Message):
    __slots__ = ("from_tree_head", "to_tree_head", "path_hashes")
    FROM_TREE_HEAD_FIELD_NUMBER: _ClassVar[int]
    TO_TREE_HEAD_FIELD_NUMBER: _ClassVar[int]
    PATH_HASHES_FIELD_NUMBER: _ClassVar[int]
    from_tree_head: SignedTreeHead
    to_tree_head: SignedTreeHead
    path_hashes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, from_tree_head: _Optional[_Union[SignedTreeHead, _Mapping]] = ..., to_tree_head: _Optional[_Union[SignedTreeHead, _Mapping]] = ..., path_hashes: _Optional[_Iterable[str]] = ...) -> None: ...

class MatchCreated(_message.Message):
    __slots__ = ("name", "seat_count", "target", "variant", "round_limit", "time_control", "seed_commitment")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    seat_count: int
    target: int
    variant: Variant
    round_limit: int
    time_control: TimeControl
    seed_commitment: str
    def __init__(self, name: _Optional[str] = ..., seat_count: _Optional[int] = ..., target: _Optional[int] = ..., variant: _Optional[_Union[Variant, str]] = ..., round_limit: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seed_commitment: _Optional[str] = ...) -> None: ...

class RoundDealt(_message.Message):
    __slots__ = ("round_index", "leader", "leader_choice", "hands", "hand_sizes", "boneyard_size", "boneyard_tiles", "explicit_deal")
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEADER_CHOICE_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    BONEYARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    BONEYARD_TILES_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_DEAL_FIELD_NUMBER: _ClassVar[int]
    round_index: int
    leader: int
    leader_choice: LeaderChoice
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    boneyard_size: int
    boneyard_tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    explicit_deal: bool
    def __init__(self, round_index: _Optional[int] = ..., leader: _Optional[int] = ..., leader_choice: _Optional[_Union[LeaderChoice, str]] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., boneyard_size: _Optional[int] = ..., boneyard_tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., explicit_deal: _Optional[bool] = ...) -> None: ...

class ActionApplied(_message.Message):
    __slots__ = ("round_index", "action_index", "move_count", "seat", "move", "points", "ends_sum", "drawn_tile", "timeout_policy", "bank_left_ms")
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    ENDS_SUM_FIELD_NUMBER: _ClassVar[int]
    DRAWN_TILE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_POLICY_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    round_index: int
    action_index: int
    move_count: int
    seat: int
    move: Move
    points: int
    ends_sum: int
    drawn_tile: Tile
    timeout_policy: str
    bank_left_ms: int
    def __init__(self, round_index: _Optional[int] = ..., action_index: _Optional[int] = ..., move_count: _Optional[int] = ..., seat: _Optional[int] = ..., move: _Optional[_Union[Move, _Mapping]] = ..., points: _Optional[int] = ..., ends_sum: _Optional[int] = ..., drawn_tile: _Optional[_Union[Tile, _Mapping]] = ..., timeout_policy: _Optional[str] = ..., bank_left_ms: _Optional[int] = ...) -> None: ...

class RoundEnded(_message.Message):
    __slots__ = ("round_end",)
    ROUND_END_FIELD_NUMBER: _ClassVar[int]
    round_end: RoundEnd
    def __init__(self, round_end: _Optional[_Union[RoundEnd, _Mapping]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_end",)
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    match_end: MatchEnd
    def __init__(self, match_end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ("sql", "parameters", "token")
    SQL_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    sql: str
    parameters: _containers.RepeatedCompositeFieldContainer[QueryParameter]
    token: str
    def __init__(self, sql: _Optional[str] = ..., parameters: _Optional[_Iterable[_Union[QueryParameter, _Mapping]]] = ..., token: _Optional[str] = ...) -> None: ...

class QueryParameter(_message.Message):
    __slots__ = ("string_value", "int64_value", "double_value", "bool_value", "null_value")
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT64_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    NULL_VALUE_FIELD_NUMBER: _ClassVar[int]
    string_value: str
    int64_value: int
    double_value: float
    bool_value: bool
    null_value: _struct_pb2.NullValue
    def __init__(self, string_value: _Optional[str] = ..., int64_value: _Optional[int] = ..., double_value: _Optional[float] = ..., bool_value: _Optional[bool] = ..., null_value: _Optional[_Union[_struct_pb2.NullValue, str]] = ...) -> None: ...

class QueryResponse(_message.Message):
    __slots__ = ("arrow_ipc",)
    ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    arrow_ipc: bytes
    def __init__(self, arrow_ipc: _Optional[bytes] = ...) -> None: ...

class ImportMatchesRequest(_message.Message):
    __slots__ = ("token", "arrow_ipc", "match_facts_arrow_ipc", "round_facts_arrow_ipc", "sniff_decisions_arrow_ipc")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    MATCH_FACTS_ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    ROUND_FACTS_ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    SNIFF_DECISIONS_ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    token: str
    arrow_ipc: bytes
    match_facts_arrow_ipc: bytes
    round_facts_arrow_ipc: bytes
    sniff_decisions_arrow_ipc: bytes
    def __init__(self, token: _Optional[str] = ..., arrow_ipc: _Optional[bytes] = ..., match_facts_arrow_ipc: _Optional[bytes] = ..., round_facts_arrow_ipc: _Optional[bytes] = ..., sniff_decisions_arrow_ipc: _Optional[bytes] = ...) -> None: ...

class ImportMatchesResponse(_message.Message):
    __slots__ = ("imported_match_ids", "present_match_ids", "events")
    IMPORTED_MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    PRESENT_MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    imported_match_ids: _containers.RepeatedScalarFieldContainer[str]
    present_match_ids: _containers.RepeatedScalarFieldContainer[str]
    events: int
    def __init__(self, imported_match_ids: _Optional[_Iterable[str]] = ..., present_match_ids: _Optional[_Iterable[str]] = ..., events: _Optional[int] = ...) -> None: ...

class SimulationRun(_message.Message):
    __slots__ = ("run_id", "matches", "seats", "bots", "players", "seed", "variant", "target", "round_limit", "sim_version", "code_version")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    SIM_VERSION_FIELD_NUMBER: _ClassVar[int]
    CODE_VERSION_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    matches: int
    seats: int
    bots: _containers.RepeatedScalarFieldContainer[str]
    players: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    variant: Variant
    target: int
    round_limit: int
    sim_version: str
    code_version: str
    def __init__(self, run_id: _Optional[str] = ..., matches: _Optional[int] = ..., seats: _Optional[int] = ..., bots: _Optional[_Iterable[str]] = ..., players: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., variant: _Optional[_Union[Variant, str]] = ..., target: _Optional[int] = ..., round_limit: _Optional[int] = ..., sim_version: _Optional[str] = ..., code_version: _Optional[str] = ...) -> None: ...

class StoreSimulatedRequest(_message.Message):
    __slots__ = ("token", "run", "matches_arrow_ipc", "rounds_arrow_ipc", "decisions_arrow_ipc")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    MATCHES_ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_ARROW_IPC_FIELD_NUMBER: _ClassVar[int]
    token: str
    run: SimulationRun
    matches_arrow_ipc: bytes
    rounds_arrow_ipc: bytes
    decisions_arrow_ipc: bytes
    def __init__(self, token: _Optional[str] = ..., run: _Optional[_Union[SimulationRun, _Mapping]] = ..., matches_arrow_ipc: _Optional[bytes] = ..., rounds_arrow_ipc: _Optional[bytes] = ..., decisions_arrow_ipc: _Optional[bytes] = ...) -> None: ...

class StoreSimulatedResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: int
    def __init__(self, matches: _Optional[int] = ...) -> None: ...

class AnalysisBudget(_message.Message):
    __slots__ = ("rollouts", "deadline_millis")
    ROLLOUTS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MILLIS_FIELD_NUMBER: _ClassVar[int]
    rollouts: int
    deadline_millis: int
    def __init__(self, rollouts: _Optional[int] = ..., deadline_millis: _Optional[int] = ...) -> None: ...

class MoveEquity(_message.Message):
    __slots__ = ("move", "equity", "standard_error", "loss", "loss_standard_error")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    EQUITY_FIELD_NUMBER: _ClassVar[int]
    STANDARD_ERROR_FIELD_NUMBER: _ClassVar[int]
    LOSS_FIELD_NUMBER: _ClassVar[int]
    LOSS_STANDARD_ERROR_FIELD_NUMBER: _ClassVar[int]
    move: Move
    equity: float
    standard_error: float
    loss: float
    loss_standard_error: float
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., equity: _Optional[float] = ..., standard_error: _Optional[float] = ..., loss: _Optional[float] = ..., loss_standard_error: _Optional[float] = ...) -> None: ...

class SolveBudget(_message.Message):
    __slots__ = ("nodes", "deadline_millis")
    NODES_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MILLIS_FIELD_NUMBER: _ClassVar[int]
    nodes: int
    deadline_millis: int
    def __init__(self, nodes: _Optional[int] = ..., deadline_millis: _Optional[int] = ...) -> None: ...

class SolveRequest(_message.Message):
    __slots__ = ("variant", "seat_count", "target", "scores", "placements", "hands", "boneyard_tiles", "turn", "drawn_tile", "budget")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    BONEYARD_TILES_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    DRAWN_TILE_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    variant: Variant
    seat_count: int
    target: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    placements: _containers.RepeatedScalarFieldContainer[str]
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    boneyard_tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    turn: int
    drawn_tile: Tile
    budget: SolveBudget
    def __init__(self, variant: _Optional[_Union[Variant, str]] = ..., seat_count: _Optional[int] = ..., target: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., placements: _Optional[_Iterable[str]] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., boneyard_tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., turn: _Optional[int] = ..., drawn_tile: _Optional[_Union[Tile, _Mapping]] = ..., budget: _Optional[_Union[SolveBudget, _Mapping]] = ...) -> None: ...

class MoveValue(_message.Message):
    __slots__ = ("move", "exact", "value", "low", "high")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    EXACT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    move: Move
    exact: bool
    value: float
    low: float
    high: float
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., exact: _Optional[bool] = ..., value: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ...) -> None: ...

class SolveResponse(_message.Message):
    __slots__ = ("moves", "solved", "best", "value", "low", "high", "nodes", "line_moves")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    SOLVED_FIELD_NUMBER: _ClassVar[int]
    BEST_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    LINE_MOVES_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[MoveValue]
    solved: bool
    best: Move
    value: float
    low: float
    high: float
    nodes: int
    line_moves: _containers.RepeatedCompositeFieldContainer[Move]
    def __init__(self, moves: _Optional[_Iterable[_Union[MoveValue, _Mapping]]] = ..., solved: _Optional[bool] = ..., best: _Optional[_Union[Move, _Mapping]] = ..., value: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ..., nodes: _Optional[int] = ..., line_moves: _Optional[_Iterable[_Union[Move, _Mapping]]] = ...) -> None: ...

class AnalyzeRequest(_message.Message):
    __slots__ = ("match_id", "token", "budget", "policy", "seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    token: str
    budget: AnalysisBudget
    policy: PlayoutPolicy
    seed: int
    def __init__(self, match_id: _Optional[str] = ..., token: _Optional[str] = ..., budget: _Optional[_Union[AnalysisBudget, _Mapping]] = ..., policy: _Optional[_Union[PlayoutPolicy, str]] = ..., seed: _Optional[int] = ...) -> None: ...

class AnalyzeResponse(_message.Message):
    __slots__ = ("moves", "rollouts", "seed", "policy", "move_count")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    ROLLOUTS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[MoveEquity]
    rollouts: int
    seed: int
    policy: PlayoutPolicy
    move_count: int
    def __init__(self, moves: _Optional[_Iterable[_Union[MoveEquity, _Mapping]]] = ..., rollouts: _Optional[int] = ..., seed: _Optional[int] = ..., policy: _Optional[_Union[PlayoutPolicy, str]] = ..., move_count: _Optional[int] = ...) -> None: ...

class AnalyzePositionRequest(_message.Message):
    __slots__ = ("variant", "seat_count", "target", "scores", "viewer_seat", "leader", "hand_tiles", "actions", "own_draws", "hand_sizes", "budget", "policy", "seed")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    VIEWER_SEAT_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    HAND_TILES_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    OWN_DRAWS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    variant: Variant
    seat_count: int
    target: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    viewer_seat: int
    leader: int
    hand_tiles: _containers.RepeatedCompositeFieldContainer[Tile]
    actions: _containers.RepeatedScalarFieldContainer[str]
    own_draws: _containers.RepeatedCompositeFieldContainer[Tile]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    budget: AnalysisBudget
    policy: PlayoutPolicy
    seed: int
    def __init__(self, variant: _Optional[_Union[Variant, str]] = ..., seat_count: _Optional[int] = ..., target: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., viewer_seat: _Optional[int] = ..., leader: _Optional[int] = ..., hand_tiles: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., actions: _Optional[_Iterable[str]] = ..., own_draws: _Optional[_Iterable[_Union[Tile, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., budget: _Optional[_Union[AnalysisBudget, _Mapping]] = ..., policy: _Optional[_Union[PlayoutPolicy, str]] = ..., seed: _Optional[int] = ...) -> None: ...

class AnalyzePositionResponse(_message.Message):
    __slots__ = ("moves", "rollouts", "seed", "policy")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    ROLLOUTS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[MoveEquity]
    rollouts: int
    seed: int
    policy: PlayoutPolicy
    def __init__(self, moves: _Optional[_Iterable[_Union[MoveEquity, _Mapping]]] = ..., rollouts: _Optional[int] = ..., seed: _Optional[int] = ..., policy: _Optional[_Union[PlayoutPolicy, str]] = ...) -> None: ...
