"""Options shared by several commands, each with its documented range.

Every number a user types is bounded where it enters, so that a slip
(`--target 999999999999999999`) is refused at once with a clear message
instead of running for ever or failing deep inside the service.

The engine is imported only by the options that need it (seeds, bots,
variants), when a command that has them is loaded: `sniff matches` and
`sniff query` never load the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from analysis.cli.errors import Misuse
from analysis.cli.formats import format_option
from service.defaults import DEFAULT_DB, ROUND_LIMIT_MAX, TARGET_MAX, TARGET_MIN

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:  # made on first use by __getattr__ below
    SEED_MAX: int
    variant_option: Callable[[Callable[..., Any]], Callable[..., Any]]

RECORD_MATCHES_MAX = 1_000_000
DEMO_MATCHES_MAX = 100


def _check_db(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """One clear line (not click's usage text) when --db names a directory."""
    if Path(value).is_dir():
        raise Misuse(f"--db {value} is a directory; name the event log file (a DuckDB file)")
    return value


db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(),
    default=DEFAULT_DB,
    show_default=True,
    envvar="SNIFF_DB",
    callback=_check_db,
    help="The DuckDB event log file (env SNIFF_DB).",
)

seats_option = click.option(
    "--seats",
    type=click.IntRange(2, 4),
    default=2,
    show_default=True,
    help="2, 3 or 4 players.",
)

target_option = click.option(
    "--target",
    type=click.IntRange(TARGET_MIN, TARGET_MAX),
    default=None,
    help=f"The score that wins, {TARGET_MIN} to {TARGET_MAX:,}. Default: docs/rules.md §1 "
    "(250 with 2 seats, 200 with 3 or 4).",
)


def _seed_max() -> int:
    """Seeds are unsigned 64-bit numbers, as in the engine's deals and the service's CreateMatch."""
    from sniff.dealing import SEED_LIMIT

    return SEED_LIMIT - 1


def seed_option(default: int, help: str) -> Callable[[F], F]:
    return click.option(
        "--seed",
        type=click.IntRange(0, _seed_max()),
        default=default,
        show_default=True,
        help=f"{help} 0 to 2^64-1.",
    )


def matches_option(default: int, maximum: int, help: str) -> Callable[[F], F]:
    return click.option(
        "--matches",
        "count",
        type=click.IntRange(1, maximum),
        default=default,
        show_default=True,
        help=f"{help} 1 to {maximum:,}.",
    )


def check_seed_run(seed: int, count: int) -> None:
    """Match i is seeded `seed + i`: the last seed must still be a valid one."""
    if seed + count - 1 > _seed_max():
        raise click.BadParameter(
            f"--seed {seed} with --matches {count} runs past the largest seed (2^64-1)",
            param_hint="--seed",
        )


@cache
def _variant_option() -> Callable[[F], F]:
    from sniff import VARIANTS

    return click.option(
        "--variant",
        type=click.Choice(list(VARIANTS)),
        default="american",
        show_default=True,
        help="The Sniff variant (docs/rules.md §10): "
        + "; ".join(f"{v.name}: {v.summary}" for v in VARIANTS.values())
        + ".",
    )


def __getattr__(name: str) -> Any:
    """`SEED_MAX` and `variant_option`, made from the engine's own values on first use."""
    if name == "SEED_MAX":
        return _seed_max()
    if name == "variant_option":
        return _variant_option()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


round_limit_option = click.option(
    "--round-limit",
    type=click.IntRange(1, ROUND_LIMIT_MAX),
    default=None,
    help="End the match after this many rounds, won by the side ahead or drawn (docs/rules.md §8). "
    f"1 to {ROUND_LIMIT_MAX:,}; default: no limit.",
)


result_format_option = format_option(
    "table", "csv", "json", "jsonl", json="one document: an array of rows", jsonl="one object a row"
)
"""The formats of a query's result: rows written as they are read, in any of them."""


def _check_bots(
    ctx: click.Context, param: click.Parameter, value: str, allowed: tuple[str, ...] | None = None
) -> tuple[str, ...]:
    from sniff import parse_bots

    try:
        names = parse_bots(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    if allowed is not None:
        for name in names:
            if name not in allowed:
                raise click.BadParameter(
                    f"{name!r} cannot play here: this command plays {' and '.join(allowed)}"
                )
    return names


def check_bots_fit(bots: tuple[str, ...], seats: int) -> None:
    """More bots than seats is a slip (which bots were meant?): refused, never truncated."""
    if len(bots) > seats:
        raise Misuse(
            f"--bots names {len(bots)} bots for {seats} seats: name at most one a seat "
            "(fewer are repeated over the seats)"
        )


def bots_option(default: str, allowed: tuple[str, ...] | None = None) -> Callable[[F], F]:
    """`--bots`: comma-separated bot names, one per seat (cycled) or one for all; checked
    here, in one place, for every command that plays bots (`allowed`: the only ones a
    command can play, which its help then lists)."""
    from functools import partial

    from sniff.bots import BOTS

    names = allowed if allowed is not None else tuple(BOTS)
    return click.option(
        "--bots",
        default=default,
        show_default=True,
        callback=partial(_check_bots, allowed=allowed),
        help=f"Comma-separated bots, one per seat or one for all ({', '.join(names)}).",
    )


tls_ca_option = click.option(
    "--tls-ca",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    envvar="SNIFF_TLS_CA",
    help="PEM CA certificate to trust when the service speaks TLS (env SNIFF_TLS_CA).",
)

workers_option = click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes that replay matches, 1 to 64. Default: one per core.",
)

ray_option = click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS",
    help="Run the work as Ray tasks on this cluster ('local' starts one here, 'auto' finds "
    "one); the same results as local workers. Needs pip install '.[cluster]'.",
)


def need_ray(address: str | None) -> None:
    """Refuse --ray, in one line, when Ray is not installed."""
    if address is None:
        return
    try:
        import ray  # noqa: F401
    except ImportError:
        from analysis.cli.errors import Misuse

        raise Misuse("--ray needs Ray: pip install 'american-sniff[cluster]'") from None


progress_option = click.option(
    "--progress",
    is_flag=True,
    help="Show the progress bar on stderr even when it is not a terminal.",
)
