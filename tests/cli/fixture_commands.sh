#!/usr/bin/env bash
# The fixed command set whose outputs tests/cli/fixtures/expected.sha256 pins (issue 12: "before moving
# anything, record the outputs"). Usage: fixture_commands.sh TOKENLINE SOURCE_DIR OUT_DIR
# Writes one folder per command under OUT_DIR; everything under OUT_DIR except OUT_DIR/volatile/ is
# deterministic and digested. A real run's own files hold measured times, so they live in volatile/ and
# what is pinned of them is their decisions (requests.csv without time columns, the step batches) and the
# replay of a checked-in recorded trace. With the full Mooncake trace present ($TOKENLINE_TRACES_DIR, else
# ../shared/traces next to the repository), the whole trace runs too (OUT_DIR/full/, digested separately).
set -euo pipefail
tl=$(realpath "$1")
src=$2
mkdir -p "$3/volatile"
out=$(realpath "$3")
# Workload paths are recorded in metrics.json (run.workload): run from the source tree and name them
# relative to it, so the digests do not depend on where the repository is checked out.
cd "$src"
fx="tests/cli/fixtures"

# The embedded default: the first 200 Mooncake conversation requests, GLM-5.3, one dp8-ep8 instance.
"$tl" quickstart --out "$out/quickstart" 2>/dev/null
# sim with nothing but a model and a rate: the embedded chat workload, the default layout and time source.
"$tl" sim --model llama-3.1-70b --rate 5 --out "$out/sim_defaults" 2>/dev/null

slice="$fx/mooncake_conversation_3001_3300.jsonl"
# A Mooncake slice at op detail (batches, op spans), and routed over two instances by prefix.
"$tl" sim --workload "$slice" --trace-detail op --out "$out/mooncake_slice" 2>/dev/null
# Every run without a time-source flag is priced by the best available source (h200-sglang); this one keeps
# the seed's model (--roofline: the roofline and the seed's engine).
"$tl" sim --workload "$slice" --instances 2 --router prefix-aware --dp-assign prefix-aware --roofline \
  --out "$out/mooncake_routed" 2>/dev/null
# Memory pressure, MTP draws, expert skew, a closed loop and the lpm policy on a synthetic workload.
"$tl" sim --workload "synthetic:n=120,rate=8,input=lognormal:mean=3000,sigma=1,output=uniform:16:256,prefix_groups=4,prefix_tokens=2048,seed=3" \
  --parallel tp8-ep8 --kv-pages 400 --reservation incremental --policy lpm --mtp 2 --mtp-accept 0.7 \
  --expert-skew zipf:1.0 --concurrency 16 --slo ttft=2s,tpot=50ms --out "$out/synthetic_pressure" 2>/dev/null

# PD: analytic with layer streaming; simgrid on a two-node cluster with layer streaming over the network.
"$tl" sim --workload "$slice" --max-requests 150 --pd 1P1D --pd-transfer layer --trace-detail op --out "$out/pd_analytic" 2>/dev/null
"$tl" sim --workload "$slice" --max-requests 120 --cluster h200x16-ib --pd 1P1D --pd-transfer layer \
  --backend simgrid --out "$out/pd_simgrid" 2>/dev/null
# simgrid: two co-located dp8-ep8 instances on two nodes.
"$tl" sim --workload "$slice" --max-requests 120 --cluster h200x16-ib --parallel dp8-ep8 --instances 2 \
  --backend simgrid --trace-detail op --out "$out/simgrid" 2>/dev/null

# run -> replay on the tiny model: a burst at time 0 (decisions do not depend on measured times) that
# preempts and hits the prefix cache, over two attention-DP ranks.
burst="$fx/prefix_group_burst.jsonl"
engine="--model glm-5.3-tiny --page-size 16 --reservation incremental --max-running 64 --kv-pages 12 --chunk 64"
# shellcheck disable=SC2086
"$tl" run --workload "$burst" --parallel dp2 $engine --out "$out/volatile/real" 2>/dev/null
# shellcheck disable=SC2086
"$tl" sim --backend replay:"$out/volatile/real/trace.json" --workload "$burst" --parallel dp2 $engine \
  --trace-detail op --out "$out/volatile/replay" 2>/dev/null
if ! cmp -s "$out/volatile/real/requests.csv" "$out/volatile/replay/requests.csv"; then
  echo "fixture: the replay's requests.csv differs from the run's" >&2
  exit 1
fi
mkdir -p "$out/run_decisions"
# requests.csv without its time columns (arrival, first token, finish, ttft, tpot, e2e), and every step's batch.
awk -F, -v OFS=, '{ $2 = ""; $3 = ""; $4 = ""; $14 = ""; $15 = ""; $16 = ""; print }' "$out/volatile/real/requests.csv" \
  >"$out/run_decisions/requests_untimed.csv"
grep -o '"batch":"[^"]*"' "$out/volatile/real/trace.json" >"$out/run_decisions/batches.txt"
# The replay of a checked-in trace of that run: every output byte is determined.
# shellcheck disable=SC2086
"$tl" sim --backend replay:"$fx/recorded_run_dp2/trace.json" --workload "$burst" --parallel dp2 $engine \
  --trace-detail op --out "$out/replay_recorded" 2>/dev/null

# The token ledger as JSON: decode under DP attention, a 1M prefill chunk, a PD hand-off.
mkdir -p "$out/ledger"
"$tl" ledger decode --model glm-5.3 --hardware h200 --parallel dp8-ep8 --batch 32 --context 131072 --json \
  >"$out/ledger/decode.json"
"$tl" ledger prefill --parallel tp8-ep8 --context 1048576 --chunk 32768 --json >"$out/ledger/prefill.json"
"$tl" ledger pd --context 1048576 --json >"$out/ledger/pd.json"

traces_dir=${TOKENLINE_TRACES_DIR:-"../shared/traces"}
if [[ -f "$traces_dir/conversation_trace.jsonl" ]]; then
  "$tl" sim --workload "$traces_dir/conversation_trace.jsonl" --out "$out/full/mooncake" 2>/dev/null
fi

# Each run's advisory lock file on its --out (traces/output_file.h RunOutputs): empty, and not an output.
find "$out" -name .tokenline.lock -delete
