"""The hash chain of a match's events and the commitment to its seed.

Why: an organiser must be able to show that the log holds the games that
were played, unedited, and that no deal was chosen by hand. Each event
carries a hash of its content and of the previous event of its match, so an
edited, deleted, inserted or reordered event breaks the chain from there on;
players keep the chain's head, so even a log rewritten end to end, chain and
all, no longer matches what they hold. The seed of the deals is committed to
when the match is created and revealed when it is over.

Everything here is written down byte for byte in docs/chain.md (with test
vectors), so that another language can recompute it; the Node.js client
does (clients/node/provable.js).

* **Canonical encoding** of an event: the UTF-8 bytes of the JSON object
  with exactly the keys `action_index`, `detail`, `drawn`, `ends_sum`,
  `kind`, `match_id`, `move`, `points`, `round`, `seat`, `seq`, in that
  order (sorted by code point; keys inside `detail` sorted likewise, at
  every depth), no whitespace, absent values as `null`, integers in plain
  decimal, no floating-point numbers, strings escaped as JSON requires and
  no more (`"`, `\\` and U+0000..U+001F, the latter as `\\b \\t \\n \\f \\r`
  or `\\u00xx`), every other character as itself. `logged_at` is not part
  of it: the time an event became durable is the log's, not the game's.
* **Link** (schema version 3 on):
  `hash = SHA-256("sniff/chain/v1" || 0x00 || previous || secret || canonical)`,
  `previous` the hash of the match's event seq - 1 (32 zero bytes for seq
  0), `secret` the match's 32-byte chain secret, kept in the secret part of
  the log and revealed in the match_ended event.
* **Legacy link** (events written before schema version 3, chained when the
  file was migrated, and events of such a match appended later): the same
  without a secret, under the domain `sniff/chain/legacy/v1`. Only a
  secret-keyed chain stops a player from testing a head against guesses of
  the tiles still hidden.
* **Commitment**: `SHA-256("sniff/commit/v1" || 0x00 || seed as 8 bytes
  big-endian || salt)`, the salt 32 random bytes revealed with the seed.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from .events import HASH, EventContent, EventRow, LogEvent, content_of, dump_detail, to_rows

CHAIN_DOMAIN: Final = b"sniff/chain/v1"
LEGACY_DOMAIN: Final = b"sniff/chain/legacy/v1"
COMMIT_DOMAIN: Final = b"sniff/commit/v1"
HASH_SIZE: Final = 32
SECRET_SIZE: Final = 32
SALT_SIZE: Final = 32
GENESIS: Final = bytes(HASH_SIZE)
"""The `previous` of a match's first event (seq 0): 32 zero bytes."""

CONTENT_KEYS: Final = (
    "action_index",
    "detail",
    "drawn",
    "ends_sum",
    "kind",
    "match_id",
    "move",
    "points",
    "round",
    "seat",
    "seq",
)
"""The keys of the canonical encoding, in their (sorted) order."""

_CHAIN_PREFIX: Final = CHAIN_DOMAIN + b"\x00"
_LEGACY_PREFIX: Final = LEGACY_DOMAIN + b"\x00"
_COMMIT_PREFIX: Final = COMMIT_DOMAIN + b"\x00"
_SEED: Final = struct.Struct(">Q")

_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False,
    check_circular=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
)
_encode: Final = _ENCODER.encode


def _value_encoder() -> Callable[[Any], str]:
    """`_encode` for a value that is not a str, without making the C encoder anew for each
    call as `JSONEncoder.encode` does (a third of its time for a hand of tiles): the same
    encoder, its settings taken from `_encode`'s, made once. `_encode` itself without the
    C encoder (another Python)."""
    settings = _ENCODER
    make: Callable[..., Callable[[Any, int], Sequence[str]]] | None = getattr(
        json.encoder, "c_make_encoder", None
    )
    if make is None:  # pragma: no cover (CPython has it)
        return _encode
    chunks = make(
        None,
        settings.default,
        json.encoder.encode_basestring,
        None,
        settings.key_separator,
        settings.item_separator,
        settings.sort_keys,
        settings.skipkeys,
        settings.allow_nan,
    )
    return lambda value: "".join(chunks(value, 0))


_encode_value: Final = _value_encoder()


class NoCanonicalForm(ValueError):
    """A value the canonical encoding has no form for (a float, a non-string key, ...)."""


