#!/usr/bin/env bash
# ctest `cli_fixture`: reruns tests/cli/fixture_commands.sh and asserts that every output is byte-identical
# to the digests in tests/cli/fixtures/expected.sha256 (and its key figures to expected_figures.txt, shown as
# a readable diff when they move) (and, when the full Mooncake trace is present,
# expected_full.sha256). Usage: fixture_test.sh TOKENLINE SOURCE_DIR
# On a difference it lists the files that changed. If the change is intended (a model or output change
# that the commit message explains), regenerate with scripts/regen-fixtures; a refactoring must not need it.
set -euo pipefail
tl=$1
src=$2
fx="$src/tests/cli/fixtures"
out=$(mktemp -d "${TMPDIR:-/tmp}/tokenline_fixture.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$src/tests/cli/fixture_commands.sh" "$tl" "$src" "$out"

# The key figures first, as a readable diff (scripts/fixture-figures): what changed, not only that a digest did.
status=0
if ! figures=$(diff -u "$fx/expected_figures.txt" <("$src/scripts/fixture-figures" "$out")); then
  echo "key figures differ (- expected, + now):" >&2
  echo "$figures" >&2
  status=1
fi
check() {  # check EXPECTED_FILE
  local bad
  bad=$(cd "$out" && sha256sum --check --quiet "$1" 2>&1 || true)
  if [[ -n "$bad" ]]; then
    echo "outputs differ from $(basename "$1"):" >&2
    echo "$bad" >&2
    return 1
  fi
}
check "$fx/expected.sha256" || status=1
# Files that exist now but are not pinned (a new output file is a change too).
listed=$(cd "$out" && find . -path ./volatile -prune -o -path ./full -prune -o -type f -print | sort)
pinned=$(awk '{ print $2 }' "$fx/expected.sha256" | sort)
if [[ "$listed" != "$pinned" ]]; then
  echo "the set of output files changed:" >&2
  diff <(echo "$pinned") <(echo "$listed") >&2 || true
  status=1
fi
if [[ -d "$out/full" ]]; then
  check "$fx/expected_full.sha256" || status=1
else
  echo "full Mooncake trace absent: its outputs were not checked"
fi
if [[ $status != 0 ]]; then
  echo "FAIL: outputs changed. Intended (and explained in the commit)? scripts/regen-fixtures" >&2
fi
exit $status
