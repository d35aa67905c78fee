#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30) and prints the rate
# and the corpus each ended with. A crasher is written under the package's
# testdata/fuzz and fails the script; so does a target that did not fuzz
# (go test passes quietly when -fuzz matches nothing, as a wrong package
# path does). Every target runs and is reported, then the script fails if
# any did. First it checks that the list below names every `func Fuzz` of
# the tree, so a new target cannot be left out.
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

# Every fuzz target in the tree, as "./dir Name", against the list.
found=$(grep -rHE --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata '^func Fuzz[A-Za-z0-9_]*\(' . |
  sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#./\1 \2#' | sort || true)
listed=$(printf '%s\n' "${targets[@]}" | sort)
unlisted=$(comm -23 <(printf '%s\n' "$found") <(printf '%s\n' "$listed"))
stale=$(comm -13 <(printf '%s\n' "$found") <(printf '%s\n' "$listed"))
if [ -n "$unlisted$stale" ]; then
  [ -n "$unlisted" ] && printf 'fuzz targets not in scripts/fuzz.sh:\n%s\n' "$unlisted"
  [ -n "$stale" ] && printf 'scripts/fuzz.sh lists targets that do not exist:\n%s\n' "$stale"
  exit 1
fi
if [ "$secs" = --check ]; then
  echo "scripts/fuzz.sh lists all ${#targets[@]} fuzz targets"
  exit 0
fi

echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3); ${secs} s per target"
failed=()
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  if ! out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" -fuzzminimizetime 1s "$pkg" 2>&1); then
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
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
echo "all ${#targets[@]} targets ran without a crasher"
