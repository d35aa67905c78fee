#!/usr/bin/env bash
# The whole test suite, as the README and CI run it. The tests read the
# shared reference material in ../shared (tokenizer data, vectors, wire
# captures); under CI=true a test that cannot find it fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 ./... "$@"
