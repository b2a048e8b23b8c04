#!/usr/bin/env bash
# Install headless Chromium and its driver from the distribution's packages,
# for the replay viewer's browser test. Quick and silent when already there.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_browser.sh: no apt-get here; install Chromium by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
echo "== installing Chromium (distribution packages)"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
command -v chromium >/dev/null
