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
#
# GOMAXPROCS=1: the suite is CPU-bound (both cores busy for the whole run)
# and most of its goroutines wake for a moment and sleep again (HTTP on
# loopback, the simulator's token pacing, pipes). With two Ps each wakeup
# can send the other P spinning to look for work, and on a virtual machine
# the wakeups and spins are costly: about 15 % of the suite's CPU time was
# the scheduler looking for work. One P per process spends it on the tests.
# Packages still run side by side (-p, which would follow GOMAXPROCS), and
# tests inside a binary still overlap their waits (-parallel, the same);
# the packages that assert on the client's clock across concurrent streams
# take every CPU back in their TestMain, as strata runs for a user.
n="$(nproc)"
GOMAXPROCS=1 go test -p "$n" -parallel "$((2 * n))" -count=1 ./internal/realengine ./internal/cli ./... "$@"
