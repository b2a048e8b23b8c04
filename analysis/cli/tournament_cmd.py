"""`sniff tournament`: a duplicate tournament between bots, logged and summed up."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import click

from analysis.cli.errors import Misuse
from analysis.cli.formats import format_option, json_line, render_table, write_csv
from analysis.cli.options import (
    SEED_MAX,
    db_option,
    need_ray,
    progress_option,
    ray_option,
    round_limit_option,
    seed_option,
    target_option,
    tls_ca_option,
    variant_option,
    workers_option,
)
from analysis.cli.progress import Progress
from analysis.parallel import default_workers
from sniff import parse_bots

_RESULT_COLUMNS = ("bot", "deals", "matches", "mean", "se", "ci_low", "ci_high")
_RATING_COLUMNS = ("rating", "rating_low", "rating_high")
_PAIR_COLUMNS = ("bot", "opponent", "deals", "mean", "se", "ci_low", "ci_high")


@click.command()
@click.option(
    "--bots",
    "bots_text",
    default="rollout,greedy",
    show_default=True,
    help="Comma-separated bots, at least 2, each once (random, greedy, rollout, ismcts).",
)
@click.option(
    "--deals",
    type=int,
    default=100,
    show_default=True,
    help="Deals, each played once per rotation of the bots over the seats; 1 to 5,000.",
)
@click.option(
    "--seats",
    type=int,
    default=2,
    show_default=True,
    help="2, 3 or 4 players.",
)
@seed_option(0, "Deal d is the match seed SEED + d; bots and the bootstrap are seeded from it.")
@variant_option
@round_limit_option
@target_option
@workers_option
@db_option
@format_option(
    "table",
    "csv",
    "json",
    csv="one row a bot, then one a pair (kind bot or head_to_head)",
    json="one document: settings, results, head to head",
)
@progress_option
@ray_option
@tls_ca_option
def tournament(
    bots_text: str,
    deals: int,
    seats: int,
    seed: int,
    variant: str,
    round_limit: int | None,
    target: int | None,
    workers: int | None,
    db_path: str,
    fmt: str,
    progress: bool,
    ray_address: str | None,
    tls_ca: str | None,
) -> None:
    """Play a duplicate tournament between bots and log every match.

    Each deal (match seed SEED + d: the same seed deals the same tiles) is
    played once for each rotation of the bots over the seats (seat i plays
    bot (i + r) mod k in rotation r), so every bot sits in every seat on
    every deal and the luck of the deal cancels. Every match goes into the
    event log in one transaction, source simulated with the tournament's id
    as its run id (sniff stats sniff-timing --run ID). Shows each bot's mean
    net result a match (its side's score minus the others'), the head-to-head
    margins, with 95% intervals clustered by deal, and Bradley-Terry ratings
    on the Elo scale with a bootstrap interval over deals. Deterministic from
    --seed whatever --workers. Before the first deal it prints (on stderr) a
    commitment to every deal seed, and at the end the seeds and the salt that
    open it; the log keeps both, and sniff audit --db checks them.

    Example: sniff tournament --bots rollout,greedy --deals 200 --round-limit 1 --target 10000
    """
    from analysis.cli.import_cmd import load_events
    from analysis.tournament import SeedsCommitment, Settings, play, report

    try:
        bots = parse_bots(bots_text)
    except ValueError as e:
        raise Misuse(f"--bots: {e}") from None
    settings = Settings(bots, seats, deals, seed, variant, round_limit, target)
    try:
        settings.check()
    except ValueError as e:
        raise Misuse(str(e)) from None
    if seed + deals - 1 > SEED_MAX:
        raise Misuse(f"--seed {seed} with --deals {deals} runs past the largest seed (2^64-1)")
    need_ray(ray_address)
    committed = SeedsCommitment.new(settings)
    click.echo(
        f"{settings.id}: commitment to its {deals} deal seeds {committed.commitment.hex()}"
        " (the seeds and salt are revealed at the end; docs/dealing.md)",
        err=True,
    )
    bar = Progress(progress, "playing", unit="matches")
    bar.start(deals * len(bots))
    started = time.perf_counter()
    try:
        played, table = play(
            settings,
            workers=workers or default_workers(),
            progress=bar.update,
            committed=committed,
            ray_address=ray_address,
        )
    except KeyboardInterrupt:
        raise Misuse("interrupted: nothing was logged") from None
    finally:
        bar.finish()
    elapsed = time.perf_counter() - started
    imported, present = load_events(db_path, table, tls_ca)
    result = report(settings, played, committed)
    doc = result.to_json()
    if fmt == "json":
        click.echo(json_line(doc))
    elif fmt == "csv":
        rows = [
            ["bot", row["bot"], None, *(row[c] for c in _PAIR_COLUMNS[2:])]
            + [row[c] for c in _RATING_COLUMNS]
            + [row["matches"]]
            for row in doc["results"]
        ] + [
            ["head_to_head", *(row[c] for c in _PAIR_COLUMNS), None, None, None, None]
            for row in doc["head_to_head"]
        ]
        write_csv(sys.stdout, ["kind", *_PAIR_COLUMNS, *_RATING_COLUMNS, "matches"], rows)
        reveal = doc["seed_commitment"]
        click.echo(
            f"{settings.id}: deal seeds revealed: salt {reveal['salt']},"
            f" seeds {' '.join(reveal['seeds'])}",
            err=True,
        )
    else:
        click.echo(
            f"{doc['tournament']}: {', '.join(bots)} at {seats} seats, {deals} deals x "
            f"{len(bots)} rotations = {len(played)} matches"
        )
        click.echo("\nnet result a match (own side's score minus the others'), 95% CI by deal")
        click.echo(
            render_table(
                (*_RESULT_COLUMNS, *_RATING_COLUMNS),
                [[r[c] for c in (*_RESULT_COLUMNS, *_RATING_COLUMNS)] for r in doc["results"]],
            )
        )
        click.echo("\nhead to head: bot's side's score minus opponent's, 95% CI by deal")
        click.echo(
            render_table(
                _PAIR_COLUMNS, [[r[c] for c in _PAIR_COLUMNS] for r in doc["head_to_head"]]
            )
        )
        reveal = doc["seed_commitment"]
        click.echo(
            f"\ndeal seeds committed to before play: {reveal['commitment']}\n"
            f"salt: {reveal['salt']}\nseeds: {' '.join(reveal['seeds'])}"
        )
    click.echo(
        f"{db_path}: logged {len(imported)} matches ({_events_of(table, imported):,} events), "
        f"{len(present)} already there, run id {doc['tournament']}; played in {elapsed:.1f} s",
        err=True,
    )


def _events_of(table: Any, match_ids: Sequence[str]) -> int:
    """How many of the table's events belong to these matches (those the log took)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not match_ids:
        return 0
    mask = pc.is_in(table["match_id"], value_set=pa.array(list(match_ids), pa.string()))
    return int(pc.sum(mask).as_py() or 0)
