#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30) and prints the rate
# and the corpus each ended with. A crasher is written under the package's
# testdata/fuzz and fails the script; so does a target that did not fuzz
# (go test passes quietly when -fuzz matches nothing, as a wrong package
# path does). Every target runs and is reported, then the script fails if
# any did. First it checks that the list below names every `func Fuzz` of
# the tree, so a new target cannot be left out. Then it runs the
# random-input tests at their full count (-strata.full; the suite runs a
# bounded count), checking likewise that every package defining the flag
# is listed.
# New inputs are minimized for at most a second (the default, a minute,
# spends most of a short run minimizing the large result files).
# Usage: scripts/fuzz.sh [SECONDS]   (--check: only the list check; the
# layout tests run it)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
if [ "$secs" != --check ] && ! [[ "$secs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS | --check]: SECONDS is a whole number of seconds, at least 1, not \"$secs\"" >&2
  exit 2
fi
targets=(
  "./internal/client FuzzReadStream"          # the SSE stream and its chunks
  "./internal/client FuzzReadNDJSON"          # Ollama's NDJSON stream and its lines
  "./internal/validate FuzzValidate"          # results.json of a folder
  "./internal/validate FuzzValidateOutputs"   # outputs.jsonl of a folder
  "./internal/manifest FuzzParse"             # bench/approved.json
  "./internal/engine FuzzParse"               # engine profiles (TOML)
  "./internal/gguf FuzzOpen"                  # GGUF metadata
  "./internal/chattemplate FuzzRender"        # chat templates
  "./internal/score FuzzParse"                # strict JSON answers
  "./internal/redact FuzzJSONStaysValid"      # redaction keeps JSON valid
  "./internal/redact FuzzIdempotent"          # redacting twice changes nothing
  "./internal/tokenizer FuzzQwen2Split"       # the pre-tokenizer against regexp2
)
# Random-input tests that run a bounded count in the suite and their full
# count with -strata.full, as "./dir TestName".
full_tests=(
  "./internal/tokenizer TestQwen2SplitRandom" # the pre-tokenizer against regexp2
)

# Every fuzz target in the tree, as "./dir Name", against the list.
found=$(grep -rHE --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata '^func Fuzz[A-Za-z0-9_]*\(' . |
  sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#./\1 \2#' | sort || true)
listed=$(printf '%s\n' "${targets[@]}" | sort)
unlisted=$(comm -23 <(printf '%s\n' "$found") <(printf '%s\n' "$listed"))
stale=$(comm -13 <(printf '%s\n' "$found") <(printf '%s\n' "$listed"))
# Every package whose tests define -strata.full, against the full-count list.
full_found=$(grep -rlE --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata 'flag\.Bool\("strata\.full"' . |
  sed -E 's#^\./(.*)/[^/]+_test\.go$#./\1#' | sort -u || true)
full_listed=$(printf '%s\n' "${full_tests[@]}" | cut -d' ' -f1 | sort -u)
full_unlisted=$(comm -23 <(printf '%s\n' "$full_found") <(printf '%s\n' "$full_listed"))
full_stale=$(comm -13 <(printf '%s\n' "$full_found") <(printf '%s\n' "$full_listed"))
if [ -n "$unlisted$stale$full_unlisted$full_stale" ]; then
  [ -n "$unlisted" ] && printf 'fuzz targets not in scripts/fuzz.sh:\n%s\n' "$unlisted"
  [ -n "$stale" ] && printf 'scripts/fuzz.sh lists targets that do not exist:\n%s\n' "$stale"
  [ -n "$full_unlisted" ] && printf 'packages defining -strata.full not in scripts/fuzz.sh full_tests:\n%s\n' "$full_unlisted"
  [ -n "$full_stale" ] && printf 'scripts/fuzz.sh full_tests names packages that do not define -strata.full:\n%s\n' "$full_stale"
  exit 1
fi
if [ "$secs" = --check ]; then
  echo "scripts/fuzz.sh lists all ${#targets[@]} fuzz targets and the ${#full_tests[@]} full-count tests"
  exit 0
fi

echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3); ${secs} s per target"
failed=()
# fuzz runs a target for SECONDS. Go 1.26's coordinator can end a clean
# run with "context deadline exceeded" when the deadline races a busy
# worker (go.dev/issue/75804, fixed in Go 1.27): such a failure, with no
# failing input written, is run once more; a crasher never is.
fuzz() {
  go test -run '^$' -fuzz "^${2}\$" -fuzztime "${secs}s" -fuzzminimizetime 1s "$1" 2>&1
}
deadline_race() {
  ! grep -q 'Failing input written' <<<"$1" && grep -qx $'    context deadline exceeded' <<<"$1" &&
    [ "$(grep -c '^--- FAIL' <<<"$1")" = 1 ]
}
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  rc=0
  out=$(fuzz "$pkg" "$name") || rc=$?
  if [ "$rc" -ne 0 ] && deadline_race "$out"; then
    echo "$pkg $name: ended by Go's fuzzing deadline race (go.dev/issue/75804, no failing input), run once more"
    rc=0
    out=$(fuzz "$pkg" "$name") || rc=$?
  fi
  if [ "$rc" -ne 0 ]; then
    printf '%s\n' "$out" | tail -30
    echo "FAIL: $pkg $name"
    failed+=("$pkg $name")
    continue
  fi
  # The last progress line: "fuzz: elapsed: 3s, execs: 12345 (4115/sec), new interesting: 3 (total: 10)".
  last=$(printf '%s\n' "$out" | grep -E '^fuzz: elapsed: .*execs: [0-9]+' | tail -1 || true)
  if [ -z "$last" ]; then
    printf '%s\n' "$out" | tail -10
    echo "FAIL: $pkg $name did not fuzz (no such target in the package?)"
    failed+=("$pkg $name")
    continue
  fi
  execs=$(printf '%s\n' "$last" | sed -E 's/.*execs: ([0-9]+).*/\1/')
  corpus=$(printf '%s\n' "$last" | sed -nE 's/.*(new interesting: .*)/\1/p')
  printf '%-22s %-22s %8d execs  %6d/s  %s\n' "$pkg" "$name" "$execs" "$((execs / secs))" "$corpus"
done
for t in "${full_tests[@]}"; do
  read -r pkg name <<<"$t"
  if ! out=$(go test -count=1 -run "^${name}\$" -v "$pkg" -strata.full 2>&1) || ! grep -q -- "^--- PASS: ${name} " <<<"$out"; then
    printf '%s\n' "$out" | tail -30
    echo "FAIL: $pkg $name at its full count"
    failed+=("$pkg $name (-strata.full)")
    continue
  fi
  printf '%-22s %-22s full count: %s\n' "$pkg" "$name" "$(grep -- "^--- PASS: ${name} " <<<"$out" | sed -E 's/.*\((.*)\)/\1/')"
done
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
echo "all ${#targets[@]} targets ran without a crasher; ${#full_tests[@]} random-input tests passed at their full count"
