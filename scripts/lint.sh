#!/usr/bin/env bash
# golangci-lint with the rules in .golangci.yml (errcheck, staticcheck,
# gocognit 30, forbidigo, funlen 80 and the rest it names), then x/tools'
# deadcode, at the versions pinned in tools/lint/go.mod: its own
# module, so the linter's dependencies never enter strata's go.mod, and
# go.sum holds every one of them to its hash. The binary is built into a
# temporary folder (the Go build cache makes a second build quick) and
# removed afterwards; nothing is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -modfile=tools/lint/go.mod -o "$bin/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint
"$bin/golangci-lint" version
"$bin/golangci-lint" run "$@" ./...

# No function unreachable from main or a test (x/tools' deadcode, pinned in
# the same module): dead code is read, kept up and trusted for nothing.
go build -modfile=tools/lint/go.mod -o "$bin/deadcode" golang.org/x/tools/cmd/deadcode
dead=$("$bin/deadcode" -test ./...)
if [ -n "$dead" ]; then
  printf 'deadcode: unreachable functions:\n%s\n' "$dead"
  exit 1
fi
