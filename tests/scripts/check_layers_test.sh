#!/usr/bin/env bash
# scripts/check-layers passes on the repository, and fails, naming the file and line, on a tree where a
# lower layer includes a higher one, a private header leaks, or a file outside sim/simgrid/ includes SimGrid.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/check-layers" >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/engine/core" "$tmp/cost" "$tmp/sim/driver"
echo '#include "engine/core/request.h"' >"$tmp/cost/ok.h"
"$root/scripts/check-layers" "$tmp" >/dev/null || { echo "a downward include was refused"; exit 1; }
expect_refused() {
  local what="$1" needle="$2"
  if out="$("$root/scripts/check-layers" "$tmp" 2>&1)"; then
    echo "not refused: $what"
    exit 1
  fi
  grep -qF "$needle" <<<"$out" || { echo "message for $what does not name $needle: $out"; exit 1; }
}
printf '// up\n#include "cost/step_cost.h"\n' >"$tmp/engine/core/up.h"
expect_refused "engine/core including cost/" "engine/core/up.h:2"
rm "$tmp/engine/core/up.h"
echo '#include "cost/rank_work.h"' >"$tmp/sim/driver/leak.cpp"
expect_refused "a private cost/ header in sim/" "private to cost/"
rm "$tmp/sim/driver/leak.cpp"
echo '#include <simgrid/s4u.hpp>' >"$tmp/sim/driver/sg.cpp"
expect_refused "SimGrid outside sim/simgrid/" "only sim/simgrid/ includes SimGrid"
echo "check-layers: refuses all three"
