"""`sniff query`: one read-only SQL query over the event log, even while the service runs.

Kept apart from `sniff serve` and `sniff demo` so that a query loads only
what it uses: DuckDB for a file (pyarrow too for a result of a type that
only Arrow converts as the service's answer does), grpc and pyarrow when a
service holds the log.
"""

from __future__ import annotations

import sys

import click

from analysis.cli.errors import Misuse, first_line
from analysis.cli.formats import write_result
from analysis.cli.options import db_option, result_format_option, tls_ca_option
from analysis.cli.params import HELP as PARAM_HELP
from analysis.cli.params import PARAM

VIEWS = {
    "matches": "one row a match: seats, target, seed, created_at, finished, winner, scores",
    "deals": "one row a dealt round: hands, boneyard, leader, leader_choice",
    "actions": "one row an action: seat, move, move_type, tile, drawn, points, ends_sum",
    "round_ends": "one row an ended round: ending, finisher, pips, deductions, scores",
    "match_ends": "one row a finished match: winner, scores",
    "events": "the table beneath them all: every event in order (match_id, seq, kind, ...)",
    "match_facts": "one row a finished match, as the statistics see it (docs/statistics.md)",
    "round_facts": "one row a round of a finished match: Sniff, net, value, ending",
    "sniff_decisions": "one row a Sniff decision: seat, double, outcome, value",
}

_QUERY_HELP = f"""Run one read-only SQL query over the event log, even while the service runs.

When a service holds the file the query goes through its Query RPC;
otherwise the file is opened read-only. Parameters bind to ? or $1, $2.

\b
What to query (every view has match_id; docs/schema.md describes each column):
{chr(10).join(f"  {name:<15} {text}" for name, text in VIEWS.items())}

\b
Parameters are text as written ('007' stays '007'); type one with a prefix:
  -p int:42  -p float:1.5  -p bool:true  -p null:  -p str:int:7 (the text 'int:7')

Output (docs/cli.md): rows are written as they are read, in bounded memory
whatever the result's size; a table shows the first 1,000 and says so.
--format jsonl keeps numbers as numbers (DECIMAL and HUGEINT with every
digit) and NULL as null; --format csv writes lists and structs as JSON and
ends lines with \\n. Exit status: 0 done, 2 the query was refused or failed
(not read-only, not valid SQL) or misuse (a bad parameter, --db not a
readable event log).

\b
Example: sniff query "SELECT seat, sum(points) FROM actions WHERE match_id = ? GROUP BY 1" -p m1
Example: sniff query "SELECT * FROM matches WHERE target > ?" -p int:200 --format jsonl
"""


@click.command(help=_QUERY_HELP)
@click.argument("sql")
@click.option("-p", "--param", "params", multiple=True, type=PARAM, help=PARAM_HELP)
@result_format_option
@tls_ca_option
@db_option
def query(sql: str, params: tuple[object, ...], fmt: str, tls_ca: str | None, db_path: str) -> None:
    from analysis.logquery import NoLog, is_rpc_error, stream_log_values
    from service.storage import StorageError

    try:
        with stream_log_values(db_path, sql, params, tls_ca=tls_ca) as result:
            write_result(fmt, result.columns, result.rows, sys.stdout)
    except NoLog as e:
        raise Misuse(str(e)) from None
    except StorageError as e:
        raise Misuse(first_line(str(e))) from None
    except Exception as e:
        if not is_rpc_error(e):
            raise
        details_of = getattr(e, "details", None)  # the service refused or failed the query
        details = details_of() if callable(details_of) else None
        raise Misuse(first_line(details or str(e))) from None
