"""The hash chain and the seed commitment are what docs/chain.md says, byte for byte.

The page's vectors are read from the page itself; an independent encoder
written here from the page's words must agree with `chain.canonical` on any
detail; and a head handed out while tiles are still hidden cannot be tested
against guesses of them (the attack is shown to work on a chain without the
secret, so the test can fail).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.bot_matches import bot_match_events
from service.storage import chain
from service.storage.events import LogEvent, dump_detail
from tests.helpers import example_count

DOC = Path(__file__).resolve().parents[1] / "docs" / "chain.md"


def doc_vectors() -> dict[str, Any]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    vectors: dict[str, Any] = json.loads(blocks[0])
    return vectors


# -- an independent reading of the page -------------------------------------------

_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def page_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def page_value(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return page_string(value)
    if isinstance(value, list):
        return "[" + ",".join(page_value(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value)  # Python sorts str by code point, as the page asks
        return "{" + ",".join(page_string(k) + ":" + page_value(value[k]) for k in keys) + "}"
    raise TypeError(value)


def page_link(previous: bytes, secret: bytes | None, content: bytes) -> bytes:
    if secret is None:
        return hashlib.sha256(b"sniff/chain/legacy/v1\x00" + previous + content).digest()
    return hashlib.sha256(b"sniff/chain/v1\x00" + previous + secret + content).digest()


def content_of(event: dict[str, Any]) -> bytes:
    detail = None if event["detail"] is None else json.loads(event["detail"])
    keys = (
        "match_id",
        "seq",
        "kind",
        "round",
        "action_index",
        "seat",
        "move",
        "drawn",
        "points",
        "ends_sum",
    )
    return chain.canonical(**{k: event[k] for k in keys}, detail=detail)


# -- the vectors ------------------------------------------------------------------


def test_the_canonical_encodings_are_the_pages_vectors() -> None:
    vectors = doc_vectors()
    got = [content_of(e).decode("utf-8") for e in vectors["events"]]
    assert got == vectors["canonical"]
    independent = [
        page_value(
            {
                **{k: v for k, v in e.items() if k != "detail"},
                "detail": None if e["detail"] is None else json.loads(e["detail"]),
            }
        )
        for e in vectors["events"]
    ]
    assert independent == vectors["canonical"]


def test_the_chain_and_the_legacy_chain_are_the_pages_vectors() -> None:
    vectors = doc_vectors()
    secret = bytes.fromhex(vectors["secret"])
    contents = [c.encode("utf-8") for c in vectors["canonical"]]
    assert [h.hex() for h in chain.chain(contents, secret)] == vectors["hashes"]
    assert [h.hex() for h in chain.chain(contents, None)] == vectors["legacy_hashes"]
    previous = chain.GENESIS
    for content, expected in zip(contents, vectors["hashes"], strict=True):
        previous = page_link(previous, secret, content)
        assert previous.hex() == expected


def test_the_commitments_are_the_pages_vectors() -> None:
    for case in doc_vectors()["commitments"]:
        seed, salt = int(case["seed"]), bytes.fromhex(case["salt"])
        assert chain.commitment(seed, salt).hex() == case["commitment"]
        page = hashlib.sha256(b"sniff/commit/v1\x00" + seed.to_bytes(8, "big") + salt)
        assert page.hexdigest() == case["commitment"]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=6),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=example_count(300), deadline=None)
@given(detail=st.dictionaries(st.text(max_size=8), json_values, max_size=5), seq=st.integers(0, 99))
def test_any_detail_encodes_as_the_page_says(detail: dict[str, Any], seq: int) -> None:
    fields: dict[str, Any] = {
        "match_id": "m\u00e9",
        "seq": seq,
        "kind": "action",
        "round": 1,
        "action_index": None,
        "seat": 0,
        "move": "1-1@1-4:low",
        "drawn": None,
        "points": 10,
        "ends_sum": -3,
    }
    ours = chain.canonical(**fields, detail=detail)
    assert ours == page_value({**fields, "detail": detail}).encode("utf-8")
    assert json.loads(ours) == {**fields, "detail": detail}


_INT_OR_NONE = st.none() | st.integers(-(10**12), 10**12)
_TEXT = st.text(max_size=12)


@settings(max_examples=example_count(400), deadline=None)
@given(
    match_id=_TEXT,
    seq=st.integers(0, 10**6),
    kind=st.sampled_from(["action", "round_dealt", "match_ended"]) | _TEXT,
    ints=st.tuples(_INT_OR_NONE, _INT_OR_NONE, _INT_OR_NONE, _INT_OR_NONE, _INT_OR_NONE),
    move=st.none() | _TEXT | st.booleans(),
    drawn=st.none() | _TEXT | st.integers(0, 9),
)
def test_an_event_without_detail_encodes_as_the_page_says_whatever_its_values(
    match_id: str,
    seq: int,
    kind: str,
    ints: tuple[int | None, ...],
    move: object,
    drawn: object,
) -> None:
    """`canonical`'s written-out path for events with no detail (most of them: an audit
    encodes every one) is the page's encoding, also for values it must leave to the
    encoder (a move that is not text, a drawn tile logged as a number)."""
    round_, action_index, seat, points, ends_sum = ints
    fields: dict[str, Any] = {
        "match_id": match_id,
        "seq": seq,
        "kind": kind,
        "round": round_,
        "action_index": action_index,
        "seat": seat,
        "move": move,
        "drawn": drawn,
        "points": points,
        "ends_sum": ends_sum,
    }
    ours = chain.canonical(**fields, detail=None)
    assert ours == page_value({**fields, "detail": None}).encode("utf-8")


# -- the recorder's fast path -----------------------------------------------------


_PLAIN_VALUES = st.recursive(
    st.none()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=30,
)
"""What a detail the engine makes holds: ints, strs and lists of them (no object, no bool)."""


@settings(max_examples=example_count(600), deadline=None)
@given(
    detail=st.dictionaries(st.text(max_size=8), _PLAIN_VALUES | json_values, max_size=7)
    | st.dictionaries(st.text(max_size=8), _PLAIN_VALUES, max_size=7)
)
def test_a_details_two_texts_are_the_stored_one_and_the_pages(detail: dict[str, Any]) -> None:
    """`detail_texts` encodes each value once for both texts: they are `dump_detail`'s
    (what the column stores, the detail's own key order) and the page's (keys sorted),
    whatever the values, objects inside included (those take the ordinary way)."""
    stored, canonical = chain.detail_texts(detail)
    assert stored == dump_detail(detail)
    assert canonical == page_value(detail)


@settings(max_examples=example_count(400), deadline=None)
@given(
    match_id=_TEXT,
    seq=st.integers(0, 10**6),
    kind=st.sampled_from(["action", "round_dealt", "round_ended"]) | _TEXT,
    ints=st.tuples(_INT_OR_NONE, _INT_OR_NONE, _INT_OR_NONE, _INT_OR_NONE, _INT_OR_NONE),
    move=st.none() | _TEXT,
    drawn=st.none() | _TEXT,
    detail=st.none() | st.dictionaries(st.text(max_size=8), _PLAIN_VALUES, max_size=6),
    previous=st.binary(min_size=32, max_size=32),
    secret=st.binary(min_size=32, max_size=32),
)
def test_the_recorders_chain_links_any_plain_event_as_the_page_says(
    match_id: str,
    seq: int,
    kind: str,
    ints: tuple[int | None, ...],
    move: str | None,
    drawn: str | None,
    detail: dict[str, Any] | None,
    previous: bytes,
    secret: bytes,
) -> None:
    """`EventChain.row` (the bulk path: no checks, each detail encoded once) links an
    event of plain ints and strs exactly as the page's encoding and link do, and keeps
    the detail as `dump_detail` writes it."""
    round_, action_index, seat, points, ends_sum = ints
    fields: dict[str, Any] = {
        "match_id": match_id,
        "seq": seq,
        "kind": kind,
        "round": round_,
        "action_index": action_index,
        "seat": seat,
        "move": move,
        "drawn": drawn,
        "points": points,
        "ends_sum": ends_sum,
    }
    linked = chain.EventChain(match_id, secret, previous)
    content: Any = (kind, round_, action_index, seat, move, drawn, points, ends_sum, detail)
    row = linked.row(seq, content)  # any kind, not only the log's: the encoding is the same
    expected = page_link(previous, secret, page_value({**fields, "detail": detail}).encode())
    assert row == (*content[:-1], dump_detail(detail), expected)
    assert linked.head == expected


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_recorded_matches_are_chained_as_the_page_says(seats: int) -> None:
    """Every event of recorded bot matches (deals, actions, round ends through
    `EventChain.row`; match_created and match_ended through `checked_row`) is linked as
    the page's encoding and link say (their stored texts are pinned by test_event_rows)."""
    for seed in range(example_count(40)):
        events = bot_match_events(f"m{seats}-{seed}", seats, seed, ("greedy", "random"))
        secret = bytes.fromhex(events[-1].detail["chain_secret"])  # type: ignore[index]
        previous = chain.GENESIS
        for event in events:
            fields = {k: getattr(event, k) for k in chain.CONTENT_KEYS}
            content = page_value(fields).encode()
            previous = page_link(previous, secret, content)
            assert event.hash == previous
            assert chain.event_content(event) == content


@pytest.mark.parametrize("bad", [{"x": 1.5}, {"x": [float("nan")]}, {"x": {1: 2}}, {"x": b"y"}])
def test_what_the_encoding_has_no_form_for_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(chain.NoCanonicalForm):
        chain.canonical("m", 0, "action", None, None, None, None, None, None, None, bad)


def test_the_commitment_refuses_a_seed_or_salt_out_of_range() -> None:
    with pytest.raises(ValueError, match="seed"):
        chain.commitment(2**64, bytes(32))
    with pytest.raises(ValueError, match="salt"):
        chain.commitment(1, bytes(31))


# -- a head handed out while tiles are hidden -------------------------------------


def _round_with_few_undrawn() -> tuple[list[LogEvent], int, int, list[str]]:
    """A logged 2-seat match, the index of a round_dealt event and of its round_ended
    (a domino), and the undrawn boneyard tiles at that end (2 to 6 of them)."""
    for seed in range(200):
        events = bot_match_events(f"m{seed}", 2, seed)
        for end_at, end in enumerate(events):
            if end.kind != "round_ended" or (end.detail or {}).get("end") != "domino":
                continue
            dealt_at = next(
                i for i, e in enumerate(events) if e.kind == "round_dealt" and e.round == end.round
            )
            drawn = sum(
                1 for e in events[dealt_at:end_at] if e.kind == "action" and e.move == "draw"
            )
            boneyard = list((events[dealt_at].detail or {})["boneyard"])
            undrawn = boneyard[drawn:]
            if 2 <= len(undrawn) <= 6:
                return events, dealt_at, end_at, undrawn
    raise AssertionError("no bot match has a round that ends with 2 to 6 tiles undrawn")


def _heads_of_every_guess(
    events: list[LogEvent], dealt_at: int, end_at: int, undrawn: list[str], secret: bytes | None
) -> dict[str, tuple[str, ...]]:
    """The head at the round's end for each order of the undrawn tiles (all else known)."""
    dealt = events[dealt_at]
    detail = dict(dealt.detail or {})
    kept = list(detail["boneyard"])[: len(detail["boneyard"]) - len(undrawn)]
    previous = events[dealt_at - 1].hash
    assert previous is not None
    heads: dict[str, tuple[str, ...]] = {}
    for order in itertools.permutations(undrawn):
        guess = replace(dealt, detail={**detail, "boneyard": [*kept, *order]})
        sealed = chain.seal([guess, *events[dealt_at + 1 : end_at + 1]], previous, secret)
        head = sealed[-1].hash
        assert head is not None
        heads[head.hex()] = order
    return heads


@pytest.mark.slow
def test_a_head_handed_out_while_tiles_are_hidden_matches_no_guess_without_the_secret() -> None:
    events, dealt_at, end_at, undrawn = _round_with_few_undrawn()
    head = events[end_at].hash
    assert head is not None
    true_order = tuple(undrawn)
    secrets_ = chain.MatchSecrets.from_detail(events[0].detail or {})
    assert secrets_ is not None

    # The attacker knows everything but the secret: no guess of the order gives the head,
    # whether they leave the secret out or guess it as zeros.
    for guessed_secret in (None, bytes(32)):
        guesses = _heads_of_every_guess(events, dealt_at, end_at, undrawn, guessed_secret)
        assert len(guesses) >= 2
        assert head.hex() not in guesses

    # The enumeration itself is right: with the secret, exactly the true order gives it.
    with_secret = _heads_of_every_guess(events, dealt_at, end_at, undrawn, secrets_.chain_secret)
    assert with_secret[head.hex()] == true_order

    # And the attack works on a chain without a secret: that is what the secret prevents.
    unkeyed = chain.seal(events, chain.GENESIS, None)
    unkeyed_head = unkeyed[end_at].hash
    assert unkeyed_head is not None
    guesses = _heads_of_every_guess(unkeyed, dealt_at, end_at, undrawn, None)
    assert guesses[unkeyed_head.hex()] == true_order