def _check(value: object) -> None:
    """Refuse what the encoding does not define: floats, and anything that is not JSON."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NoCanonicalForm(f"an object key must be a string, not {key!r}")
            _check(item)
        return
    if isinstance(value, list | tuple):
        for item in value:
            _check(item)
        return
    raise NoCanonicalForm(
        f"the canonical encoding has no form for {type(value).__name__} {value!r}"
    )


def canonical(
    match_id: str,
    seq: int,
    kind: str,
    round: int | None,
    action_index: int | None,
    seat: int | None,
    move: str | None,
    drawn: str | None,
    points: int | None,
    ends_sum: int | None,
    detail: Mapping[str, Any] | None,
    *,
    checked: bool = True,
) -> bytes:
    """The canonical encoding of one event's content (see the module's docstring).

    `checked=False` skips the walk that refuses floats and non-string keys,
    for a detail that cannot hold them (one read by `load_detail`).
    """
    if (
        type(kind) is str
        and type(match_id) is str
        and (move is None or type(move) is str)
        and (drawn is None or type(drawn) is str)
        and _plain(action_index, ends_sum, points, round, seat, seq)
    ):
        # Every event the service writes: plain ints and strs around the detail.
        if detail is None:
            detail_text = "null"
        else:
            if checked:
                _check(detail)
            detail_text = _encode(detail)
        # Written out (`_content_text`), four times faster than the encoder for an action
        # (the same text: keys in order, plain ints, strings escaped alike; an audit does
        # this for every event, an import or a simulation writes it).
        return _content_text(
            _encode_string(match_id),
            seq,
            kind,
            round,
            action_index,
            seat,
            move,
            drawn,
            points,
            ends_sum,
            detail_text,
        ).encode()
    outer = _encode_flat(
        {
            "action_index": action_index,
            "detail": None,
            "drawn": drawn,
            "ends_sum": ends_sum,
            "kind": kind,
            "match_id": match_id,
            "move": move,
            "points": points,
            "round": round,
            "seat": seat,
            "seq": seq,
        }
    )
    if detail is not None:
        if checked:
            _check(detail)
        # The outer keys are written in sorted order by the dict above, without a
        # sort; the detail (sorted at every depth) takes the place of its null,
        # which is the first `,"detail":null,` (only an integer or null is before it).
        outer = outer.replace(_DETAIL_NULL, f',"detail":{_encode(detail)},', 1)
    return outer.encode("utf-8")


def _content_text(
    id_text: str,
    seq: int,
    kind: str,
    round: int | None,
    action_index: int | None,
    seat: int | None,
    move: str | None,
    drawn: str | None,
    points: int | None,
    ends_sum: int | None,
    detail_text: str,
) -> str:
    """The canonical text of an event whose values around the detail are plain ints and
    strs (or None), given its match_id and detail already encoded: the one written-out
    form, which `canonical` and `EventChain` share (a test holds it to the generic
    encoder's); the values inline rather than through `_int` and `_str`, for speed."""
    return (
        f'{{"action_index":{"null" if action_index is None else action_index},'
        f'"detail":{detail_text},'
        f'"drawn":{"null" if drawn is None else _encode_string(drawn)},'
        f'"ends_sum":{"null" if ends_sum is None else ends_sum},'
        f'"kind":{_encode_string(kind)},"match_id":{id_text},'
        f'"move":{"null" if move is None else _encode_string(move)},'
        f'"points":{"null" if points is None else points},'
        f'"round":{"null" if round is None else round},'
        f'"seat":{"null" if seat is None else seat},"seq":{seq}}}'
    )


def detail_texts(detail: Mapping[str, Any]) -> tuple[str, str]:
    """(`detail` as the `detail` column stores it, `dump_detail`'s text with the keys in
    the detail's own order; its canonical text, keys sorted), each value encoded once.

    The recorder of a simulation or an import needs both for every deal and round end;
    encoding the detail twice cost as much as the rest of its recording. A value's text
    is the same sorted or not unless it holds an object (it has no `{` then), and its key
    is then written the same in both orders, so the two texts are the same joins of the
    same pieces, only in two orders. A detail with a non-string key or an object inside
    is encoded twice the ordinary way. No checks (see `canonical`'s `checked`).
    """
    parts: dict[str, str] = {}
    for key, value in detail.items():
        # The encoder's own text for a str or a plain int, without its call (a test
        # holds these to it); anything else through it.
        kind = type(value)
        if kind is str:
            text = _encode_string(value)
        elif kind is int:
            text = int.__repr__(value)
        elif value is None:
            text = "null"
        else:
            text = _encode_value(value)
        if type(key) is not str or "{" in text:
            stored = dump_detail(detail)
            assert stored is not None
            return stored, _encode(detail)
        parts[key] = f"{_encode_string(key)}:{text}"
    stored = "{" + ",".join(parts.values()) + "}"
    if len(parts) > 1:
        return stored, "{" + ",".join([parts[key] for key in sorted(parts)]) + "}"
    return stored, stored


class EventChain:
    """One match's hash chain, linked as a recorder makes its events: each event's row
    values (after match_id and seq: the content, detail as stored text, then the hash).

    For the bulk path (`service/match_recorder.py`): `row` takes content built from the
    engine's values (plain ints and strs, details of ints, strs and lists of them) with
    no checks, encodes it by `_content_text` and `detail_texts` (each detail once for
    both its stored text and its canonical one) and links it; `checked_row` takes any
    content (a match_created detail with a record's own values) the ordinary way.
    tests/test_chain.py holds `row` to `canonical`, `dump_detail` and `link`.
    """

    __slots__ = ("_id_text", "_link", "head")

    def __init__(self, match_id: str, secret: bytes, previous: bytes = GENESIS) -> None:
        self._id_text = _encode_string(match_id)
        self._link = linker(secret)  # checks the secret's size
        self.head = previous

    def row(self, seq: int, content: EventContent) -> tuple[Any, ...]:
        """The row values of the engine-valued `content` at `seq`, linked on the head."""
        kind, round, action_index, seat, move, drawn, points, ends_sum, detail = content
        if detail is None:
            stored = None
            detail_text = "null"
        else:
            stored, detail_text = detail_texts(detail)
        text = _content_text(
            self._id_text,
            seq,
            kind,
            round,
            action_index,
            seat,
            move,
            drawn,
            points,
            ends_sum,
            detail_text,
        )
        head = self.head = self._link(self.head, text.encode())
        return (kind, round, action_index, seat, move, drawn, points, ends_sum, stored, head)

    def checked_row(self, match_id: str, seq: int, content: EventContent) -> tuple[Any, ...]:
        """`row` for any content, checked and encoded by `canonical` and `dump_detail`."""
        encoded = canonical(match_id, seq, *content, checked=True)
        head = self.head = self._link(self.head, encoded)
        return (*content[:-1], dump_detail(content[-1]), head)


def _plain(*values: object) -> bool:
    """Every value an int (not a bool or another subclass) or None."""
    for v in values:  # noqa: SIM110 (a loop, not all() over a generator: twice as fast)
        if v is not None and type(v) is not int:
            return False
    return True


def _int(value: int | None) -> str:
    return "null" if value is None else str(value)


def _str(value: object) -> str:
    if value is None:
        return "null"
    if type(value) is str:
        return _encode_string(value)
    return _encode(value)  # not a string: as the encoder writes it (the audit reports it)


_encode_string = json.encoder.encode_basestring  # what the encoder writes for a str


_encode_flat = json.JSONEncoder(
    ensure_ascii=False, check_circular=False, allow_nan=False, separators=(",", ":")
).encode
_DETAIL_NULL: Final = ',"detail":null,'


def _no_float(text: str) -> Any:
    raise NoCanonicalForm(f"the canonical encoding has no form for the number {text}")


_DETAIL_DECODER: Final = json.JSONDecoder(parse_float=_no_float, parse_constant=_no_float)
"""One decoder for every detail: `json.loads` with hooks makes a new one each call."""


def load_detail(text: str) -> Any:
    """A detail's JSON text as a value, refusing a floating-point number (NoCanonicalForm)."""
    return _DETAIL_DECODER.decode(text)


def link(previous: bytes, secret: bytes | None, content: bytes) -> bytes:
    """The hash of an event whose canonical encoding is `content`.

    With `secret` None, the legacy link (no secret, its own domain).
    """
    if len(previous) != HASH_SIZE:
        raise ValueError(f"a previous hash is {HASH_SIZE} bytes, not {len(previous)}")
    if secret is None:
        return hashlib.sha256(_LEGACY_PREFIX + previous + content).digest()
    if len(secret) != SECRET_SIZE:
        raise ValueError(f"a chain secret is {SECRET_SIZE} bytes, not {len(secret)}")
    return hashlib.sha256(_CHAIN_PREFIX + previous + secret + content).digest()


def linker(secret: bytes | None) -> Callable[[bytes, bytes], bytes]:
    """`link` with `secret` checked once: `linker(secret)(previous, content)` for a walk
    along a whole chain (an audit links every event; `previous` is then its own hash)."""
    if secret is None:
        legacy = _LEGACY_PREFIX
        return lambda previous, content: hashlib.sha256(legacy + previous + content).digest()
    if len(secret) != SECRET_SIZE:
        raise ValueError(f"a chain secret is {SECRET_SIZE} bytes, not {len(secret)}")
    keyed = _CHAIN_PREFIX
    return lambda previous, content: hashlib.sha256(keyed + previous + secret + content).digest()


def chain(
    contents: Iterable[bytes], secret: bytes | None, previous: bytes = GENESIS
) -> list[bytes]:
    """The hashes of consecutive events of one match, from `previous` on."""
    hashes = []
    for content in contents:
        previous = link(previous, secret, content)
        hashes.append(previous)
    return hashes


def commitment(seed: int, salt: bytes) -> bytes:
    """The commitment to a match's seed (revealed with `salt` once the match is over)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
        raise ValueError(f"a seed is an integer from 0 to 2**64 - 1, not {seed!r}")
    if len(salt) != SALT_SIZE:
        raise ValueError(f"a salt is {SALT_SIZE} bytes, not {len(salt)}")
    return hashlib.sha256(_COMMIT_PREFIX + _SEED.pack(seed) + salt).digest()


def new_secret() -> bytes:
    """A fresh chain secret (or salt): 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_SIZE)


