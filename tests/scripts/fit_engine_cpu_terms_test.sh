#!/usr/bin/env bash
# scripts/fit-engine-cpu-terms: refuses a bad argument (exit 2, naming it), reads calibrate's point table and
# finds the minimum of calibrate's objective. A stand-in for `tokenline` prints a point table whose predicted
# TTFT is off by 4 x |first_token_latency_s - 0.05| and TPOT by 2 x |step_cpu_overhead_s - 0.002|, one row set
# apart (agg!) far off, so the fit must land near 0.05 s and 2 ms and leave the set-apart row out.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
script="$root/scripts/fit-engine-cpu-terms"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tokenline" <<'STUB'
#!/usr/bin/env python3
import sys
sets = sys.argv[sys.argv.index("--sim-args") + 1].split(" ", 1)[1]
v = {k: float(x) for k, x in (item.split("=") for item in sets.split(","))}
ttft = 100 * (1 + 4 * abs(v.get("first_token_latency_s", 0) - 0.05))
tpot = 10 * (1 + 2 * abs(v.get("step_cpu_overhead_s", 0) - 0.002) / 0.002)
print(" line model mode layout conc isl osl |    ttft_ms   tpot_ms |  pred_ttft  ratio pred_tpot  ratio    e2e")
print(f"    2 ModelA agg  tp1  4 1024 1024 |      100.0     10.00 | {ttft:10.1f}  1.00 {tpot:9.2f}  1.00  1.00")
print(f"    3 ModelA agg! tp1  8 1024 1024 |      100.0     10.00 |      900.0  9.00     90.00  9.00  9.00")
print("model mode points failed | TTFT_MAPE TPOT_MAPE E2E_MAPE")
STUB
chmod +x "$tmp/tokenline"
expect_refused() {
  local what="$1" needle="$2"
  shift 2
  set +e
  out="$("$script" "$@" 2>&1)"
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "$what: exit $rc, expected 2: $out"; exit 1; }
  grep -qF -- "$needle" <<<"$out" || { echo "message for $what does not name $needle: $out"; exit 1; }
}
common=(--engine trtllm --tokenline "$tmp/tokenline" --models-dir "$tmp" --out "$tmp/out")
expect_refused "a file without its hardware" "expected POINTS:HARDWARE" "${common[@]}" points.csv
expect_refused "an unknown parameter" "--fit: kernel_launch_s" "${common[@]}" --fit kernel_launch_s p.csv:b200
out="$("$script" "${common[@]}" --fit first_token_latency_s,step_cpu_overhead_s --tolerance 0.02 \
  a.csv:b200 b.csv:h100 2>/dev/null)"
python3 - "$out" <<'CHECK'
import sys
lines = sys.argv[1].splitlines()
got = {l.split()[0]: float(l.split()[1]) for l in lines[1:]}
assert abs(got["first_token_latency_s"] - 0.05) < 0.01, got
assert abs(got["step_cpu_overhead_s"] - 0.002) < 0.0002, got
assert lines[0].endswith("evaluations") and "-> 0.00" in lines[0], lines[0]  # the set-apart row left out
CHECK
echo "fit-engine-cpu-terms: refuses bad arguments, fits the stand-in's minimum"
