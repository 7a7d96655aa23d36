#!/usr/bin/env bash
# One CLI test case.
#   run_case.sh error DGQ REGEX OUTPUT -- ARGS...   expects exit code 1..127 (no crash), exactly one
#       line on stderr, "dgq: error: ..." matching REGEX, and neither OUTPUT nor OUTPUT.partial on disk.
#       Progress lines of units finished before the error (a compress that fails at layer 1, on by
#       default when stderr is not a terminal) may come before it: the error is the last line.
#   run_case.sh usage DGQ REGEX -- ARGS...          a command-line (grammar) error: as error, and the
#       exit code is exactly 2, as for every dgq error (the README's promise), and stdout is empty.
#   run_case.sh ok DGQ REGEX -- ARGS...             expects exit code 0 and stdout matching REGEX.
set -u
mode=$1 dgq=$2 regex=$3
shift 3
output=""
if [ "$mode" = error ]; then
  output=$1
  shift
fi
[ "$1" = "--" ] && shift
[ -n "$output" ] && rm -f "$output" "$output.partial"

# A progress line (dgq/sim/files/output/progress.hpp): "LABEL: DONE/TOTAL WHAT, ELAPSED elapsed, ETA ETA".
progress_line='^[a-z].*: [0-9]+/[0-9]+ .*, [0-9hms]+ elapsed, ETA ([0-9hms]+|\?)$'
stdout_file=$(mktemp) stderr_file=$(mktemp)
trap 'rm -f "$stdout_file" "$stderr_file"' EXIT
"$dgq" "$@" >"$stdout_file" 2>"$stderr_file"
rc=$?
fail() {
  echo "FAIL: dgq $*" >&2
  echo "--- exit code $rc; stdout:" >&2
  cat "$stdout_file" >&2
  echo "--- stderr:" >&2
  cat "$stderr_file" >&2
  exit 1
}
case "$mode" in
  error)
    { [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; } || fail "exit code should be 1..127"
    [ "$(grep -Evc "$progress_line" "$stderr_file")" -eq 1 ] || fail "stderr should be one line (after progress lines)"
    tail -n 1 "$stderr_file" | grep -Eq "^dgq: error: .*($regex)" || fail "stderr should end with 'dgq: error: .*($regex)'"
    if [ -n "$output" ]; then
      [ ! -e "$output" ] || fail "output $output was left behind"
      [ ! -e "$output.partial" ] || fail "partial output $output.partial was left behind"
    fi
    ;;
  usage)
    [ "$rc" -eq 2 ] || fail "exit code should be 2"
    [ "$(wc -l <"$stderr_file")" -eq 1 ] || fail "stderr should be exactly one line"
    grep -Eq "^dgq: error: .*($regex)" "$stderr_file" || fail "stderr should match 'dgq: error: .*($regex)'"
    [ ! -s "$stdout_file" ] || fail "stdout should be empty"
    ;;
  ok)
    [ "$rc" -eq 0 ] || fail "exit code should be 0"
    grep -Eq -- "$regex" "$stdout_file" || fail "stdout should match '$regex'"
    ;;
  *) echo "run_case.sh: unknown mode $mode" >&2; exit 2 ;;
esac
echo "ok: dgq $*"
