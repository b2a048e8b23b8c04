"""The arena: bots registered by name on their Play streams, handed seats as matches are made.

A bot opens a Play stream whose first message registers it (`ArenaRegister`)
instead of naming seats; from then on the stream plays whatever seats the
arena hands it (SeatArenaBots), exactly as if it had opened them with their
tokens. So a Play bot becomes an arena bot by changing its first message,
and the organiser of a tournament (`sniff tournament --remote`) creates
matches as any house does and hands their seats to the bots by name.

Everything here runs on the server's event loop, so the registry needs no
lock. The arena keeps, per name, the seats handed to it until their match
is over: a bot that drops and registers again with the resume secret it was
given gets them back on its new stream. The registry is bounded
(`MAX_ARENA_BOTS`), and a name is held only while its bot is connected or
still holds seats of a match in play. The registry lives in memory: after a
restart bots register again and the organiser hands the seats again.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Final, Protocol

from service.errors import (
    ArenaOff,
    BotNameTaken,
    BotNotConnected,
    LimitReached,
    MissingArenaKey,
    WrongArenaKey,
)
from service.hub import LiveMatch

ARENA_KEY_HEADER: Final = "x-sniff-arena-key"
"""The call metadata that carries the arena key (never a message field, so never logged)."""
MAX_ARENA_BOTS: Final = 256
"""Names the arena holds at once (connected bots, and dropped ones still holding seats)."""

SeatKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class HandedSeat:
    """A seat the arena handed to a bot: what its stream needs to play it."""

    live: LiveMatch
    seat: int
    token: str
    bot_seed: int | None

    @property
    def key(self) -> SeatKey:
        return (self.live.match_id, self.seat)

    @property
    def over(self) -> bool:
        events = self.live.events
        return bool(events) and events[-1].event.kind == "match_ended"


class SeatHolder(Protocol):
    """A registered bot's Play stream, as the arena sees it."""

    def hand(self, seat: HandedSeat) -> None:
        """Play `seat` from now on (a seat already played is left as it is)."""

    def replaced(self, exc: Exception) -> None:
        """End the stream: the same bot registered again on another one."""


@dataclass(slots=True)
class _Bot:
    name: str
    secret: str
    holder: SeatHolder | None
    seats: dict[SeatKey, HandedSeat] = field(default_factory=dict)
    handed: int = 0

    def prune(self) -> None:
        """Forget the seats whose match is over."""
        for key in [k for k, s in self.seats.items() if s.over]:
            del self.seats[key]


@dataclass(frozen=True, slots=True)
class BotInfo:
    name: str
    seats_in_play: int
    seats_handed: int


class Arena:
    """The bots registered with one service, by name. `key` None: the arena is off."""

    def __init__(self, key: bytes | None, max_bots: int = MAX_ARENA_BOTS) -> None:
        self._key = key
        self.max_bots = max_bots
        self._bots: dict[str, _Bot] = {}

    def check_key(self, sent: bytes | None) -> None:
        """Refuse a call without the arena's key (compared in constant time)."""
        if self._key is None:
            raise ArenaOff("this service runs no arena: start it with sniff serve --arena-key-file")
        if sent is None:
            raise MissingArenaKey(
                f"arena calls need the arena key (call metadata {ARENA_KEY_HEADER})"
            )
        if not hmac.compare_digest(sent, self._key):
            raise WrongArenaKey("the arena key is not this service's")

    def register(
        self, name: str, secret: str | None, holder: SeatHolder
    ) -> tuple[str, list[HandedSeat]]:
        """Take `holder` as bot `name`: its resume secret and the seats it gets back.

        A held name is given only with its secret; a connected holder it
        replaces is ended. A name no one holds is taken with the secret sent
        (so a bot keeps one secret across restarts of the service) or a new one.
        """
        bot = self._bots.get(name)
        if bot is not None:
            bot.prune()
            if bot.holder is None and not bot.seats:
                del self._bots[name]
                bot = None
        if bot is not None:
            if secret is None or not hmac.compare_digest(secret.encode(), bot.secret.encode()):
                raise BotNameTaken(
                    f"the arena already holds the name {name!r}"
                    + (" for a connected bot" if bot.holder is not None else "")
                    + ": register under another name, or with that bot's resume secret"
                )
            if bot.holder is not None:
                bot.holder.replaced(
                    BotNameTaken(f"bot {name!r} registered again on another stream")
                )
            bot.holder = holder
            return bot.secret, list(bot.seats.values())
        if len(self._bots) >= self.max_bots:
            self._forget_idle()
        if len(self._bots) >= self.max_bots:
            raise LimitReached(
                "arena_bots", f"the arena already holds {self.max_bots} bots: try again later"
            )
        bot = _Bot(name, secret or secrets.token_urlsafe(24), holder)
        self._bots[name] = bot
        return bot.secret, []

    def release(self, name: str, holder: SeatHolder) -> None:
        """`holder`'s stream ended: the name stays held while its seats' matches go on."""
        bot = self._bots.get(name)
        if bot is None or bot.holder is not holder:
            return  # replaced meanwhile
        bot.holder = None
        bot.prune()
        if not bot.seats:
            del self._bots[name]

    def seat(self, handed: list[tuple[str, HandedSeat]]) -> int:
        """Hand each seat to its bot, all or none; how many were new to their bot."""
        for name, _ in handed:
            bot = self._bots.get(name)
            if bot is None or bot.holder is None:
                raise BotNotConnected(
                    name, f"no bot named {name!r} is connected to the arena: register it first"
                )
        new = 0
        for name, s in handed:
            bot = self._bots[name]
            if s.key in bot.seats:
                continue
            bot.seats[s.key] = s
            bot.handed += 1
            new += 1
            assert bot.holder is not None
            bot.holder.hand(s)
        return new

    def bots(self) -> list[BotInfo]:
        """The connected bots, by name."""
        out = []
        for name in sorted(self._bots):
            bot = self._bots[name]
            if bot.holder is not None:
                bot.prune()
                out.append(BotInfo(name, len(bot.seats), bot.handed))
        return out

    def _forget_idle(self) -> None:
        """Free the names of dropped bots whose matches are all over."""
        for name, bot in list(self._bots.items()):
            bot.prune()
            if bot.holder is None and not bot.seats:
                del self._bots[name]