def from_hex(text: object, size: int = HASH_SIZE) -> bytes | None:
    """`size` bytes from lowercase or uppercase hex text; None for anything else."""
    if not isinstance(text, str) or len(text) != 2 * size:
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def row_content(row: Sequence[Any]) -> bytes:
    """The canonical encoding of an `events_all` row in column order (detail as JSON text)."""
    detail_text = row[10]
    detail = None if detail_text is None else load_detail(detail_text)
    return canonical(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        detail,
        checked=False,
    )


def event_content(event: LogEvent) -> bytes:
    """The canonical encoding of a `LogEvent`."""
    return canonical(event.match_id, event.seq, *content_of(event))


def seal(events: Iterable[LogEvent], previous: bytes, secret: bytes | None) -> list[LogEvent]:
    """The events with their hashes, chained on from `previous` (one match, in order)."""
    sealed = []
    for event in events:
        previous = link(previous, secret, event_content(event))
        sealed.append(replace(event, hash=previous))
    return sealed


def sealed_rows(
    events: Sequence[LogEvent], secret: bytes | None, previous: bytes = GENESIS
) -> list[EventRow]:
    """The events as `events_all` rows with their hashes: `seal` without a LogEvent per
    event (for bulk work such as an import, where making one costs more than hashing)."""
    rows = to_rows(events)
    hashes = chain([event_content(e) for e in events], secret, previous)
    return [(*row[:HASH], digest, row[-1]) for row, digest in zip(rows, hashes, strict=True)]


