"""Why a bundle does not verify, one type per cause, each naming the file and line.

Every failure is an `EvidenceError` (service/evidence/errors.py), so a caller
that checks a single signed statement and one that checks a whole bundle catch
the same base. A bundle's errors add where: the file of the bundle and, for a
JSON Lines file, the line (counted from 1). `NotABundle` is not among them: a
directory that is not a bundle at all is a mistake of the caller (exit 2), not
evidence that fails (exit 1).
"""

from __future__ import annotations

from service.evidence.errors import EvidenceError

__all__ = [
    "BundleError",
    "CheckpointRejected",
    "EventsRejected",
    "MalformedBundle",
    "NotABundle",
    "ProofRejected",
    "RecordMismatch",
    "SignatureRejected",
]


class NotABundle(Exception):
    """The directory is missing, not a directory, or has no bundle.json: nothing to verify."""


class BundleError(EvidenceError):
    """Evidence in one file of a bundle does not verify: `file` (and `line`) and `reason`."""

    def __init__(self, file: str, line: int | None, reason: str) -> None:
        self.file = file
        self.line = line
        self.reason = reason
        super().__init__(self.where() + ": " + reason)

    def where(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"

    def __reduce__(self) -> tuple[type[BundleError], tuple[str, int | None, str]]:
        # Raised in a worker process and raised again here: pickled by its fields.
        return (type(self), (self.file, self.line, self.reason))


class MalformedBundle(BundleError):
    """A file is missing, or a line is not in the documented form (or out of place)."""


class SignatureRejected(BundleError):
    """A signature is not the bundle key's, or a statement names another log than the key's."""


class ProofRejected(BundleError):
    """A Merkle inclusion or consistency proof fails, or tree heads go back in time."""


class EventsRejected(BundleError):
    """A match's events fail the log audit: sequence, chain, commitment, deals or the rules
    replay. `kind` is the audit's problem kind (docs/audit.md)."""

    def __init__(self, file: str, line: int | None, reason: str, kind: str = "events") -> None:
        self.kind = kind
        super().__init__(file, line, reason)

    def __reduce__(self) -> tuple[type[BundleError], tuple[str, int | None, str, str]]:  # type: ignore[override]
        return (type(self), (self.file, self.line, self.reason, self.kind))


class CheckpointRejected(BundleError):
    """A checkpoint's head is not the hash of its event, its event is not a round or match
    end, or the checkpoints are out of order."""


class RecordMismatch(BundleError):
    """A match record is not the one its events make."""
