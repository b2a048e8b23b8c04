"""Errors of the service layer that are not rules errors.

Rules errors are the engine's own (`sniff.errors`); these add what
only a shared, multi-client service can get wrong. `status.py` maps both to
gRPC status codes; nothing below the servicer knows about gRPC.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of the service layer's refusals."""


class MatchNotFound(ServiceError):
    """No match has this id."""


class MissingToken(ServiceError):
    """The call carries no token, or one that belongs to no seat of this match."""


class Forbidden(ServiceError):
    """A valid token that does not grant this operation (another seat's, or the observer moving)."""


class StaleMoveCount(ServiceError):
    """`expected_move_count` is not the match's move count, and the call is not a retry."""


class RecoveryError(ServiceError):
    """The event log holds a match that does not replay through the engine."""


class BadArgument(ServiceError):
    """A request field outside its documented bounds, or not of its form."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class LimitReached(ServiceError):
    """A service limit (streams, matches in play, running queries) is reached."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


class QueryTimedOut(ServiceError):
    """A query ran past its deadline (the caller's, or the service's maximum) and was stopped."""


class MissingHouseKey(ServiceError):
    """The call needs the service's house key and carries none."""


class WrongHouseKey(ServiceError):
    """The call carries a house key that is not the service's."""


class ServiceStopping(ServiceError):
    """The service is shutting down: open streams end, new queries are refused."""


class BadPlacement(ServiceError):
    """A ScoreLayout placement that cannot be made on the layout the earlier ones built.

    No match is involved, so this is the caller's bad argument, not a move
    out of place in a match's state (IllegalMove). `kind` is the engine
    error's kind, or `not_a_placement` for a draw or a pass.
    """

    def __init__(self, index: int, message: str, kind: str) -> None:
        super().__init__(message)
        self.index = index
        self.kind = kind


class UndecodableRequest(ServiceError):
    """The bytes of a request are not the message its method takes."""


class AwaitingEntropy(ServiceError):
    """A match created with seat entropy is not dealt until every seat has given its own:
    no deal, move or list of moves before then."""

    def __init__(self, missing: tuple[int, ...]) -> None:
        seats = ", ".join(str(s) for s in missing)
        noun = "seat" if len(missing) == 1 else "seats"
        super().__init__(
            f"the match is waiting for the entropy of {noun} {seats} (ContributeEntropy):"
            " its first round is dealt once every seat has given its own"
        )
        self.missing = missing


class EntropyNotWanted(ServiceError):
    """Entropy given to a match created without seat entropy, or already dealt."""


class EntropyAlreadyGiven(ServiceError):
    """A seat gives entropy a second time, and not the same bytes as the first."""


class NotSigning(ServiceError):
    """A call about signed evidence to a service started without a signing key."""


class ArenaOff(ServiceError):
    """An arena call to a service started without an arena key."""


class MissingArenaKey(ServiceError):
    """An arena call that carries no arena key."""


class WrongArenaKey(ServiceError):
    """An arena call that carries a key that is not the arena's."""


class BotNameTaken(ServiceError):
    """A registration under a name the arena holds for another bot."""


class BotNotConnected(ServiceError):
    """A seat handed to a bot the arena has no connected stream for."""

    def __init__(self, bot: str, message: str) -> None:
        super().__init__(message)
        self.bot = bot
