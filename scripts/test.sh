#!/usr/bin/env bash
# The whole test suite, as the README and CI run it. The tests read the
# shared reference material in ../shared (tokenizer data, vectors, wire
# captures, the real llama-server); under CI=true a test that cannot find
# it fails instead of skipping.
#
# The real-engine tests are listed first: they are the longest package and
# mostly wait on llama-server, so they start while the rest runs beside them.
# The next longest follow (the CLI, the website, e2e, the tokenizer), then
# the packages whose tests wait in real time (the engine's start, wait and
# stop; the preflight's timeout) or take a second of CPU (the validator,
# the manifest, the journal), so that the short packages fill the end: in
# alphabetical order the validator ran last, a second with one core idle.
#
# CGO_ENABLED=0 unless set: the release builds that way (scripts/release.sh),
# so the suite tests the binary users get; and with cgo on, purego (the NVML
# loader in internal/power/nvml) imports runtime/cgo, which makes every test
# binary that reaches it link externally through gcc, about twice as slow
# (only the process state imports the loader, so that is four test
# binaries, not the twenty-five that reach internal/power's types).
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
# the real-engine package, which asserts on the client's clock across
# streams llama-server serves at once, takes every CPU back in its
# TestMain, as strata runs for a user.
#
# GOGC=200: the test processes are short-lived and allocate at a high rate
# (JSON, redaction, streams); collecting half as often costs about 4 % less
# of the suite's CPU time, measured back to back (100 gave 116.6 and 133.2
# CPU-s, 200 gave 112.5 and 127.7). Less often still, or GOGC=off with a
# memory limit, fares worse: the larger heap is fresh pages, and a page
# fault is dear on a virtual machine.
#
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1: glibc's malloc asks for transparent
# huge pages (madvise), so the C programs the tests start (llama-server
# above all, then git, tmux and sh) fault their heaps in 2 MB at a time. A
# page fault costs about 10 us on this virtual machine (a C loop touching
# 400 MB of fresh pages: 9.6 us each), and a llama-server start faults in
# some 90 MB (its 151,936-token vocabulary): 17,700 faults and 0.73 CPU-s a
# start without, 2,600-3,200 and 0.58 with (five starts each); the
# real-engine package 17.9-18.1 CPU-s and 151,000 faults against
# 17.1-17.3 and 63,000. Go programs do not use glibc's malloc (CGO_ENABLED=0)
# and Chromium has its own allocator: neither changes.
n="$(nproc)"
GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}" GOGC="${GOGC:-200}" GOMAXPROCS=1 go test -p "$n" -parallel "$((2 * n))" -count=1 ./internal/realengine ./internal/cli ./internal/site ./internal/e2e ./internal/tokenizer \
	./internal/engine ./internal/preflight ./internal/validate ./internal/manifest ./internal/journal ./... "$@"
