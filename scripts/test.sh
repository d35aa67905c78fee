#!/usr/bin/env bash
# The whole test suite, as the README and CI run it. The tests read the
# shared reference material in ../shared (tokenizer data, vectors, wire
# captures, the real llama-server); under CI=true a test that cannot find
# it fails instead of skipping.
#
# The real-engine tests are listed first: they are the longest package and
# mostly wait on llama-server, so they start while the rest runs beside them.
#
# CGO_ENABLED=0 unless set: the release builds that way (scripts/release.sh),
# so the suite tests the binary users get; and with cgo on, purego (the NVML
# loader in internal/power) imports runtime/cgo, which makes every test
# binary that reaches it link externally through gcc, about twice as slow.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED="${CGO_ENABLED:-0}"
go test -count=1 ./internal/realengine ./internal/cli ./... "$@"
