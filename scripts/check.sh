#!/usr/bin/env bash
# Install the project and run every check and test: what CI runs (.ci/run) and the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,plot,cluster]'
if [ -f clients/node/package.json ]; then
  (cd clients/node && npm ci --no-audit --no-fund --loglevel=error)
fi

# Headless Chromium for the replay viewer's browser test (quick when present).
bash scripts/install_browser.sh
# Go, protoc and the Go gRPC libraries for the Go sample bot's test (quick when present).
bash scripts/install_go.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy (strict on every hand-written module)"
.venv/bin/mypy
echo "== generated protobuf code is fresh"
.venv/bin/python scripts/gen_proto.py --check
echo "== pytest (every tier: docs/testing.md)"
# An optional dependency that is absent fails its tests here instead of skipping them, and
# every property test runs its full example count.
export SNIFF_REQUIRE_ALL=1
export HYPOTHESIS_PROFILE=ci
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no test: failing" >&2
  exit 1
fi
exit "$status"
