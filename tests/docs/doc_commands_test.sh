#!/usr/bin/env bash
# tests/docs/doc_commands_test.sh TOKENLINE_BINARY REPO_ROOT (ctest docs_commands): every fenced ```sh,
# ```bash or ```shell block of README.md and docs/*.md runs, each in a fresh copy of the repository's files
# (what `git ls-files` lists, tracked or new; ignored build outputs left out, as on a fresh clone) with
# `tokenline` on PATH (and as build/tokenline) being the built binary, under bash -e -o pipefail; a
# non-zero exit fails the test with the block and the end of its output.
#
# A block is not run when the line right before its fence (blank lines allowed between) says why:
#   <!-- no-test: REASON -->   needs a GPU, a download, a long run, a server...: skipped and listed
#   <!-- needs: WHAT -->       needs a flag or command another branch adds: skipped and listed, run when
#                              TOKENLINE_DOCS_RUN_NEEDS=1 (for whoever merges that branch)
# The test also fails when README.md is longer than 300 lines, when a relative link of README.md or docs/
# names a file the repository lacks, or when a file of the repository cites DESIGN.md or STYLE.md (the
# design lives in docs/architecture.md).
# Environment: TOKENLINE_DOCS_RUN_NEEDS=1 (run needs: blocks too), TOKENLINE_DOCS_ONLY=FILE (one file's
# blocks only, e.g. docs/plan.md), TOKENLINE_DOCS_BLOCK_TIMEOUT (seconds per block, default 300).
set -euo pipefail
if (($# != 2)); then
  echo "usage: $0 TOKENLINE_BINARY REPO_ROOT" >&2
  exit 2
fi
bin="$(realpath "$1")"
root="$(realpath "$2")"
run_needs="${TOKENLINE_DOCS_RUN_NEEDS:-0}"
only="${TOKENLINE_DOCS_ONLY:-}"
block_timeout="${TOKENLINE_DOCS_BLOCK_TIMEOUT:-300}"
max_readme_lines=300
[[ -x "$bin" ]] || { echo "docs: $bin is not an executable" >&2; exit 2; }
scratch="$(mktemp -d "${TMPDIR:-/tmp}/tokenline-docs.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() {
  echo "docs: FAIL: $*"
  failures=$((failures + 1))
}

cd "$root"
shopt -s nullglob
docs=(README.md docs/*.md)
shopt -u nullglob

# --- What the documentation may cite -------------------------------------------------------------------
readme_lines="$(wc -l <README.md)"
((readme_lines <= max_readme_lines)) || fail "README.md has $readme_lines lines, more than $max_readme_lines"
# Relative links [text](path) and ![alt](path): the path, without its #anchor, exists beside the page.
for page in "${docs[@]}"; do
  dir="$(dirname "$page")"
  while IFS=: read -r line target; do
    path="${target%%#*}"
    [[ -z "$path" ]] && continue
    [[ -e "$dir/$path" ]] || fail "$page:$line: links to $path, which the repository lacks"
  done < <(grep -noE '\]\([^) ]+[^)]*\)' "$page" | sed -nE 's/^([0-9]+):\]\(([^) ]+).*/\1:\2/p' |
    grep -vE '^[0-9]+:(https?|mailto):' || true)
done
# Nothing cites the design documents that lived outside the repository.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  cited="$(git -C "$root" grep -n -I -e 'DESIGN\.md' -e 'STYLE\.md' -- . ':!tests/docs' || true)"
  [[ -z "$cited" ]] || fail "files cite DESIGN.md or STYLE.md (cite docs/architecture.md instead):
$cited"
fi

# --- The blocks ----------------------------------------------------------------------------------------
# One file per block (blocks/N.sh) and one line per block in blocks/index: N, file:line, kind, reason.
mkdir -p "$scratch/blocks"
n=0
for page in "${docs[@]}"; do
  [[ -n "$only" && "$page" != "$only" ]] && continue
  n="$(awk -v page="$page" -v dir="$scratch/blocks" -v n="$n" '
    function marker(s) { return s ~ /^<!-- (no-test|needs):.*-->[ \t]*$/ }
    BEGIN { fence = 0; mark = "" }
    fence == 0 && /^```/ {
      lang = substr($0, 4); sub(/[ \t].*$/, "", lang)
      if (lang == "sh" || lang == "bash" || lang == "shell") {
        n++; fence = 2; out = dir "/" n ".sh"; printf "" > out
        kind = "run"; reason = ""
        if (mark != "") {
          kind = mark; sub(/^<!-- /, "", kind); sub(/:.*$/, "", kind)
          reason = mark; sub(/^<!-- [a-z-]*: */, "", reason); sub(/ *-->[ \t]*$/, "", reason)
        }
        printf "%d\t%s:%d\t%s\t%s\n", n, page, NR, kind, reason >> (dir "/index")
      } else {
        fence = 1
      }
      mark = ""; next
    }
    fence != 0 && /^```/ { if (fence == 2) close(out); fence = 0; next }
    fence == 2 { print >> out; next }
    fence == 1 { next }
    marker($0) { mark = $0; next }
    /^[ \t]*$/ { next }
    { mark = "" }
    END { print n }
  ' "$page")"
done
if ((n == 0)); then
  echo "docs: no shell blocks found"
  exit $((failures > 0))
fi

# A fresh copy of the repository's files, as a clone would have them.
pristine="$scratch/tree"
mkdir -p "$pristine"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$root" ls-files -z --cached --others --exclude-standard |
    tar -C "$root" --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$pristine" -xf -
else
  tar -C "$root" --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$pristine" -xf -
fi
mkdir -p "$scratch/bin"
ln -s "$bin" "$scratch/bin/tokenline"

ran=0 skipped=0
declare -a listed=()
while IFS=$'\t' read -r i where kind reason; do
  if [[ "$kind" != run && -z "$reason" ]]; then
    fail "$where: a $kind marker without its reason"
  fi
  if [[ "$kind" == no-test || ("$kind" == needs && "$run_needs" != 1) ]]; then
    listed+=("$where  [$kind: $reason]")
    skipped=$((skipped + 1))
    continue
  fi
  work="$scratch/run-$i"
  cp -a "$pristine" "$work"
  mkdir -p "$work/build"
  ln -sfn "$bin" "$work/build/tokenline"
  start=$SECONDS
  if (cd "$work" && PATH="$scratch/bin:$PATH" timeout "$block_timeout" bash -e -o pipefail \
      "$scratch/blocks/$i.sh" </dev/null >"$scratch/out-$i.log" 2>&1); then
    echo "docs: ok   $where ($((SECONDS - start)) s)"
    ran=$((ran + 1))
  else
    status=$?
    fail "$where exited $status after $((SECONDS - start)) s; the block:"
    sed 's/^/    | /' "$scratch/blocks/$i.sh"
    echo "  its output (last 30 lines):"
    tail -30 "$scratch/out-$i.log" | sed 's/^/    > /'
  fi
  rm -rf "$work"
done <"$scratch/blocks/index"

echo "docs: $ran blocks ran, $skipped not run:"
for line in "${listed[@]}"; do echo "  $line"; done
if ((failures > 0)); then
  echo "docs: $failures failures"
  exit 1
fi
echo "docs: every runnable block passed"
