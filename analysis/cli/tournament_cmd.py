"""`sniff tournament`: a duplicate tournament between bots, logged and summed up."""

from __future__ import annotations

import functools
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
from service.clock import BANK_MAX_MS, DEFAULT_POLICIES, MOVE_LIMIT_MAX_MS
from sniff import parse_bots

_RESULT_COLUMNS = ("bot", "deals", "matches", "mean", "se", "ci_low", "ci_high")
_RATING_COLUMNS = ("rating", "rating_low", "rating_high")
_PAIR_COLUMNS = ("bot", "opponent", "deals", "mean", "se", "ci_low", "ci_high")
_SPRT_COLUMNS = ("decision", "llr", "llr_lower", "llr_upper")
_PAR_COLUMNS = ("bot", "deals", "mean", "se", "ci_low", "ci_high")


@click.command()
@click.option(
    "--bots",
    "bots_text",
    default=None,
    help="Comma-separated bots, at least 2, each once (random, greedy, rollout, ismcts); with "
    "--remote, the local bots beside the remote ones (none by default).  "
    "[default: rollout,greedy]",
)
@click.option(
    "--remote",
    "remote_text",
    metavar="NAME,...",
    help="Bots registered with the arena of the service at --server, by name: seated there "
    "(the service creates and logs every match), the --bots played here over Play "
    "(docs/service.md, The arena).",
)
@click.option(
    "--server",
    metavar="HOST:PORT",
    help="With --remote: the service whose arena seats the remote bots.",
)
@click.option(
    "--arena-key-file",
    type=click.Path(dir_okay=False),
    help="With --remote: a file holding the service's arena key.",
)
@click.option(
    "--house-key-file",
    type=click.Path(dir_okay=False),
    help="With --remote: a file holding the service's house key, when it has one.",
)
@click.option(
    "--wait",
    "wait_seconds",
    type=click.FloatRange(1, 3600),
    default=120,
    show_default=True,
    help="With --remote: seconds to wait for the service and the remote bots, at the start "
    "and whenever the service went away (it is then resumed where it stood).",
)
@click.option(
    "--deals-at-once",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    help="With --remote: deals played at once (their matches wait on the bots' answers); "
    "with --sprt always 1, so that no deal after the deciding one is played.",
)
@click.option(
    "--move-ms",
    type=click.IntRange(1, MOVE_LIMIT_MAX_MS),
    help="With --remote: each match's time control, the time each decision has "
    "(docs/service.md, Time controls); a bot that runs out loses its time as --on-timeout "
    "says, and the tournament goes on.",
)
@click.option(
    "--bank-ms",
    type=click.IntRange(0, BANK_MAX_MS),
    default=0,
    show_default=True,
    help="With --move-ms: each seat's time bank for a match, spent beyond a move's limit.",
)
@click.option(
    "--on-timeout",
    type=click.Choice([*DEFAULT_POLICIES, "forfeit"]),
    default="greedy",
    show_default=True,
    help="With --move-ms: a seat out of time gets a default move by this bot, or forfeits "
    "(2 or 4 seats).",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Print the standings so far (on stderr) after each deal.",
)
@click.option(
    "--deals",
    type=int,
    default=100,
    show_default=True,
    help="Deals, each played once per rotation of the bots over the seats; 1 to 5,000 "
    "(with --sprt, the most it may play).",
)
@click.option(
    "--sprt",
    "sprt_text",
    metavar="ELO0,ELO1",
    help="A sequential test of the first of 2 bots against the second: H0 it is ELO0 Elo "
    "stronger, H1 ELO1 (ELO0 < ELO1); stops at the deal that decides (docs/statistics.md).",
)
@click.option(
    "--sprt-alpha",
    type=float,
    help="With --sprt: the chance of accepting H1 when H0 holds, in (0, 0.5).  [default: 0.05]",
)
@click.option(
    "--sprt-beta",
    type=float,
    help="With --sprt: the chance of accepting H0 when H1 holds, in (0, 0.5).  [default: 0.05]",
)
@click.option(
    "--par",
    is_flag=True,
    help="Also each bot's result against the double-dummy par of the rounds that are one "
    "position in every rotation of their deal (slow: an exact solve a deal).",
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
    csv="one row a bot, then one a pair (kind bot or head_to_head), then the test's row "
    "(kind sprt) and a row a bot against par (kind par)",
    json="one document: settings, results, head to head, the test, the pars of each deal",
)
@click.option(
    "--adjust-luck",
    is_flag=True,
    help="Also each bot's luck-adjusted results (net result minus the luck of the lot, "
    "the deals and the draws; docs/analysis.md, Luck), with how many times fewer deals "
    "they need for the same interval width.",
)
@click.option(
    "--luck-rollouts",
    type=click.IntRange(2, 100_000),
    default=400,
    show_default=True,
    help="With --adjust-luck: sampled deals per equity estimate.",
)
@progress_option
@ray_option
@tls_ca_option
def tournament(
    bots_text: str | None,
    remote_text: str | None,
    server: str | None,
    arena_key_file: str | None,
    house_key_file: str | None,
    wait_seconds: float,
    deals_at_once: int,
    move_ms: int | None,
    bank_ms: int,
    on_timeout: str,
    watch: bool,
    deals: int,
    sprt_text: str | None,
    sprt_alpha: float | None,
    sprt_beta: float | None,
    par: bool,
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
    adjust_luck: bool,
    luck_rollouts: int,
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

    With --sprt ELO0,ELO1 and 2 bots it is a sequential test (as chess
    engines' test farms run): after each deal, in deal order, the log-likelihood
    ratio of H1 against H0 is compared with its bounds, and the tournament
    stops at the deal that crosses one (H1 or H0 accepted), or at --deals (no
    decision). Only the deals played are logged and reported. With --par, each
    bot's result against the double-dummy par, with 95% intervals by deal.

    Example: sniff tournament --bots rollout,greedy --deals 200 --round-limit 1 --target 10000

    With --remote NAME,... the named bots play through the arena of the
    service at --server (sniff serve --arena-key-file): it creates and logs
    every match under the players' names and the tournament's id, and hands
    the remote bots their seats; the --bots are played from here. The same
    deals, seeds, bot seeds and report as in process. If the service goes
    away, the tournament waits for it (--wait) and resumes where it stood.

    Example: sniff tournament --bots greedy,random --deals 1000 --sprt 0,100 --round-limit 1

    Example: sniff tournament --remote alice,bob --bots greedy --server HOST:50051
    --arena-key-file arena.key --deals 50 --round-limit 1 --watch
    """
    from analysis.cli.import_cmd import load_events
    from analysis.rollout.par import PAR_NODES
    from analysis.stats.sprt import Sprt, parse_hypotheses
    from analysis.tournament import SeedsCommitment, Settings, play, report

    remote = _remote_names(remote_text, server, arena_key_file, adjust_luck, par)
    try:
        local = () if bots_text is None and remote else parse_bots(bots_text or "rollout,greedy")
    except ValueError as e:
        raise Misuse(f"--bots: {e}") from None
    bots = (*remote, *local)
    test = None
    if sprt_text is not None:
        try:
            elo0, elo1 = parse_hypotheses(sprt_text)
        except ValueError as e:
            raise Misuse(str(e)) from None
        test = Sprt(
            elo0,
            elo1,
            0.05 if sprt_alpha is None else sprt_alpha,
            0.05 if sprt_beta is None else sprt_beta,
        )
    elif sprt_alpha is not None or sprt_beta is not None:
        raise Misuse("--sprt-alpha and --sprt-beta set the test of --sprt ELO0,ELO1: give it")
    settings = Settings(
        bots,
        seats,
        deals,
        seed,
        variant,
        round_limit,
        target,
        test,
        remote,
        _time_control(move_ms, bank_ms, on_timeout, remote),
    )
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
    on_deal = functools.partial(_echo_standings, settings) if watch else None
    table = None
    try:
        if remote:
            assert server is not None  # _remote_names checked both
            assert arena_key_file is not None
            arena = _arena_server(server, arena_key_file, house_key_file, tls_ca, wait_seconds)
            played = _play_remote(settings, arena, committed, bar.update, on_deal, deals_at_once)
        else:
            played, table = play(
                settings,
                workers=workers or default_workers(),
                progress=bar.update,
                committed=committed,
                ray_address=ray_address,
                par_nodes=PAR_NODES if par else None,
                watch=on_deal,
            )
    except KeyboardInterrupt:
        raise Misuse(
            "interrupted: the matches played so far are in the service's log"
            if remote
            else "interrupted: nothing was logged"
        ) from None
    finally:
        bar.finish()
    elapsed = time.perf_counter() - started
    adjusted = (
        _adjusted(settings, played, table, luck_rollouts, seed, workers, progress, ray_address)
        if adjust_luck
        else None
    )
    if table is not None:
        imported, present = load_events(db_path, table, tls_ca)
    result = report(settings, played, committed)
    doc = result.to_json()
    if adjusted is not None:
        doc["luck_adjusted"] = {"rollouts": luck_rollouts, **adjusted}
    if fmt == "json":
        click.echo(json_line(doc))
    elif fmt == "csv":
        _write_csv(doc, adjusted)
        reveal = doc["seed_commitment"]
        click.echo(
            f"{settings.id}: deal seeds revealed: salt {reveal['salt']},"
            f" seeds {' '.join(reveal['seeds'])}",
            err=True,
        )
    else:
        click.echo(
            f"{doc['tournament']}: {', '.join(bots)} at {seats} seats, {doc['deals']} deals x "
            f"{len(bots)} rotations = {len(played)} matches"
        )
        if "sprt" in doc:
            click.echo(_sprt_line(doc))
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
        if adjusted is not None:
            click.echo(
                f"\nluck-adjusted net result a match (net result minus luck, {luck_rollouts} "
                "rollouts an estimate), 95% CI by deal; variance ratio = raw variance / "
                "adjusted (how many times fewer deals for the same width), by deal and by match"
            )
            columns = (*_RESULT_COLUMNS[:2], *_RESULT_COLUMNS[3:])
            click.echo(
                render_table(
                    (*columns, "variance_ratio", "match_variance_ratio"),
                    [
                        [r[c] for c in (*columns, "variance_ratio", "match_variance_ratio")]
                        for r in adjusted["results"]
                    ],
                )
            )
            click.echo(
                render_table(
                    (*_PAIR_COLUMNS, "variance_ratio"),
                    [
                        [r[c] for c in (*_PAIR_COLUMNS, "variance_ratio")]
                        for r in adjusted["head_to_head"]
                    ],
                )
            )
        if "par" in doc:
            _echo_par(doc["par"])
        reveal = doc["seed_commitment"]
        click.echo(
            f"\ndeal seeds committed to before play: {reveal['commitment']}\n"
            f"salt: {reveal['salt']}\nseeds: {' '.join(reveal['seeds'])}"
        )
    if table is None:
        click.echo(
            f"{server}: the service logged {len(played)} matches, run id {doc['tournament']};"
            f" played in {elapsed:.1f} s",
            err=True,
        )
        return
    click.echo(
        f"{db_path}: logged {len(imported)} matches ({_events_of(table, imported):,} events), "
        f"{len(present)} already there, run id {doc['tournament']}; played in {elapsed:.1f} s",
        err=True,
    )


def _time_control(move_ms: int | None, bank_ms: int, on_timeout: str, remote: Any) -> Any:
    """The matches' time control of --move-ms, --bank-ms and --on-timeout, or None."""
    from service.clock import OutOfTime, TimeControl

    if move_ms is None:
        return None
    if not remote:
        raise Misuse("--move-ms: time controls are kept by the service: give --remote bots")
    if on_timeout == "forfeit":
        return TimeControl(move_ms, bank_ms, OutOfTime.FORFEIT)
    return TimeControl(move_ms, bank_ms, OutOfTime.DEFAULT_MOVE, on_timeout)


def _remote_names(
    text: str | None, server: str | None, key_file: str | None, adjust_luck: bool, par: bool
) -> tuple[str, ...]:
    """The remote bots' names, checked with the options they need and those they exclude."""
    from service.rpc.bounds import BOT_NAME

    if text is None:
        if server is not None or key_file is not None:
            raise Misuse("--server and --arena-key-file go with --remote NAME,...")
        return ()
    names = tuple(n.strip() for n in text.split(","))
    for name in names:
        if not BOT_NAME.fullmatch(name):
            raise Misuse(f"--remote: {name!r} is not a bot name (letters, digits, '.', '_', '-')")
    if server is None or key_file is None:
        raise Misuse("--remote needs --server HOST:PORT and --arena-key-file FILE")
    if adjust_luck or par:
        raise Misuse("--adjust-luck and --par are not available with --remote")
    return names


def _arena_server(
    server: str,
    key_file: str,
    house_key_file: str | None,
    tls_ca: str | None,
    wait_seconds: float,
) -> Any:
    """Where the arena is, with its keys read from their files."""
    from analysis.tournament_remote import ArenaServer
    from service.rpc.server import read_house_key

    try:
        key = read_house_key(key_file, "arena key").decode()
        house = None if house_key_file is None else read_house_key(house_key_file).decode()
    except (OSError, ValueError) as e:
        raise Misuse(str(e)) from None
    return ArenaServer(server, key, house, tls_ca, wait_seconds)


def _play_remote(
    settings: Any,
    arena: Any,
    committed: Any,
    progress: Any,
    on_deal: Any,
    deals_at_once: int,
) -> list[Any]:
    """The tournament through the arena; a service or bot that does not come is a Misuse."""
    import grpc

    from analysis.tournament_remote import ArenaUnavailable, play_remote

    try:
        return play_remote(
            settings,
            settings.remote,
            arena,
            committed,
            progress=progress,
            on_deal=on_deal,
            deals_at_once=deals_at_once,
        )
    except ArenaUnavailable as e:
        raise Misuse(f"{e}: the matches played so far are in the service's log") from None
    except grpc.RpcError as e:
        raise Misuse(f"the service refused: {e.code().name}: {e.details()}") from None


def _echo_standings(settings: Any, played: Sequence[Any]) -> None:
    """The standings after the deals so far, on stderr (--watch)."""
    from analysis.tournament import standings

    deals = len({p.deal for p in played})
    rows = standings(settings, played)
    click.echo(f"\nafter {deals} of {settings.deals} deals ({len(played)} matches):", err=True)
    click.echo(
        render_table(
            ("bot", "mean", "ci_low", "ci_high", "rating"),
            [[r[c] for c in ("bot", "mean", "ci_low", "ci_high", "rating")] for r in rows],
        ),
        err=True,
    )


def _write_csv(doc: dict[str, Any], adjusted: dict[str, Any] | None) -> None:
    """One row a bot, one a pair (and their luck-adjusted rows), then the test's and a row a
    bot against par when asked; the columns of the test and of the unsolved rounds only when
    there are such rows."""
    test, par = doc.get("sprt"), doc.get("par")
    extra = (_SPRT_COLUMNS if test else ()) + (("unsolved_rounds",) if par else ())
    pad = [None] * len(extra)
    rows = [
        ["bot", row["bot"], None, *(row[c] for c in _PAIR_COLUMNS[2:])]
        + [row[c] for c in _RATING_COLUMNS]
        + [row["matches"], *pad]
        for row in doc["results"]
    ] + [
        ["head_to_head", *(row[c] for c in _PAIR_COLUMNS), None, None, None, None, *pad]
        for row in doc["head_to_head"]
    ]
    if adjusted is not None:
        blank = [None] * (len(_RATING_COLUMNS) + 1 + len(extra))
        rows += [
            ["bot_luck_adjusted", row["bot"], None, *(row[c] for c in _PAIR_COLUMNS[2:]), *blank]
            for row in adjusted["results"]
        ] + [
            ["head_to_head_luck_adjusted", *(row[c] for c in _PAIR_COLUMNS), *blank]
            for row in adjusted["head_to_head"]
        ]
    if test:
        bot, opponent = doc["bots"]
        rows.append(
            ["sprt", bot, opponent, test["deals"], test["score"], None, None, None]
            + [None] * (len(_RATING_COLUMNS) + 1)
            + [test["decision"], test["llr"], test["lower"], test["upper"]]
            + ([None] if par else [])
        )
    if par:
        rows += [
            ["par", row["bot"], None, *(row[c] for c in _PAR_COLUMNS[1:])]
            + [None] * (len(_RATING_COLUMNS) + 1)
            + [None] * (len(_SPRT_COLUMNS) if test else 0)
            + [par["unsolved_rounds"]]
            for row in par["results"]
        ]
    write_csv(sys.stdout, ["kind", *_PAIR_COLUMNS, *_RATING_COLUMNS, "matches", *extra], rows)


def _sprt_line(doc: dict[str, Any]) -> str:
    """The test's design and where it stopped, for the table."""
    t = doc["sprt"]
    first, second = doc["bots"]
    if t["decision"] == "no decision":
        where = f"no decision at the cap of {t['deals']} deals"
    else:
        where = f"{t['decision']} after {t['deals']} of at most {doc['deals_max']} deals"
    return (
        f"\nsequential test of {first} against {second}: H0 {t['elo0']:g} Elo, H1 {t['elo1']:g}"
        f" Elo (alpha {t['alpha']:g}, beta {t['beta']:g})\n{where}: LLR {t['llr']:.3f}, bounds"
        f" {t['lower']:.3f} and {t['upper']:.3f}; {first}'s mean score a deal {t['score']:.3f}"
    )


def _echo_par(par: dict[str, Any]) -> None:
    click.echo(
        "\nresult against the double-dummy par (own side's value minus the par's), 95% CI by deal"
    )
    click.echo(render_table(_PAR_COLUMNS, [[r[c] for c in _PAR_COLUMNS] for r in par["results"]]))
    click.echo(
        f"{par['rounds']} rounds measured (the same in every rotation of their deal),"
        f" {par['unsolved_rounds']} unsolved within the budget (no par),"
        f" {par['unsolved_deals']} deals without a solved round"
    )


def _adjusted(
    settings: Any,
    played: Sequence[Any],
    table: Any,
    rollouts: int,
    seed: int,
    workers: int | None,
    progress: bool,
    ray_address: str | None,
) -> dict[str, Any]:
    """The luck of every match (a match a job) and the results adjusted by it."""
    from analysis.rollout.luck import LuckSettings
    from analysis.tournament_luck import adjusted_report, tournament_luck

    bar = Progress(progress, "luck", unit="matches")
    bar.start(len(played))
    try:
        luck = tournament_luck(
            table,
            played,
            LuckSettings(rollouts, "greedy", seed),
            workers=workers or default_workers(),
            progress=bar.update,
            ray_address=ray_address,
        )
    except KeyboardInterrupt:
        raise Misuse("interrupted: nothing was logged") from None
    finally:
        bar.finish()
    return adjusted_report(settings, played, luck)


def _events_of(table: Any, match_ids: Sequence[str]) -> int:
    """How many of the table's events belong to these matches (those the log took)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not match_ids:
        return 0
    mask = pc.is_in(table["match_id"], value_set=pa.array(list(match_ids), pa.string()))
    return int(pc.sum(mask).as_py() or 0)
