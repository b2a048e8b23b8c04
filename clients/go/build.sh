#!/usr/bin/env bash
# Build the Go sample bot `playbot` from proto/ alone and print the binary's path.
#
# The Go code of the proto is generated at every build into a temporary GOPATH
# (never committed, so it cannot go stale) and the bot is built in GOPATH mode
# against the distribution's Go libraries in /usr/share/gocode: no network, no
# module download. scripts/install_go.sh installs what it needs.
#
#   bash clients/go/build.sh            # prints clients/go/bin/playbot
#   PLAYBOT_OUT=/tmp/playbot bash clients/go/build.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${PLAYBOT_OUT:-$here/bin/playbot}"
system_gopath="${SYSTEM_GOPATH:-/usr/share/gocode}"

for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build.sh: $tool is missing (bash scripts/install_go.sh installs it)" >&2
    exit 1
  fi
done

gopath="$(mktemp -d "${TMPDIR:-/tmp}/playbot-gopath.XXXXXX")"
trap 'rm -rf "$gopath"' EXIT
mkdir -p "$gopath/src"
includes=(-I "$root/proto")
if [ -f /usr/include/google/protobuf/struct.proto ]; then
  includes+=(-I /usr/include)
fi
# The proto's go_package (americansniff/sniff/v1) is the generated package's import path.
protoc "${includes[@]}" --go_out="$gopath/src" --go-grpc_out="$gopath/src" \
  "$root/proto/sniff/v1/sniff.proto"

mkdir -p "$(dirname "$out")"
cd "$here/playbot"
export GO111MODULE=off GOFLAGS= GOPATH="$gopath:$system_gopath"
if [ -z "${GOCACHE:-}${XDG_CACHE_HOME:-}${HOME:-}" ]; then
  export GOCACHE="${TMPDIR:-/tmp}/playbot-gocache-$(id -u)"  # go needs one; a bare CI has no HOME
fi
go vet .
go build -trimpath -o "$out" .
echo "$out"