@dataclass(frozen=True, slots=True)
class MatchSecrets:
    """What makes a match provable: its seed, the salt of the commitment, the chain secret.

    All three stay in the secret part of the log (the match_created detail of
    `events_all`, which the plain views hide) while the match is in play; the
    commitment is public from the start; the match_ended event reveals the
    rest.
    """

    seed: int | None
    """None for a match with no seeded deal at all (an imported one): no commitment."""
    salt: bytes
    chain_secret: bytes

    @classmethod
    def new(cls, seed: int | None) -> MatchSecrets:
        return cls(seed, new_secret(), new_secret())

    @property
    def commitment(self) -> bytes | None:
        return None if self.seed is None else commitment(self.seed, self.salt)

    def created_detail(self) -> dict[str, Any]:
        """The keys a match_created detail carries (the two secrets hidden in play)."""
        found = self.commitment
        return {
            "seed_commitment": None if found is None else found.hex(),
            "seed_salt": None if self.seed is None else self.salt.hex(),
            "chain_secret": self.chain_secret.hex(),
        }

    def revealed_detail(self) -> dict[str, Any]:
        """The keys of the match_ended detail that reveal them once the match is over."""
        return {
            "seed": self.seed,
            "seed_salt": None if self.seed is None else self.salt.hex(),
            "chain_secret": self.chain_secret.hex(),
        }

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any]) -> MatchSecrets | None:
        """The secrets of a match_created (or match_ended) detail; None without a chain secret."""
        secret = from_hex(detail.get("chain_secret"), SECRET_SIZE)
        if secret is None:
            return None
        seed = detail.get("seed")
        salt = from_hex(detail.get("seed_salt"), SALT_SIZE)
        return cls(seed if isinstance(seed, int) else None, salt or bytes(SALT_SIZE), secret)


SECRET_KEYS: Final = ("seed", "seed_salt", "chain_secret")
"""The detail keys of a match_created event that the plain views hide in play."""
