"""`sniff record` and `sniff play`: matches between bots, as records or move by move."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TextIO

import click

from analysis.bot_matches import bot_players, bot_records
from analysis.cli.errors import Misuse
from analysis.cli.options import (
    RECORD_MATCHES_MAX,
    bots_option,
    check_bots_fit,
    check_seed_run,
    matches_option,
    round_limit_option,
    seats_option,
    seed_option,
    target_option,
    variant_option,
)
from sniff import Match, Phase, view


@click.command()
@seats_option
@matches_option(1, RECORD_MATCHES_MAX, "How many matches.")
@seed_option(0, "Seed of the first match; match i gets seed + i.")
@target_option
@variant_option
@round_limit_option
@bots_option("random")
@click.option(
    "-o", "--output", type=click.Path(allow_dash=True), default="-", help="Default: stdout."
)
def record(
    seats: int,
    count: int,
    seed: int,
    target: int | None,
    variant: str,
    round_limit: int | None,
    bots: tuple[str, ...],
    output: str,
) -> None:
    """Play matches between bots and write them as match records (docs/records.md).

    One JSON object a line, with every figure claimed. American matches are written in
    format american-sniff/1, the other variants in sniff/2; every record names its players
    (the bot of each seat).

    Example: sniff record --seats 4 --matches 100 --bots greedy,random -o matches.jsonl
    """
    check_seed_run(seed, count)
    check_bots_fit(bots, seats)
    with _open_output(output) as out:
        for rec in bot_records(
            seats, count, seed, bots, target, variant=variant, round_limit=round_limit
        ):
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")


def _open_output(path: str) -> contextlib.AbstractContextManager[TextIO]:
    """Standard output for '-'; a file that cannot be written is misuse (one line, exit 2)."""
    if path == "-":
        return contextlib.nullcontext(sys.stdout)
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as e:
        raise Misuse(f"cannot write {path}: {e.strerror or e}") from None


@click.command()
@seats_option
@seed_option(0, "The match's seed (the deal; each bot's choices follow from it).")
@target_option
@variant_option
@round_limit_option
@bots_option("random")
def play(
    seats: int,
    seed: int,
    target: int | None,
    variant: str,
    round_limit: int | None,
    bots: tuple[str, ...],
) -> None:
    """Play one match between bots in this process and print it move by move.

    Example: sniff play --seats 3 --bots greedy --seed 7 --variant berndt
    """
    check_bots_fit(bots, seats)
    players = bot_players(seats, bots, seed)
    match = Match(seats, seed=seed, target=target, variant=variant, round_limit=round_limit)
    click.echo(f"{variant} sniff, {seats} seats, target {match.target}")
    while True:
        click.echo(
            f"round {match.round_index}: seat {match.leader} leads "
            f"({match.history[-1].leader_choice.value})"
        )
        while match.phase is Phase.PLAYING:
            seat = match.turn
            result = match.apply(players[seat].choose(view(match, seat)))
            line = f"  seat {seat}: {result.move}"
            if result.drawn is not None:
                line += f" ({result.drawn})"
            if result.ends_sum is not None:
                line += f"  ends {result.ends_sum}"
            if result.points:
                line += f"  +{result.points}"
            click.echo(line)
            if result.round_end is not None:
                end = result.round_end
                who = f"seat {end.finisher} dominoes" if end.finisher is not None else "blocked"
                click.echo(
                    f"  {who}; pips {list(end.pips)}, deductions {list(end.deductions)}, "
                    f"scores {list(end.scores)}"
                )
        if match.phase is Phase.OVER:
            break
        match.deal()
    click.echo(f"{match.result_text()}; scores {list(match.seat_scores())}")
