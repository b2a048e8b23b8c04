"""The event-log rows of a match, kept as columns and chained as they come: the bulk path.

`sniff import` (each record the audit replays) and `sniff simulate` (each match a
worker plays) make hundreds of events a match, and a `LogEvent` an event with its
checks and its generic canonical encoding cost more than the play itself.
`ColumnRecorder` writes the same rows, byte for byte, straight from the engine's
values; tests/test_import_rows.py and tests/test_simulate_rows.py hold it to the
plain `EventRecorder`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from hashlib import sha256
from typing import Any

from analysis.match_events import EventRecorder
from service.match_events import match_ended_event
from service.storage.chain import CHAIN_DOMAIN, GENESIS, canonical
from service.storage.events import COLUMNS, DETAIL, EventRow, LogEvent, to_rows
from sniff import ActionResult, RoundEnd
from sniff.facts import RoundFacts, RoundRecorder
from sniff.tiles import NAMES, tiles_of

_CHAIN_PREFIX = CHAIN_DOMAIN + b"\x00"
_encode_string = json.encoder.encode_basestring  # chain.canonical's escaping of a str
_QUOTED = tuple(_encode_string(name) for name in NAMES)
"""Each tile's name as a JSON string (what the encoders write for it)."""


def _ints(values: Iterable[int]) -> str:
    """A list of plain ints as JSON (what the encoders write for it)."""
    return "[" + ",".join([str(v) for v in values]) + "]"


def _tiles(tiles: Iterable[int]) -> str:
    """A list of tiles as the JSON list of their names."""
    return "[" + ",".join([_QUOTED[t] for t in tiles]) + "]"


