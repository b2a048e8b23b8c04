"""Live matches: tokens, exactly-once moves, durable events, and watchers.

The hub is the service without gRPC: it owns every live match, checks who
may do what, applies moves through the engine, and acknowledges nothing
before its events are durable in the event log. Each match has its own lock,
so matches proceed in parallel and their events meet in the log's group
commit; within a match, one action is applied at a time, in order.

Its methods block (on a match's lock, on the log's fsync), so the gRPC
server calls them from a bounded thread pool. Watchers do not block: a
watcher registers a callback that the hub calls (without blocking) once new
events of its match are durable, and then reads `events_from`.

A change is applied in memory first (the engine refuses an illegal one
before changing anything) and then appended to the log; if the append
fails, the match is rebuilt from its durable events, so memory never holds
an action the log does not, and the caller gets the log's error.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from service.clock import MatchClock, OutOfTime, SeatTime, TimeControl, Timekeeper, Timing
from service.defaults import DEFAULT_MAX_LIVE_MATCHES
from service.errors import (
    AwaitingEntropy,
    BadArgument,
    EntropyAlreadyGiven,
    EntropyNotWanted,
    Forbidden,
    LimitReached,
    MatchNotFound,
    MissingToken,
    NotSigning,
    RecoveryError,
    StaleMoveCount,
)
from service.evidence.keys import SigningKey
from service.evidence.proofs import ConsistencyProof, InclusionProof
from service.evidence.signed import Checkpoint, TreeHead
from service.match_events import action_events, created_event, deal_event, forfeit_event
from service.rpc.bounds import MATCH_ID
from service.storage import replayer
from service.storage.chain import GENESIS, MatchSecrets, seal
from service.storage.events import LogEvent
from service.storage.facts import FactsTables, ended_match_facts
from service.storage.imports import BadImport
from service.storage.log import EventLog, Imported
from service.storage.simulated import BadSimulated, SimulationRun, check_run, checked_chunk
from service.storage.tree import HEAD_KINDS, read_tree
from sniff import (
    ActionResult,
    CountedEnd,
    Deal,
    LeaderChoice,
    Match,
    Move,
    OpenSide,
    Phase,
    SeatView,
    Tile,
    view,
)
from sniff.bots import make_bot
from sniff.dealing import DEALING_VERSION
from sniff.errors import MatchOver, NoRoundInPlay, NotYourTurn, TileNotInHand
from sniff.facts import FactsRows
from sniff.rules import RULES_VERSION, winning_seats
from sniff.seeds import ENTROPY_SIZE, seat_entropy_seed
from sniff.tiles import NAMES
from sniff.variants import AMERICAN, Variant

if TYPE_CHECKING:
    import pyarrow as pa

_MATCH_ID = MATCH_ID
"""The form of the ids `create` makes (`secrets.token_hex(8)`)."""

FINISHED_KEPT = 1_000
"""How many finished matches stay in memory (the rest reload from the log when asked for)."""

MISSING_REMEMBERED = 10_000
"""How many unknown match ids `get` remembers before it forgets them all."""

OBSERVER = -1
"""The role of the observer token (seats are 0..3)."""

DEALING_SEAT = 0
"""The seat a Play stream asks to deal each next round (any seat may call DealRound)."""

_log = logging.getLogger(__name__)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """Everything an ApplyMove reply says; kept so that a retry gets the very same reply."""

    result: ActionResult
    round_index: int
    action_index: int
    move_count: int
    counted_ends: tuple[CountedEnd, ...]
    ends_sum: int
    turn: int | None
    scores: tuple[int, ...]
    winning_seats: tuple[int, ...]
    remaining_hands: tuple[tuple[Tile, ...], ...] | None
    chain_head: bytes | None = None
    """The hash of the last event this action wrote, when it ended a round or the match."""
    chain_head_seq: int | None = None
    """The sequence number of the event `chain_head` is the hash of, so a seat can say which
    event its head names (as GetScores, GetState and WatchMatch do)."""
    revealed: MatchSecrets | None = None
    """The match's secrets, revealed when this action ended the match."""
    checkpoint: Checkpoint | None = None
    """The log's signed checkpoint of `chain_head`, when it has a signing key."""


@dataclass(frozen=True, slots=True)
class Proof:
    """What a seat may hold to check the log later (docs/chain.md).

    `head` is the chain's hash at the last round end or match end (never
    mid-round) and `head_seq` the sequence number of that event; the seed
    commitment is public from the start; the secrets once the match is over.
    """

    seed_commitment: bytes | None
    head: bytes | None
    head_seq: int | None
    revealed: MatchSecrets | None
    entropy_seats: tuple[int, ...] | None = None
    """For a match created with seat entropy, the seats that have given theirs (every seat
    once the first round is dealt); None for any other match."""
    checkpoint: Checkpoint | None = None
    """The log's signed checkpoint of `head`, when it has a signing key."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A decision one seat must make now (`Hub.pending`): an action, or the next deal."""

    move_count: int
    events: int
    """How many durable events the match had when this was read: a stream sends those first,
    so a seat never decides on a state ahead of the events it was sent."""
    deal_round: int | None = None
    """The round to deal, for a deal decision; None for an action."""
    view: SeatView | None = None
    choice: LeaderChoice | None = None
    proof: Proof | None = None
    moves: tuple[Move, ...] = ()
    """The legal moves in the engine's canonical order."""
    sides: LayoutSides | None = None
    """The layout's open sides and counted ends, read from the match's own layout (so the
    stream need not rebuild one from the view's placements)."""
    clock: SeatTime | None = None
    """With a time control, for a move decision: the seat's clock when this was read."""


LayoutSides = tuple[tuple[OpenSide, ...], tuple[CountedEnd, ...]]
"""A layout's open sides and counted ends, as `Layout.open_sides` and `counted_ends` give."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The one decision a match waits for, read at `events` durable events: `seat`'s, or none.

    At most one seat decides at a time (the seat to play, or the dealing seat
    between rounds), so one read serves every stream that follows the match.
    """

    events: int
    seat: int | None
    pending: Pending | None


