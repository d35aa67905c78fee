#!/usr/bin/env bash
# Prints the performance figures of docs/performance.md.
# Usage: scripts/bench.sh [benchtime]   (default 20x)
set -euo pipefail
cd "$(dirname "$0")/.."
bt="${1:-20x}"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3)"
echo
echo "== tokenizer (16K prompt: 16,384 tokens, 56 KB) and bundle build"
go test -run '^$' -bench 'Encode16K|LoadTokenizerJSON' -benchmem -benchtime "$bt" ./internal/tokenizer/ | grep -E '^Benchmark'
go test -run '^$' -bench 'Build' -benchtime "$bt" ./internal/corpus/ | grep -E '^Benchmark'
echo
echo "== streaming client (10,000 llama.cpp-shaped chunks per op)"
go test -run '^$' -bench 'ReadStream' -benchmem -benchtime "$bt" ./internal/client/ | grep -E '^Benchmark'
echo
echo "== strata bench report on a complete 34-request folder"
go test -run '^$' -bench 'Report|BundleLoad' -benchtime "$bt" ./internal/e2e/ | grep -E '^Benchmark'
echo
echo "== validation of a complete 34-request folder in memory; redaction of short result strings and of 4 MiB answers"
go test -run '^$' -bench 'FS' -benchmem -benchtime "$bt" ./internal/validate/ | grep -E '^Benchmark'
go test -run '^$' -bench 'ResultStrings' -benchmem ./internal/redact/ | grep -E '^Benchmark'
go test -run '^$' -bench 'Answer4MiB' -benchmem -benchtime 3x ./internal/redact/ | grep -E '^Benchmark'
echo
echo "== side by side on one loopback stream: strata's client vs a Python runner; client-added TTFT"
go run ./bench/ssebench
echo
echo "== the website from 1,000 approved runs"
go test -run '^$' -bench 'Build1000' -benchtime 3x ./internal/site/ | grep -E '^Benchmark'
echo
echo "== model-file hashing side by side with openssl (page cache), shards in parallel, the hash cache"
go run ./bench/hashbench -mb 1024
echo
echo "== end to end: strata bench corpus build (wall time, cold process)"
bin=$(mktemp -d)/strata
go build -o "$bin" ./cmd/strata
out=$(mktemp -d)/bundle
start=$(date +%s.%N)
"$bin" bench corpus build --tokenizer ../shared/tokenizer/qwen3/tokenizer.json \
  --template ../shared/tokenizer/qwen3/chat_template.jinja --out "$out" >/dev/null
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "corpus build: %.2f s\n", e - s }'
diff -r "$out" bench/prompts/qwen3-standard-v1 && echo "rebuilt bundle is byte-identical"
echo
echo "== a first run's wait: the profile's model files hashed while its engine loads"
work=$(mktemp -d)
mkdir -p "$work/profiles"
printf 'GGUF' > "$work/profiles/model.gguf"
truncate -s 4G "$work/profiles/model.gguf"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/profiles/sim.toml" <<TOML
url = "http://127.0.0.1:$port"
command = ["$bin", "engine", "simulate", "--port", "$port", "--load-time", "10s"]
model_files = ["*.gguf"]
TOML
(cd "$work" && XDG_CACHE_HOME="$work/cache" "$bin" bench run --profile sim >/dev/null 2>&1)
python3 - "$work"/bench-results/*/results.json <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["extensions"]["model_hashing"]
d = h["while_engine_loaded"]
print("4 GiB model file: hashed in %.1f s while the engine loaded in %.1f s; the wait before the warm-up is %.1f s, not %.1f s"
      % (d["hashing_s"], d["engine_load_s"], max(d["hashing_s"], d["engine_load_s"]), d["hashing_s"] + d["engine_load_s"]))
PY
rm -rf "$work"