class ColumnRecorder(EventRecorder):
    """An `EventRecorder` that keeps its events as columns, chained as they come, instead of
    `LogEvent`s.

    The bulk of a match is its plain actions, its deals and its round ends: for those it
    writes the row's values, the `detail` text and the canonical encoding (chain.canonical's
    text, byte for byte; `detail` as `to_rows` writes it) straight from the engine's values,
    without a `LogEvent` or its checks, which cost more than the replay itself. The other
    events (match_created, match_ended) go the ordinary way (`to_rows`, `canonical`).
    tests/test_import_rows.py holds every row to the plain recorder's.
    """

    def __init__(self, match_id: str, seats: int, **kwargs: Any) -> None:
        # The rows' values that vary (match_id, seq and logged_at do not: see `columns`), in
        # `COLUMNS` order, hash last: one tuple an event (one append, where a list a column
        # cost ten), turned into columns at the end.
        self._rows: list[tuple[Any, ...]] = []
        self._head = GENESIS
        self._seq = 0
        self._id_text = _encode_string(match_id)
        self._rounds: list[RoundRecorder] = []
        self._recorder: RoundRecorder | None = None
        first_deal, deal = kwargs.pop("first_deal", True), kwargs.pop("deal", None)
        super().__init__(match_id, seats, first_deal=False, **kwargs)
        self._key = self.secrets.chain_secret  # the secrets are made by the match's creation
        if first_deal:
            self.deal(deal)

    def _log(self, *events: LogEvent) -> None:
        secret = self.secrets.chain_secret
        head = self._head
        for event, row in zip(events, to_rows(events), strict=True):
            # The details made here hold engine values only (ints, tile names); the
            # record's own (players, its id) are in match_created: that one is checked.
            content = canonical(*row[:DETAIL], event.detail, checked=event.kind == "match_created")
            head = sha256(_CHAIN_PREFIX + head + secret + content).digest()
            self._rows.append((*row[2:DETAIL], row[DETAIL], head))
        self._head = head
        self._seq += len(events)

    def _push(
        self,
        kind: str,
        round_index: int | None,
        action_index: int | None,
        seat: int | None,
        detail: str,
        content: str,
    ) -> None:
        """Add an event with no move (a deal, a round end) and link it: `content` is its
        canonical encoding (the next seq)."""
        head = self._head = sha256(
            _CHAIN_PREFIX + self._head + self._key + content.encode()
        ).digest()
        self._rows.append(
            (kind, round_index, action_index, seat, None, None, None, None, detail, head)
        )
        self._seq += 1

    def __len__(self) -> int:
        """How many events the match has so far."""
        return self._seq

    def columns(self) -> list[Sequence[Any]]:
        """The events as the columns of `events_all` rows, in `COLUMNS` order (chained,
        logged_at left to the log)."""
        n = self._seq
        if not n:
            return [[] for _ in COLUMNS]
        return [[self.match_id] * n, range(n), *zip(*self._rows, strict=True), [None] * n]

    def rows(self) -> list[EventRow]:
        return list(zip(*self.columns(), strict=True))

    def dealt(self, *, explicit: bool) -> None:
        match = self.match
        log = match.history[-1]
        deal = log.deal
        # service.match_events.deal_event's detail: as `to_rows` writes it (in its order)
        # and as the canonical encoding does (keys sorted).
        hands = "[" + ",".join([_tiles(hand) for hand in deal.hands]) + "]"
        boneyard = _tiles(deal.boneyard)
        leader = deal.leader
        if type(leader) is not int:  # an int of another type (a record built in code)
            leader = int(leader)
        choice = _encode_string(log.leader_choice.value)
        dealt_by = '"request"' if explicit else '"seed"'
        self._push(
            "round_dealt",
            match.round_index,
            None,
            deal.leader,
            f'{{"hands":{hands},"boneyard":{boneyard},"leader":{leader},'
            f'"leader_choice":{choice},"dealt_by":{dealt_by}}}',
            f'{{"action_index":null,"detail":{{"boneyard":{boneyard},"dealt_by":{dealt_by},'
            f'"hands":{hands},"leader":{leader},"leader_choice":{choice}}},"drawn":null,'
            f'"ends_sum":null,"kind":"round_dealt","match_id":{self._id_text},"move":null,'
            f'"points":null,"round":{match.round_index},"seat":{leader},"seq":{self._seq}}}',
        )
        self._recorder = RoundRecorder(match)
        self._rounds.append(self._recorder)

    def before(self) -> None:
        assert self._recorder is not None
        self._recorder.before(self.match)

    def rounds(self) -> list[RoundFacts]:
        """The facts of the rounds played, as the audit's replay played them (no replay)."""
        history = self.match.history
        return [rec.facts(history[i]) for i, rec in enumerate(self._rounds)]

    def applied(self, result: ActionResult, round_index: int, action_index: int) -> None:
        move = result.move
        seat, points, ends_sum, drawn = result.seat, result.points, result.ends_sum, result.drawn
        assert self._recorder is not None
        self._recorder.after(self.match, seat, move, points)
        # service.match_events.action_events' action, its canonical encoding written out.
        text = move.text
        content = (
            f'{{"action_index":{action_index},"detail":null,'
            f'"drawn":{"null" if drawn is None else _QUOTED[drawn]},'
            f'"ends_sum":{"null" if ends_sum is None else ends_sum},"kind":"action",'
            f'"match_id":{self._id_text},"move":{_encode_string(text)},'
            f'"points":{"null" if points is None else points},"round":{round_index},'
            f'"seat":{seat},"seq":{self._seq}}}'
        ).encode()
        head = self._head = sha256(_CHAIN_PREFIX + self._head + self._key + content).digest()
        self._seq += 1
        self._rows.append(
            (
                "action",
                round_index,
                action_index,
                seat,
                text,
                None if drawn is None else NAMES[drawn],
                points,
                ends_sum,
                None,
                head,
            )
        )
        end = result.round_end
        if end is not None:
            self._round_ended(end, round_index)
        if result.match_over:
            self._log(
                match_ended_event(
                    self.match_id, self._seq, self.match, result, self.secrets.revealed_detail()
                )
            )

    def _round_ended(self, end: RoundEnd, round_index: int) -> None:
        """action_events' round_ended, with every hand left, written out like `dealt`'s."""
        match = self.match
        hands = "[" + ",".join([_tiles(tiles_of(hand)) for hand in match.hands]) + "]"
        kind = _encode_string(end.kind.value)
        finisher = "null" if end.finisher is None else str(end.finisher)
        pips, deductions, scores = _ints(end.pips), _ints(end.deductions), _ints(end.scores)
        self._push(
            "round_ended",
            round_index,
            None,
            end.finisher,
            f'{{"end":{kind},"finisher":{finisher},"pips":{pips},"deductions":{deductions},'
            f'"scores":{scores},"hands":{hands}}}',
            f'{{"action_index":null,"detail":{{"deductions":{deductions},"end":{kind},'
            f'"finisher":{finisher},"hands":{hands},"pips":{pips},"scores":{scores}}},'
            f'"drawn":null,"ends_sum":null,"kind":"round_ended","match_id":{self._id_text},'
            f'"move":null,"points":null,"round":{round_index},"seat":{finisher},'
            f'"seq":{self._seq}}}',
        )