@dataclass(frozen=True, slots=True)
class Logged:
    """One event of a match as kept in memory for watchers: the log row and the move count."""

    event: LogEvent
    move_count: int
    checkpoint: Checkpoint | None = None
    """Of a round or match end, when the log signs: the checkpoint of its hash."""


@dataclass(slots=True)
class LiveMatch:
    match_id: str
    match: Match
    token_digests: tuple[str, ...]
    """sha256 of each seat token, then of the observer token (tokens themselves are not kept)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    events: list[Logged] = field(default_factory=list)
    """Durable events only, appended whole under `lock` (readers may slice it without it)."""
    listeners: set[Callable[[], None]] = field(default_factory=set)
    """Called, without blocking, after new durable events are added (see `Hub.listen`)."""
    outcomes: list[tuple[int, str, ApplyOutcome]] = field(default_factory=list)
    """Per applied action, by move number: (seat, notation, outcome)."""
    secrets: MatchSecrets | None = None
    """Seed, salt and chain secret; None for a match begun before the chain existed."""
    seat_entropy: bool = False
    """Created with seat entropy: its first round waits for every seat's (docs/dealing.md)."""
    contributions: dict[int, bytes] = field(default_factory=dict)
    """The entropy given by each seat so far, before the first deal. Kept in memory only:
    after a restart the seats give theirs again (docs/service.md)."""
    decision: Decision | None = None
    """The decision last read (`Hub.pending`), replaced whole: it holds while the match has
    `decision.events` durable events, since only a durable change moves the match on (a
    failed append rebuilds the very state those events make)."""
    clock: MatchClock | None = None
    """The match's clocks, when it was created with a time control (service/clock.py)."""
    timed_out: set[int] = field(default_factory=set)
    """The move counts (indices of `outcomes`) of the actions the server made for a seat
    out of time: an answer for one is stale, never a retry, whatever move it names."""
    forfeited_seat: int | None = None
    """The seat that forfeited the match when it ran out of time."""

    def missing_entropy(self) -> tuple[int, ...]:
        """The seats whose entropy the first deal still waits for (none once it is dealt)."""
        if not self.seat_entropy or self.match.history:
            return ()
        return tuple(s for s in range(self.match.seats) if s not in self.contributions)

    def check_dealt(self) -> None:
        """Raise AwaitingEntropy while the first deal waits for a seat's entropy."""
        missing = self.missing_entropy()
        if missing:
            raise AwaitingEntropy(missing)

    def logged_entropy(self) -> list[bytes] | None:
        """The entropy the first deal's event logs, once it is dealt."""
        first = next((e.event for e in self.events if e.event.kind == "round_dealt"), None)
        if first is None:
            return None
        try:
            return replayer.logged_entropy(first.detail or {}, self.match.seats)
        except ValueError:
            return None

    def seal(self, events: list[LogEvent]) -> list[LogEvent]:
        """The events with their links in the match's hash chain (docs/chain.md).

        A match begun before schema version 3 has no chain secret: its chain
        goes on as the migration began it, without one (the legacy link).
        """
        previous = self.events[-1].event.hash if self.events else GENESIS
        if previous is None:  # its log has an event with no hash: nothing to chain on to
            return events
        secret = None if self.secrets is None else self.secrets.chain_secret
        return seal(events, previous, secret)

    def proof(self) -> Proof:
        head: Logged | None = next(
            (item for item in reversed(self.events) if item.event.kind in HEAD_KINDS),
            None,
        )
        over = bool(self.events) and self.events[-1].event.kind == "match_ended"
        if self.secrets is None and not over:
            head = None  # a legacy chain has no secret: its head is given once nothing is hidden
        entropy_seats = None
        if self.seat_entropy:
            seats = range(self.match.seats)
            entropy_seats = tuple(seats if self.match.history else sorted(self.contributions))
        return Proof(
            None if self.secrets is None else self.secrets.commitment,
            None if head is None else head.event.hash,
            None if head is None else head.event.seq,
            self.secrets if over else None,
            entropy_seats,
            None if head is None else head.checkpoint,
        )

    def role(self, token: str) -> int:
        """The seat a token belongs to, or OBSERVER; raise `MissingToken` for any other."""
        if not token:
            raise MissingToken("this call needs a seat token or the observer token")
        digest = _digest(token)
        found = None
        for i, known in enumerate(self.token_digests):
            if hmac.compare_digest(digest, known):
                found = i
        if found is None:
            raise MissingToken("the token is not valid for this match")
        return OBSERVER if found == len(self.token_digests) - 1 else found


@dataclass(frozen=True, slots=True)
class Created:
    match_id: str
    seat_tokens: tuple[str, ...]
    observer_token: str
    match: Match
    seed_commitment: bytes | None
    seat_entropy: bool = False
    """The first round waits for every seat's entropy (ContributeEntropy)."""
    time_control: TimeControl | None = None


@dataclass(frozen=True, slots=True)
class Contributed:
    """What a ContributeEntropy reply says."""

    seat: int
    entropy_seats: tuple[int, ...]
    """The seats that have given their entropy, this one included."""
    dealt: tuple[int, LeaderChoice] | None
    """The first round's leader and how it was chosen, once every seat has given its own."""


