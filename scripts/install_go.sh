#!/usr/bin/env bash
# Install the Go toolchain, protoc and the Go gRPC libraries from the distribution's packages,
# for the Go sample bot (clients/go) and its test: everything builds offline, in GOPATH mode,
# from /usr/share/gocode. Quick and silent when already there.
#
# The protobuf runtime is golang-github-golang-protobuf-1-5-dev (the 1.3 variant panics with
# the gRPC library of the same archive) and the APIv2 protoc-gen-go, matching it.
set -euo pipefail

PACKAGES=(
  golang
  golang-google-grpc-dev
  golang-google-protobuf-dev
  golang-github-golang-protobuf-1-5-dev
  protobuf-compiler
  libprotobuf-dev
  protoc-gen-go
  protoc-gen-go-grpc
)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
else
  missing=("${PACKAGES[@]}")
fi
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_go.sh: no apt-get here; install by hand: ${missing[*]}" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
echo "== installing Go, protoc and the Go gRPC libraries (distribution packages): ${missing[*]}"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v go >/dev/null && command -v protoc >/dev/null
