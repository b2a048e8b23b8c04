"""The bundle's files and the exact text of each of their lines (docs/evidence.md, "Bundles").

The writer makes every line here and the verifier holds every line it reads
to the text made here again from the values it parsed, so a line is either
exactly what the writer would write or refused: no change of a byte (a key's
case, a digit's form, a space) can leave the evidence the same but its text
different, and a verifier in another language checks the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from service.storage.chain import CONTENT_KEYS

__all__ = [
    "BUNDLE",
    "CHECKPOINTS",
    "EVENTS",
    "EVIDENCE_FILES",
    "FORMAT",
    "MATCHES",
    "PUBLIC_KEY",
    "README",
    "RECORDS",
    "TREE_HEADS",
    "Counts",
    "MatchEntry",
    "Row",
    "bundle_text",
    "dumps",
    "event_line",
    "match_line",
    "parse_event_line",
    "parse_match_line",
]

FORMAT: Final = "sniff/evidence-bundle/v1"
BUNDLE: Final = "bundle.json"
PUBLIC_KEY: Final = "public_key.pem"
README: Final = "README.md"
EVENTS: Final = "events.jsonl"
MATCHES: Final = "matches.jsonl"
CHECKPOINTS: Final = "checkpoints.jsonl"
TREE_HEADS: Final = "tree_heads.jsonl"
RECORDS: Final = "records.jsonl"
EVIDENCE_FILES: Final = (BUNDLE, PUBLIC_KEY, MATCHES, EVENTS, CHECKPOINTS, TREE_HEADS, RECORDS)
"""Every file the verifier reads; README.md is the one it does not (it proves nothing)."""

EVENT_KEYS: Final = (*CONTENT_KEYS, "hash")
MATCH_KEYS: Final = ("match_id", "leaf_index", "seq", "head", "inclusion")
COUNT_KEYS: Final = ("matches", "events", "checkpoints", "tree_heads")
BUNDLE_KEYS: Final = ("format", "log_id", "tree_head", "counts")

_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_MATCH_ID: Final = re.compile(r"[0-9A-Za-z_-]{1,64}")  # as service/evidence/signed.py
_string: Final = json.encoder.encode_basestring  # json.dumps' text for a str, ensure_ascii off

Row = tuple[Any, ...]
"""An event as analysis/logaudit.py reads it: match_id, seq, kind, round, action_index, seat,
move, drawn, points, ends_sum, detail (the log's JSON text, or None), hash (32 bytes)."""


def dumps(value: Any) -> str:
    """One JSON Lines line's text: compact, UTF-8 as itself, keys in the order given."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def is_hex64(value: object) -> bool:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def is_match_id(value: object) -> bool:
    return isinstance(value, str) and _MATCH_ID.fullmatch(value) is not None


def is_uint(value: object) -> bool:
    return type(value) is int and value >= 0


# -- events.jsonl ------------------------------------------------------------------------


def _opt_int(value: int | None) -> str:
    return "null" if value is None else int.__repr__(value)


def _opt_str(value: str | None) -> str:
    return "null" if value is None else _string(value)


def event_line(row: Row) -> str:
    """An event's line: the chain's eleven content keys in their order, `detail` as the log's
    JSON text (a string), then `hash` (docs/chain.md). Written out, not through json.dumps:
    a bundle holds millions of these."""
    (match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum) = row[:10]
    return (
        f'{{"action_index":{_opt_int(action_index)},"detail":{_opt_str(row[10])},'
        f'"drawn":{_opt_str(drawn)},"ends_sum":{_opt_int(ends_sum)},"kind":{_string(kind)},'
        f'"match_id":{_string(match_id)},"move":{_opt_str(move)},"points":{_opt_int(points)},'
        f'"round":{_opt_int(round)},"seat":{_opt_int(seat)},"seq":{int.__repr__(seq)},'
        f'"hash":"{row[11].hex()}"}}'
    )


_INT: Final = r"(null|0|-?[1-9][0-9]*)"
_STRING: Final = r'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"'
"""A JSON string, its loop unrolled (plain runs between escapes): a detail is long."""
_TEXT: Final = f"({_STRING})"
_TEXT_OR_NULL: Final = f"(null|{_STRING})"
_EVENT_LINE: Final = re.compile(
    f'\\{{"action_index":{_INT},"detail":{_TEXT_OR_NULL},"drawn":{_TEXT_OR_NULL},'
    f'"ends_sum":{_INT},"kind":{_TEXT},"match_id":{_TEXT},"move":{_TEXT_OR_NULL},'
    f'"points":{_INT},"round":{_INT},"seat":{_INT},"seq":(0|[1-9][0-9]*),'
    f'"hash":"([0-9a-f]{{64}})"\\}}'
)
"""Exactly the lines `event_line` writes: the keys in order, integers in plain decimal."""


def _text_of(text: str) -> str | None:
    """A JSON string's value, refusing any escape `event_line` would not write."""
    if text == "null":
        return None
    if "\\" not in text:
        return text[1:-1]
    value: str = json.loads(text)
    if _string(value) != text:
        raise ValueError("a string escaped otherwise than the format escapes it")
    return value


def parse_event_line(text: str) -> Row:
    """The row a line of events.jsonl holds; ValueError unless the line is exactly
    `event_line` of it. A pattern, not a JSON parser and a second writing: as strict and
    several times faster, and a bundle holds millions of these."""
    found = _EVENT_LINE.fullmatch(text)
    if found is None:
        raise ValueError(
            "not an event as the format writes it (compact, exactly the keys "
            + ", ".join(EVENT_KEYS)
            + " in that order, integers or null, strings or null, `hash` 64 lowercase hex digits)"
        )
    (action_index, detail, drawn, ends_sum, kind, match_id, move, points, round, seat, seq, h) = (
        found.groups()
    )
    # _int_of and _text_of inline where they are trivial (null, a plain string): most values.
    return (
        match_id[1:-1] if "\\" not in match_id else _text_of(match_id),
        int(seq),
        kind[1:-1] if "\\" not in kind else _text_of(kind),
        None if round == "null" else int(round),
        None if action_index == "null" else int(action_index),
        None if seat == "null" else int(seat),
        None if move == "null" else move[1:-1] if "\\" not in move else _text_of(move),
        None if drawn == "null" else drawn[1:-1] if "\\" not in drawn else _text_of(drawn),
        None if points == "null" else int(points),
        None if ends_sum == "null" else int(ends_sum),
        None if detail == "null" else _text_of(detail),
        bytes.fromhex(h),
    )


# -- matches.jsonl -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchEntry:
    """A match of the bundle: its leaf in the tree and that leaf's inclusion proof.

    `seq` and `head` are its match_ended event's: the match has `seq + 1` events.
    """

    match_id: str
    leaf_index: int
    seq: int
    head: str
    inclusion: tuple[str, ...]

    @property
    def events(self) -> int:
        return self.seq + 1


def match_line(entry: MatchEntry) -> str:
    return dumps(
        {
            "match_id": entry.match_id,
            "leaf_index": entry.leaf_index,
            "seq": entry.seq,
            "head": entry.head,
            "inclusion": list(entry.inclusion),
        }
    )


def parse_match_line(text: str) -> MatchEntry:
    obj = json.loads(text)
    if not isinstance(obj, dict) or tuple(obj) != MATCH_KEYS:
        raise ValueError(f"a match is an object with exactly the keys {', '.join(MATCH_KEYS)}")
    if not is_match_id(obj["match_id"]):
        raise ValueError("`match_id` is not a match id")
    if not is_uint(obj["leaf_index"]) or not is_uint(obj["seq"]):
        raise ValueError("`leaf_index` and `seq` must be integers from 0")
    if not is_hex64(obj["head"]):
        raise ValueError("`head` must be 64 lowercase hex digits")
    path = obj["inclusion"]
    if not isinstance(path, list) or not all(is_hex64(h) for h in path):
        raise ValueError("`inclusion` must be a list of 64-hex-digit hashes")
    entry = MatchEntry(obj["match_id"], obj["leaf_index"], obj["seq"], obj["head"], tuple(path))
    if match_line(entry) != text:
        raise ValueError("not written as the format writes it (compact, keys in order)")
    return entry


# -- tree_heads.jsonl --------------------------------------------------------------------


def tree_head_line(tree_head: Mapping[str, Any], consistency: Sequence[str]) -> str:
    """An earlier tree head (its JSON form) with its consistency proof to the bundle's."""
    return dumps({"tree_head": dict(tree_head), "consistency": list(consistency)})


# -- bundle.json -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Counts:
    """How many lines each JSON Lines file holds (records.jsonl: one a match)."""

    matches: int
    events: int
    checkpoints: int
    tree_heads: int

    def to_json(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in COUNT_KEYS}


def bundle_text(log_id: str, tree_head: Mapping[str, Any], counts: Counts) -> str:
    """bundle.json: indented for a reader, keys in order, a newline at the end."""
    return (
        json.dumps(
            {
                "format": FORMAT,
                "log_id": log_id,
                "tree_head": dict(tree_head),
                "counts": counts.to_json(),
            },
            indent=2,
        )
        + "\n"
    )