class Hub:
    """Every live match of one service process, backed by one event log."""

    def __init__(
        self,
        log: EventLog,
        max_live_matches: int = DEFAULT_MAX_LIVE_MATCHES,
        *,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = log
        self.max_live_matches = max_live_matches
        self.now = now
        """The clock of time controls (seconds, monotonic); a test gives one it moves."""
        self.timekeeper = Timekeeper(now, self.time_out)
        """Fires the timeouts of clocked matches once started (`Timekeeper.start`)."""
        self._matches: dict[str, LiveMatch] = {}
        self._in_play: set[str] = set()
        """Matches created (or recovered) and not won yet."""
        self._creating = 0
        """Creations under way: they count against `max_live_matches` until they fail."""
        self._registry_lock = threading.Lock()
        self._finished: deque[str] = deque()
        """Finished matches still in memory, oldest first."""
        self._missing: set[str] = set()
        """Well-formed ids already looked up in the log and not found."""

    # -- lookup ------------------------------------------------------------

    def get(self, match_id: str) -> LiveMatch:
        """A match in memory, or a finished one loaded from the log on first use."""
        live = self._matches.get(match_id)
        if live is not None:
            return live
        # Only ids this service could have made reach the log, and each unknown
        # one only once: guessing ids must not cost a scan of the log per call.
        if not _MATCH_ID.fullmatch(match_id) or match_id in self._missing:
            raise MatchNotFound(f"no match {match_id!r}")
        events = self.log.events_for(match_id)
        if not events:
            with self._registry_lock:
                if len(self._missing) >= MISSING_REMEMBERED:
                    self._missing.clear()
                self._missing.add(match_id)
            raise MatchNotFound(f"no match {match_id!r}")
        live = self._replayed(match_id, events)
        with self._registry_lock:
            known = self._matches.setdefault(match_id, live)
        if known is live and live.match.phase is Phase.OVER:
            self._retire(match_id)
        return known

    def authorize(self, match_id: str, token: str) -> tuple[LiveMatch, int]:
        live = self.get(match_id)
        return live, live.role(token)

    # -- creating and dealing ---------------------------------------------

    def create(
        self,
        seats: int,
        *,
        target: int | None = None,
        seed: int | None = None,
        deal: Deal | None = None,
        variant: Variant = AMERICAN,
        round_limit: int | None = None,
        seat_entropy: bool = False,
        time_control: TimeControl | None = None,
        players: Sequence[str] = (),
        run_id: str = "",
    ) -> Created:
        """A new match with its first round dealt, durable before it is returned; with
        `seat_entropy`, undealt: its first deal waits for every seat's entropy (`contribute`).
        With `time_control`, its clocks start with the first deal. `players` (a name a seat)
        and `run_id` are logged with it when given.

        Raises LimitReached when `max_live_matches` matches are in play.
        """
        if time_control is not None:
            time_control.check(seats)
        if seat_entropy and deal is not None:
            raise BadArgument(
                "seat_entropy",
                "seat_entropy: a match with seat entropy is dealt from it, not by first_deal",
            )
        if seed is None:
            seed = secrets.randbits(63)
        match = Match(
            seats,
            seed=seed,
            target=target,
            variant=variant,
            round_limit=round_limit,
            auto_deal=False,
        )
        if not seat_entropy:
            match.deal(deal)
        with self._registry_lock:
            if len(self._in_play) + self._creating >= self.max_live_matches:
                raise LimitReached(
                    "max_live_matches",
                    f"the service already has {self.max_live_matches:,} matches in play: "
                    "finish some first",
                )
            self._creating += 1
        try:
            named: dict[str, Any] = {"players": list(players)} if players else {}
            if run_id:
                named["run_id"] = run_id
            return self._create(match, seed, deal is not None, seat_entropy, time_control, named)
        finally:
            with self._registry_lock:
                self._creating -= 1

    def _create(
        self,
        match: Match,
        seed: int,
        explicit: bool,
        seat_entropy: bool,
        time_control: TimeControl | None,
        named: dict[str, Any],
    ) -> Created:
        seats = match.seats
        match_id = secrets.token_hex(8)
        seat_tokens = tuple(secrets.token_urlsafe(24) for _ in range(seats))
        observer = secrets.token_urlsafe(24)
        digests = tuple(_digest(t) for t in (*seat_tokens, observer))
        live = LiveMatch(
            match_id, match, digests, secrets=MatchSecrets.new(seed), seat_entropy=seat_entropy
        )
        assert live.secrets is not None
        marked: dict[str, Any] = {"seat_entropy": True} if seat_entropy else {}
        if time_control is not None:
            marked["time_control"] = time_control.detail()
            live.clock = MatchClock.new(time_control, seats)
        created = created_event(
            match_id,
            match,
            live.secrets,
            token_sha256=list(digests),
            variant=match.variant.name,
            round_limit=match.round_limit,
            dealing=DEALING_VERSION,
            **marked,
            **named,
        )
        first = [] if seat_entropy else [deal_event(live.match_id, 1, live.match, explicit)]
        events = live.seal([created, *first])
        self.log.append(events)
        live.events.extend([Logged(e, 0) for e in events])
        with self._registry_lock:
            self._matches[match_id] = live
            self._in_play.add(match_id)
        with live.lock:
            self._restart_clock(live)
        return Created(
            match_id,
            seat_tokens,
            observer,
            match,
            live.secrets.commitment,
            seat_entropy,
            time_control,
        )

    def contribute(self, match_id: str, token: str, entropy: bytes) -> Contributed:
        """Take one seat's entropy for the match's first deal; the last seat's deals it.

        Each seat gives its own, with its own token, once: the same bytes again
        get the same answer (a retry, also after the deal), other bytes are
        refused. The deal is durable before the last seat is answered; until
        then the entropy is held in memory only.
        """
        if len(entropy) != ENTROPY_SIZE:
            raise BadArgument("entropy", f"entropy: give {ENTROPY_SIZE} bytes, not {len(entropy)}")
        live, role = self.authorize(match_id, token)
        if role == OBSERVER:
            raise Forbidden("the observer gives no entropy: each seat gives its own")
        with live.lock:
            match = live.match
            if not live.seat_entropy:
                raise EntropyNotWanted("the match was created without seat entropy")
            if match.history:
                logged = live.logged_entropy()
                if logged is not None and logged[role] == entropy:  # a retry, answered again
                    first = match.history[0]
                    dealt = (first.deal.leader, first.leader_choice)
                    return Contributed(role, tuple(range(match.seats)), dealt)
                raise EntropyNotWanted(
                    "the match's first round is already dealt: entropy is given before it"
                )
            given = live.contributions.get(role)
            if given is not None and given != entropy:
                raise EntropyAlreadyGiven(
                    f"seat {role} has already given other entropy: each seat gives it once"
                )
            contributions = {**live.contributions, role: bytes(entropy)}
            if len(contributions) < match.seats:
                live.contributions = contributions
                return Contributed(role, tuple(sorted(contributions)), None)
            return self._deal_first(live, role, contributions)

    def _deal_first(
        self, live: LiveMatch, role: int, contributions: dict[int, bytes]
    ) -> Contributed:
        """Deal the first round from the seed the house's and every seat's entropy make; the
        contributions are kept only once the deal is durable."""
        match = live.match
        assert live.secrets is not None
        assert live.secrets.seed is not None
        entropies = [contributions[s] for s in range(match.seats)]
        match.seed = seat_entropy_seed(live.secrets.seed, entropies)
        match.deal(None)
        (event,) = live.seal([deal_event(live.match_id, len(live.events), match, False, entropies)])
        try:
            self.log.append([event])
        except BaseException:
            self._rebuild(live)  # undealt again, under the house's seed
            raise
        live.contributions = contributions
        live.events.append(Logged(event, match.move_count))
        self._restart_clock(live)
        self._notify_followed(live)
        log = match.history[-1]
        return Contributed(role, tuple(range(match.seats)), (log.deal.leader, log.leader_choice))

    def deal(self, match_id: str, token: str, deal: Deal | None) -> tuple[int, int, LeaderChoice]:
        """Start the next round; an explicit deal needs the observer token."""
        live, role = self.authorize(match_id, token)
        if deal is not None and role != OBSERVER:
            raise Forbidden("only the observer token may give an explicit deal")
        with live.lock:
            return self._deal_locked(live, deal)

    def deal_round(self, match_id: str, token: str, round_index: int) -> bool:
        """Deal round `round_index` from the match's seed exactly once (a Play answer): True
        when dealt now, False when that round was dealt already (nothing is done again).

        A round that is neither dealt nor the next one is refused like a stale
        move count, since the caller answers a decision it no longer has.
        """
        live, _ = self.authorize(match_id, token)
        with live.lock:
            live.check_dealt()
            current = live.match.round_index
            if round_index <= current:
                return False
            if round_index != current + 1:
                raise StaleMoveCount(
                    f"round {round_index} is not the next round to deal ({current + 1})"
                )
            self._deal_locked(live, None)
            return True

    def _deal_locked(self, live: LiveMatch, deal: Deal | None) -> tuple[int, int, LeaderChoice]:
        """Deal the next round, durable before it returns; the caller holds `live.lock`."""
        live.check_dealt()
        match = live.match
        match.deal(deal)  # refuses a wrong phase or a bad deal before changing anything
        (event,) = live.seal(
            [deal_event(live.match_id, len(live.events), live.match, deal is not None)]
        )
        try:
            self.log.append([event])
        except BaseException:
            self._rebuild(live)
            raise
        live.events.append(Logged(event, match.move_count))
        self._restart_clock(live)
        self._notify_followed(live)
        log = match.history[-1]
        return match.round_index, log.deal.leader, log.leader_choice

    def pending(self, live: LiveMatch, seat: int) -> Pending | None:
        """What `seat` must decide now, or None: read under the match's lock, so the view,
        the moves and the move count are of one moment (a Play stream sends it)."""
        with live.lock:
            decision = self._decision_locked(live)
            pending = decision.pending if decision.seat == seat else None
            if pending is not None and pending.clock is not None and live.clock is not None:
                # a decision read again later (a resumed stream) shows the clock as it is now
                pending = replace(pending, clock=live.clock.times(self.now())[seat])
        return pending

    @staticmethod
    def decided(live: LiveMatch, seat: int) -> tuple[bool, Pending | None]:
        """(True, what `pending` would say) when the match's decision was already read at
        its present durable events; else (False, None). Takes no lock, so an event loop may
        call it: a Play stream then needs no call into the hub's pool for the decision."""
        decision = live.decision
        if decision is None or decision.events != len(live.events):
            return False, None
        return True, decision.pending if decision.seat == seat else None

    def _decision_locked(self, live: LiveMatch) -> Decision:
        """The match's decision now (the caller holds `live.lock`), read once per change."""
        known = len(live.events)
        decision = live.decision
        if decision is not None and decision.events == known:
            return decision
        match = live.match
        if live.missing_entropy():
            decision = Decision(known, None, None)
        elif match.phase is Phase.PLAYING:
            seat = match.turn
            layout = match.layout
            seen = view(match, seat)
            pending = Pending(
                match.move_count,
                known,
                None,
                seen,
                match.history[-1].leader_choice,
                live.proof(),
                seen.legal,  # the seat to play's view holds its legal moves, in their order
                (layout.open_sides(), layout.counted_ends()),
                None if live.clock is None else live.clock.times(self.now())[seat],
            )
            decision = Decision(known, seat, pending)
        elif match.phase is Phase.AWAITING_DEAL and match.history:
            pending = Pending(match.move_count, known, match.round_index + 1)
            decision = Decision(known, DEALING_SEAT, pending)
        else:
            decision = Decision(known, None, None)
        live.decision = decision
        return decision

    def _notify_followed(self, live: LiveMatch) -> None:
        """`_notify`, the match's next decision read first when anyone follows it (the
        caller holds `live.lock`), so that each Play stream finds it (`decided`)."""
        if live.listeners:
            try:
                self._decision_locked(live)
            except Exception:  # the change is durable: its followers must hear of it anyway
                _log.exception("match %s: its decision is left to its followers", live.match_id)
        self._notify(live)

    # -- moves -------------------------------------------------------------

    def legal_moves(self, match_id: str, token: str, seat: int) -> list[Move]:
        live, role = self.authorize(match_id, token)
        self._check_seat(live, seat)
        if role not in (seat, OBSERVER):
            raise Forbidden(f"this token may not see seat {seat}'s moves")
        with live.lock:
            live.check_dealt()
            match = live.match
            if match.phase is not Phase.PLAYING or match.turn != seat:
                return []
            return match.legal_moves()

    def apply(
        self,
        match_id: str,
        token: str,
        seat: int,
        move: Move,
        expected_move_count: int,
        *,
        received: float | None = None,
    ) -> ApplyOutcome:
        """Apply one action exactly once; durable before it returns."""
        applied = self.apply_once(
            match_id, token, seat, move, expected_move_count, received=received
        )
        return applied[0]

    def apply_once(
        self,
        match_id: str,
        token: str,
        seat: int,
        move: Move,
        expected_move_count: int,
        *,
        received: float | None = None,
    ) -> tuple[ApplyOutcome, bool]:
        """`apply`, and whether the action was applied by this call (False: a retry of one
        applied before, answered with its outcome).

        `received` is when the server received the answer, on `now`'s clock (now, when not
        given): a clocked seat's time stops there. An answer received once its seat was out
        of time is refused as stale (or as for a match over, after a forfeit) once the server
        has acted for the seat; a timeout that came first is not made again.
        """
        if received is None:
            received = self.now()
        live, role = self.authorize(match_id, token)
        self._check_seat(live, seat)
        if role != seat:
            who = "the observer" if role == OBSERVER else f"seat {role}'s token"
            raise Forbidden(f"{who} may not move for seat {seat}")
        notation = str(move)
        ended_by_timeout = False
        try:
            with live.lock:
                live.check_dealt()
                match = live.match
                bank = None
                if expected_move_count == match.move_count:
                    bank = self._bank_after(live, seat, received)
                    if bank is not None and bank < 0:
                        # out of time before it answered: the server acts for the seat first
                        ended_by_timeout = self._time_out_locked(live, received)
                        if live.forfeited_seat is not None:
                            raise MatchOver(
                                f"seat {seat} ran out of time and forfeited: the match is over"
                            )
                if expected_move_count != match.move_count:
                    if expected_move_count < match.move_count:
                        done_seat, done_move, outcome = live.outcomes[expected_move_count]
                        if (
                            done_seat == seat
                            and done_move == notation
                            and expected_move_count not in live.timed_out
                        ):
                            return outcome, False
                    ran_out = expected_move_count in live.timed_out
                    raise StaleMoveCount(
                        (
                            f"seat {seat} ran out of time: the server acted for it; "
                            if ran_out
                            else ""
                        )
                        + f"the match has applied {match.move_count} actions, not "
                        f"{expected_move_count}: read the state and decide again"
                    )
                outcome = self._act(live, move, seat, bank)
        finally:
            if ended_by_timeout:
                self._ended(match_id)
        if outcome.result.match_over:
            self._ended(match_id)
        return outcome, True

    def _act(
        self,
        live: LiveMatch,
        move: Move,
        seat: int,
        bank: int | None,
        timeout: str | None = None,
    ) -> ApplyOutcome:
        """Apply one action and make it durable; the caller holds `live.lock` and has checked
        the move count. `bank`: the seat's bank after it (a clocked match), logged with the
        action, and `timeout` the policy that chose it for a seat out of time."""
        match = live.match
        try:
            outcome = self._apply_locked(live, move, seat)
        except TileNotInHand:
            # The engine says where the tile is (another seat's hand, the
            # boneyard), which an audit may show but a seat must not learn.
            assert move.tile is not None
            where = " (it is on the layout)" if match.layout.covered[move.tile] >= 0 else ""
            raise TileNotInHand(
                f"tile {NAMES[move.tile]} is not in seat {seat}'s hand{where}"
            ) from None
        events = self._action_events(live, outcome)
        if bank is not None:
            clocked: dict[str, Any] = {"bank_ms": bank}
            if timeout is not None:
                clocked["timeout"] = timeout
            events[0] = replace(events[0], detail=clocked)
        events = live.seal(events)
        facts = self._ended_facts(live) if outcome.result.match_over else None
        logged = self._logged(events, outcome.move_count)
        try:
            self.log.append(events, facts, [i.checkpoint for i in logged if i.checkpoint])
        except BaseException:
            self._rebuild(live)
            raise
        if bank is not None and live.clock is not None:
            live.clock.banks[seat] = bank
        if timeout is not None:
            live.timed_out.add(outcome.move_count - 1)
        live.events.extend(logged)
        outcome = self._with_head(live, outcome, logged[-1])
        self._restart_clock(live)
        self._notify_followed(live)
        return outcome

    def _ended(self, match_id: str) -> None:
        """The match has just ended: out of play, and retired (after its lock is released)."""
        with self._registry_lock:
            self._in_play.discard(match_id)
        self._retire(match_id)

    # -- time controls (service/clock.py) ------------------------------------

    @staticmethod
    def _bank_after(live: LiveMatch, seat: int, received: float) -> int | None:
        """The seat's bank once its answer received at `received` is applied; None for a
        match without a clock or a seat whose decision is not timed, -1 when out of time."""
        clock = live.clock
        if clock is None or clock.seat != seat or clock.move_count != live.match.move_count:
            return None
        bank = clock.bank_after(received)
        return -1 if bank is None else bank

    def _restart_clock(self, live: LiveMatch) -> None:
        """Time the match's next decision from now (after it was made durable); the caller
        holds `live.lock`."""
        clock = live.clock
        if clock is None:
            return
        match = live.match
        now = self.now()
        if match.phase is Phase.PLAYING:
            clock.start(match.turn, match.move_count, now)
        elif match.phase is Phase.AWAITING_DEAL and match.history and live.forfeited_seat is None:
            clock.start_deal(match.round_index + 1, match.move_count, now)
        else:
            clock.stop()
        self.timekeeper.set(live.match_id, clock.deadline())

    def time_out(self, match_id: str) -> None:
        """Act for the seat whose time has run out, if it has (the timekeeper's call)."""
        live = self._matches.get(match_id)
        if live is None:
            self.timekeeper.set(match_id, None)
            return
        with live.lock:
            over = self._time_out_locked(live, self.now())
        if over:
            self._ended(match_id)

    def _time_out_locked(self, live: LiveMatch, now: float) -> bool:
        """Act for the timed decision if its time had run out by `now`, through the path
        every move takes: the policy's move, a forfeit, or (for a deal) the deal. The caller
        holds `live.lock`, and retires the match (`_ended`) when this says it ended."""
        clock = live.clock
        deadline = None if clock is None else clock.deadline()
        match = live.match
        if clock is None or deadline is None or clock.elapsed_ms(now) < clock.allowance_ms():
            self.timekeeper.set(live.match_id, deadline)
            return False
        if clock.move_count != match.move_count or live.missing_entropy():
            self._restart_clock(live)  # a decision that is no more: time the one there is
            return False
        if clock.seat is None:
            if match.phase is Phase.AWAITING_DEAL:
                self._deal_locked(live, None)
            else:
                self._restart_clock(live)
            return False
        seat = clock.seat
        control = clock.control
        if control.out_of_time is OutOfTime.FORFEIT:
            self._forfeit_locked(live, seat)
            return True
        assert control.policy is not None
        move = make_bot(control.policy).choose(view(match, seat))
        return self._act(live, move, seat, 0, control.policy).result.match_over

    def _forfeit_locked(self, live: LiveMatch, seat: int) -> None:
        """End the match as forfeited by `seat` (`Match.forfeit`): a `match_ended` event whose
        detail names the seat and where (`forfeit`), durable before anyone hears of it."""
        match = live.match
        round_index, action_index = match.round_index, len(match.history[-1].actions)
        match.forfeit(seat)
        reveal = {"seed": match.seed} if live.secrets is None else live.secrets.revealed_detail()
        event = forfeit_event(
            live.match_id, len(live.events), match, seat, round_index, action_index, reveal
        )
        (sealed,) = live.seal([event])
        facts = self._ended_facts(live)
        logged = self._logged([sealed], match.move_count)
        try:
            self.log.append([sealed], facts, [i.checkpoint for i in logged if i.checkpoint])
        except BaseException:
            self._rebuild(live)
            raise
        live.forfeited_seat = seat
        live.events.extend(logged)
        self._restart_clock(live)
        self._notify(live)

    def timing(self, live: LiveMatch) -> Timing | None:
        """The match's time control and every seat's clock now (None without a clock)."""
        with live.lock:
            clock = live.clock
            if clock is None:
                return None
            return Timing(clock.control, clock.times(self.now()), live.forfeited_seat)

    def _logged(self, events: list[LogEvent], move_count: int) -> list[Logged]:
        """Events as kept in memory, a round or match end with its checkpoint when the log
        signs: the one signature a move may cost, and only a move that ends a round."""
        key = self.log.signer
        return [
            Logged(
                e,
                move_count,
                None
                if key is None or e.hash is None or e.kind not in HEAD_KINDS
                else Checkpoint.sign(key, e.match_id, e.seq, e.hash.hex()),
            )
            for e in events
        ]

    @staticmethod
    def _with_head(live: LiveMatch, outcome: ApplyOutcome, logged: Logged) -> ApplyOutcome:
        """The outcome with the chain's head (its checkpoint, and the reveal) when it ended a
        round or the match; kept so that a retry gets it too."""
        last = logged.event
        if last.kind not in HEAD_KINDS:
            return outcome
        if live.secrets is None and last.kind != "match_ended":
            return outcome  # an unkeyed (legacy) head could be tested against guesses
        revealed = live.secrets if last.kind == "match_ended" else None
        outcome = replace(
            outcome,
            chain_head=last.hash,
            chain_head_seq=last.seq,
            revealed=revealed,
            checkpoint=logged.checkpoint,
        )
        seat, notation, _ = live.outcomes[-1]
        live.outcomes[-1] = (seat, notation, outcome)
        return outcome

    @staticmethod
    def _check_seat(live: LiveMatch, seat: int) -> None:
        if not 0 <= seat < live.match.seats:
            raise BadArgument("seat", f"seat: {seat} is not a seat of this match")

    def _retire(self, match_id: str) -> None:
        """Keep only the most recently finished matches in memory; older ones reload on demand.

        A finished match changes no more, and `get` rebuilds it from the log
        (replies to retries included), so memory stays bounded by the
        matches in play.
        """
        with self._registry_lock:
            self._finished.append(match_id)
            while len(self._finished) > FINISHED_KEPT:
                self._matches.pop(self._finished.popleft(), None)

    def _apply_locked(self, live: LiveMatch, move: Move, seat: int | None = None) -> ApplyOutcome:
        """Apply through the engine (which refuses an illegal move before changing anything)."""
        match = live.match
        round_index = match.round_index
        action_index = len(match.history[-1].actions)
        result = match.apply(move, seat)
        return self._record(live, result, round_index, action_index)

    @staticmethod
    def _record(
        live: LiveMatch, result: ActionResult, round_index: int, action_index: int
    ) -> ApplyOutcome:
        """Keep what the reply to an action just applied says, for a retry to get it again."""
        match = live.match
        layout = match.layout
        hands = None
        if result.round_end is not None or result.match_over:
            hands = tuple(tuple(match.hand(s)) for s in range(match.seats))
        winners: tuple[int, ...] = ()
        if result.winner is not None:
            winners = winning_seats(result.winner, match.seats)
        outcome = ApplyOutcome(
            result=result,
            round_index=round_index,
            action_index=action_index,
            move_count=match.move_count,
            counted_ends=layout.counted_ends(),
            ends_sum=layout.ends,
            turn=match.turn if match.phase is Phase.PLAYING else None,
            scores=match.seat_scores(),
            winning_seats=winners,
            remaining_hands=hands,
        )
        live.outcomes.append((result.seat, str(result.move), outcome))
        return outcome

    @staticmethod
    def _ended_facts(live: LiveMatch) -> FactsRows | None:
        """The facts of a match that has just ended, made from the match in memory, so the
        log loads them with its end instead of replaying it under its commit lock. None (the
        log replays it) if making them fails: the move must not be lost to a facts bug."""
        try:
            return ended_match_facts(live.match, live.match_id, live.events[0].event.detail or {})
        except Exception:
            _log.exception("match %s: its facts are left to the log's replay", live.match_id)
            return None

    @staticmethod
    def _action_events(live: LiveMatch, outcome: ApplyOutcome) -> list[LogEvent]:
        match = live.match
        reveal = {"seed": match.seed} if live.secrets is None else live.secrets.revealed_detail()
        return action_events(
            live.match_id,
            len(live.events),
            match,
            outcome.result,
            outcome.round_index,
            outcome.action_index,
            reveal,
        )

    # -- reading -----------------------------------------------------------

    def state(
        self, match_id: str, token: str, *, analysis: bool = False
    ) -> tuple[SeatView, LeaderChoice | None, Proof]:
        """The match as `token` may see it; `analysis`: refused (AwaitingEntropy) while the
        first deal waits for entropy, since there is then no position to analyse."""
        live, role = self.authorize(match_id, token)
        with live.lock:
            if analysis:
                live.check_dealt()
            match = live.match
            choice = match.history[-1].leader_choice if match.history else None
            return view(match, None if role == OBSERVER else role), choice, live.proof()

    def timed_state(
        self, match_id: str, token: str
    ) -> tuple[SeatView, LeaderChoice | None, Proof, Timing | None]:
        """`state`, with the match's time control and clocks when it has them (GetState)."""
        v, choice, proof = self.state(match_id, token)
        return v, choice, proof, self.timing(self.get(match_id))

    def analysis_view(self, match_id: str, token: str) -> SeatView:
        """The view an analysis is made from: that of the seat to play, holding `token`.

        Refused like a move out of place: the observer has no view of its own
        to analyse (Forbidden), and only the seat to play has a decision.
        """
        v, _, _ = self.state(match_id, token, analysis=True)
        if v.viewer is None:
            raise Forbidden(
                "an analysis is made from one seat's view: use the token of the seat to play"
            )
        if v.phase is Phase.OVER:
            raise MatchOver("the match is over: there is nothing to analyse")
        if v.phase is not Phase.PLAYING:
            raise NoRoundInPlay("no round is in play: the next round must be dealt first")
        if v.turn != v.viewer:
            raise NotYourTurn(f"it is seat {v.turn}'s turn, not seat {v.viewer}'s")
        return v

    def import_matches(self, table: pa.Table, facts: FactsTables | None = None) -> Imported:
        """Whole finished matches a client sent (ImportMatches), checked, added at once, with
        the facts the client made for them (the log replays the matches it sent none for).

        Values the log cannot store (a column of another type, a number out of
        its range) are the client's fault like a broken chain: BadImport.
        """
        import pyarrow as pa

        try:
            return self.log.import_matches(table, verify=True, facts=facts)
        except (TypeError, ValueError, pa.ArrowException) as exc:
            raise BadImport(f"the events cannot be stored: {exc}") from None

    def store_simulated(
        self, run: SimulationRun, matches: pa.Table, rounds: pa.Table, decisions: pa.Table
    ) -> int:
        """A chunk of a facts-only simulation run a client sent (StoreSimulated): checked
        (`simulated.checked_chunk`), then stored in one transaction; how many matches.

        A run the log holds already must have the same settings (its code version
        aside: a resume may run other code of the same `sim_version`)."""
        check_run(run)
        tables = checked_chunk(run, matches, rounds, decisions)
        held = self.log.simulation_run(run.run_id)
        if held is not None and replace(held, code_version="") != replace(run, code_version=""):
            raise BadSimulated(f"run {run.run_id} is in the log with other settings")
        ids = tables[0].column("match_id").to_pylist()
        present = self.log.query(
            "SELECT match_id FROM match_settings_all WHERE match_id BETWEEN $1 AND $2",
            [min(ids), max(ids)],
        ).column(0)
        clash = set(present.to_pylist()) & set(ids)
        if clash:
            raise BadSimulated(f"the log holds match {min(clash)} already: nothing stored")
        self.log.store_simulated(run, RULES_VERSION, *tables)
        return int(tables[0].num_rows)

    # -- signed evidence (docs/evidence.md) ----------------------------------

    def _signer(self) -> SigningKey:
        key = self.log.signer
        if key is None:
            raise NotSigning("this service signs nothing: it was started without a signing key")
        return key

    def log_key(self) -> tuple[SigningKey, TreeHead | None]:
        """The signing key and the latest tree head it signed (None before any)."""
        key = self._signer()
        return key, read_tree(self.log.query).latest(key.log_id)

    def inclusion(self, match_id: str) -> InclusionProof:
        """The inclusion proof of a finished match in the latest signed tree head (NotInTree
        when it has no leaf, or none such a head covers yet)."""
        key = self._signer()
        return read_tree(self.log.query).inclusion(match_id, key.log_id)

    def consistency(self, old_size: int, new_size: int | None) -> ConsistencyProof:
        """The consistency proof between two of this key's signed tree heads."""
        key = self._signer()
        return read_tree(self.log.query).consistency(old_size, new_size, key.log_id)

    @staticmethod
    def listen(live: LiveMatch, callback: Callable[[], None]) -> None:
        """Call `callback` after each change to `live`'s durable events, until `unlisten`.

        It is called from the thread that made the change, with the match's
        lock held: it must only signal (for example, schedule a wake-up on an
        event loop), never block or call back into the hub. Registering takes
        no lock (adding to a set is atomic), so an event loop may call this.
        Listen first, then read `events_from`: no change is then missed.
        """
        live.listeners.add(callback)

    @staticmethod
    def unlisten(live: LiveMatch, callback: Callable[[], None]) -> None:
        live.listeners.discard(callback)

    @staticmethod
    def may_decide(live: LiveMatch, seat: int) -> bool:
        """False only when `seat` surely has nothing to decide now (`pending` would say None),
        read from the last durable event without the lock, so a Play stream asks `pending`
        (a thread and the lock) only for the seat a change made the one to act."""
        events = live.events
        if not events:
            return False
        last = events[-1]
        kind = last.event.kind
        if kind == "action":
            outcomes = live.outcomes  # replaced whole by a rebuild: then ask
            index = last.move_count - 1
            return index >= len(outcomes) or outcomes[index][2].turn == seat
        if kind == "round_ended":
            return seat == DEALING_SEAT
        if kind == "round_dealt":
            return bool((last.event.detail or {}).get("leader", seat) == seat)
        return False  # created, waiting for entropy (else dealt in the same append), or over

    @staticmethod
    def events_from(live: LiveMatch, seq: int) -> tuple[list[Logged], bool]:
        """The durable events from `seq` on, and whether the match is over with them.

        Takes no lock (the events list only ever grows by whole appends, or is
        replaced by an equal one), so a watcher on an event loop never waits
        for a move's fsync.
        """
        events = live.events
        over = bool(events) and events[-1].event.kind == "match_ended"
        return events[seq:], over

    @staticmethod
    def layout_sum(live: LiveMatch, seq: int) -> int:
        """The layout's ends sum right after event `seq`, as ApplyMove gave it.

        The log keeps an ends sum for placements only: a draw or a pass
        changes nothing on the layout and logs null (the chain's canonical
        content keeps it so). What a watcher reads must not differ from what
        the mover read, so a draw or pass gets the sum of the round's last
        placement before it. A round's deal starts an empty layout (0). Takes
        no lock, like `events_from`.
        """
        events = live.events
        for i in range(seq, -1, -1):
            event = events[i].event
            if event.kind != "action":
                return 0
            if event.ends_sum is not None:
                return event.ends_sum
        return 0

    @staticmethod
    def _notify(live: LiveMatch) -> None:
        for callback in tuple(live.listeners):
            callback()

    def match_ids(self) -> list[str]:
        return list(self._matches)

    # -- recovery ----------------------------------------------------------

    def recover(self) -> int:
        """Rebuild every unfinished match in the log; return how many.

        Finished matches are rebuilt when first asked for (`get`), so start-up
        time grows with the matches in play, not with the whole history.
        """
        count = 0
        for match_id, events in self.log.events_by_match(unfinished_only=True):
            self._matches[match_id] = self._replayed(match_id, events)
            self._in_play.add(match_id)
            count += 1
        return count

    def in_play(self) -> int:
        """How many matches are in play (created and not yet won)."""
        return len(self._in_play)

    def _replayed(self, match_id: str, events: list[LogEvent]) -> LiveMatch:
        live = LiveMatch(match_id, Match(2, auto_deal=False), ())
        live.events = self._logged(events, 0)
        self._rebuild(live)
        return live

    def _rebuild(self, live: LiveMatch) -> None:
        """Replace a match's state by a replay of its durable events (after a restart or a
        failed write), so memory never holds an action the log does not."""
        events = [item.event for item in live.events]
        kept = live.events
        if not events or events[0].kind != "match_created":
            raise RecoveryError(f"match {live.match_id}: the log does not start with its creation")
        d: dict[str, Any] = dict(events[0].detail or {})
        live.outcomes = []
        live.timed_out = set()
        live.forfeited_seat = None
        rebuilt: list[Logged] = []
        try:
            for step in replayer.replay(events):
                if isinstance(step, replayer.Created):
                    live.match = step.match
                    live.token_digests = tuple(d["token_sha256"])
                    live.secrets = MatchSecrets.from_detail(d)
                    live.seat_entropy = d.get("seat_entropy") is True
                    live.clock = _clock_of(d, step.match.seats)
                elif isinstance(step, replayer.Acted):
                    self._record(live, step.result, step.round_index, step.action_index)
                    self._clocked(live, step.result.seat, events[step.position].detail)
                elif isinstance(step, replayer.MatchEnded) and "forfeit" in (
                    step.event.detail or {}
                ):
                    live.forfeited_seat = (step.event.detail or {})["forfeit"]["seat"]
                elif isinstance(step, replayer.RoundEnded | replayer.MatchEnded) and live.outcomes:
                    self._with_head(live, live.outcomes[-1][2], kept[step.position])
                rebuilt.append(
                    Logged(
                        events[step.position],
                        live.match.move_count,
                        kept[step.position].checkpoint,
                    )
                )
        except replayer.ReplayMismatch as e:
            raise RecoveryError(_recovery_message(live.match_id, events, e)) from None
        live.events = rebuilt
        self._restart_clock(live)

    @staticmethod
    def _clocked(live: LiveMatch, seat: int, detail: Mapping[str, Any] | None) -> None:
        """Take what a logged action says of the clock: the seat's bank after it, and
        whether the server made it for a seat out of time."""
        if detail is None:
            return
        if live.clock is not None and isinstance(detail.get("bank_ms"), int):
            live.clock.banks[seat] = detail["bank_ms"]
        if detail.get("timeout") is not None:
            live.timed_out.add(live.match.move_count - 1)


def _clock_of(created: Mapping[str, Any], seats: int) -> MatchClock | None:
    """The clock of a match replayed from its log: every bank whole, until its actions
    say otherwise (`Hub._clocked`); only the log counts, not a clock held before."""
    control = TimeControl.of_detail(created)
    return None if control is None else MatchClock.new(control, seats)


def _recovery_message(
    match_id: str, events: list[LogEvent], mismatch: replayer.ReplayMismatch
) -> str:
    """What recovery says of the first disagreement between the log and the engine."""
    event = events[mismatch.position]
    if isinstance(mismatch, replayer.DealMismatch):
        return f"match {match_id}: round {event.round} re-deals differently"
    if isinstance(mismatch, replayer.ActionMismatch) and mismatch.field == "points":
        return f"match {match_id}: event {event.seq} scores differently"
    return f"match {match_id}: event {event.seq} does not replay: {mismatch}"
