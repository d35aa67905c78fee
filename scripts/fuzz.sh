#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30) and prints the rate
# and the corpus each ended with. A crasher is written under the package's
# testdata/fuzz and fails the script.
# New inputs are minimized for at most a second (the default, a minute,
# spends most of a short run minimizing the large result files).
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
targets=(
  "./internal/client FuzzReadStream"          # the SSE stream and its chunks
  "./internal/result FuzzValidate"            # results.json of a folder
  "./internal/result FuzzValidateOutputs"     # outputs.jsonl of a folder
  "./internal/manifest FuzzParse"             # bench/approved.json
  "./internal/engine FuzzParse"               # engine profiles (TOML)
  "./internal/gguf FuzzOpen"                  # GGUF metadata
  "./internal/chattemplate FuzzRender"        # chat templates
  "./internal/score FuzzParse"                # strict JSON answers
  "./internal/redact FuzzJSONStaysValid"      # redaction keeps JSON valid
  "./internal/redact FuzzIdempotent"          # redacting twice changes nothing
  "./internal/tokenizer FuzzQwen2Split"       # the pre-tokenizer against regexp2
)
echo "machine: $(nproc) cores, $(go version | cut -d' ' -f3); ${secs} s per target"
for t in "${targets[@]}"; do
  set -- $t
  out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "${secs}s" -fuzzminimizetime 1s "$1" 2>&1) || { printf '%s\n' "$out" | tail -30; echo "FAIL: $1 $2"; exit 1; }
  last=$(printf '%s\n' "$out" | grep -E '^fuzz: elapsed' | tail -1)
  execs=$(printf '%s\n' "$last" | sed -E 's/.*execs: ([0-9]+).*/\1/')
  printf '%-22s %-22s %8d execs  %6d/s  %s\n' "$1" "$2" "$execs" "$((execs / secs))" "$(printf '%s' "$last" | sed -E 's/.*(new interesting: .*)/\1/')"
done
