"""How fast `sniff import` loads a record file of mixed 2, 3 and 4 seats into a new log.

Uses the record file of scripts/bench_audit.py (built once and cached), and
for each of --runs:

- times the whole command `sniff import FILE --db NEW` as a subprocess
  (start-up, the audit of every record, the events built and chained, the
  load) and reports events per second, the figure the target of 100,000
  events per second is held to;
- times, in this process, the two halves apart: preparing (audit, events
  and facts, on every core) and the load into DuckDB of those events and
  facts (one transaction, Arrow inserts), as the command loads them.

    .venv/bin/python scripts/bench_import.py           # 10,000 matches
    .venv/bin/python scripts/bench_import.py --quick   # 600 matches, one run
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.importer import prepare
from analysis.parallel import default_workers
from scripts.bench_audit import cached
from service.storage import EventLog

TARGET = 100_000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="600 matches, one run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.runs = 600, 1
    records, _ = cached(args.matches)
    sniff = str(Path(sys.executable).parent / "sniff")
    whole, prepared_s, loaded_s = [], [], []
    events = 0
    for _ in range(args.runs):
        directory = Path(tempfile.mkdtemp(prefix="sniff-bench-import-"))
        try:
            began = time.perf_counter()
            done = subprocess.run(
                [sniff, "import", str(records), "--db", str(directory / "cmd.duckdb")],
                capture_output=True,
                text=True,
                check=False,
            )
            whole.append(time.perf_counter() - began)
            if done.returncode != 0:
                raise SystemExit(f"sniff import exited {done.returncode}: {done.stderr}")
            began = time.perf_counter()
            with open(records, "rb") as handle:
                batch = prepare(handle, source=str(records), workers=default_workers())
            table = batch.table()
            prepared_s.append(time.perf_counter() - began)
            events = table.num_rows
            with EventLog(directory / "load.duckdb") as log:
                began = time.perf_counter()
                result = log.import_matches(table, verify=False, facts=batch.facts())
                loaded_s.append(time.perf_counter() - began)
            assert result.events == events
            assert len(result.imported) == args.matches
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    figures = {
        "events": events,
        "command_events_per_s": events / statistics.median(whole),
        "prepare_events_per_s": events / statistics.median(prepared_s),
        "load_events_per_s": events / statistics.median(loaded_s),
    }
    if args.json:
        print(json.dumps({"matches": args.matches, **figures}))
        return
    print(f"{args.matches:,} matches, {events:,} events; medians of {args.runs} runs")
    verdict = "OK" if figures["command_events_per_s"] >= TARGET else "BELOW target"
    print(
        f"  sniff import, the whole command     {figures['command_events_per_s']:>12,.0f} events/s"
        f"  {verdict} ({TARGET:,.0f})"
    )
    print(
        f"  audit + events (all cores)          {figures['prepare_events_per_s']:>12,.0f} events/s"
    )
    print(f"  the load into DuckDB (one commit)   {figures['load_events_per_s']:>12,.0f} events/s")


if __name__ == "__main__":
    main()
