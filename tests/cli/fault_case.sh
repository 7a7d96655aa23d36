#!/usr/bin/env bash
# Hostile-file hardening: fault cases that need a shell around dgq.
#   fault_case.sh disk-full DGQ FIXTURES   every writer, with files limited to 8 KiB (ulimit -f,
#       SIGXFSZ ignored: writes fail with EFBIG as on a full disk), must exit 1..127 with one
#       "dgq: error:" line and leave neither OUTPUT nor OUTPUT.partial behind.
#   fault_case.sh sweep-lock DGQ FIXTURES  a sweep whose output is locked by another process
#       fails at once, naming the lock, and leaves that process's OUTPUT.partial alone.
set -u
mode=$1 dgq=$2 fix=$3
work=$(mktemp -d)
holder=""
cleanup() {
  [ -n "$holder" ] && kill "$holder" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_error NAME OUTPUT ARGS...: runs dgq under the current limits, checks exit code,
# the one-line error and that OUTPUT and OUTPUT.partial are gone.
expect_error() {
  local name=$1 output=$2
  shift 2
  "$dgq" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  echo "$name: exit $rc: $(cat "$work/stderr")"
  { [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; } || fail "$name: exit code $rc should be 1..127"
  # replay prints its throughput line on stderr before writing, and the long commands a progress
  # line per finished unit (dgq/sim/files/output/progress.hpp); the error is one more line, the last.
  grep -Ev "tokens\*heads/s$|^[a-z].*: [0-9]+/[0-9]+ .*, [0-9hms]+ elapsed, ETA ([0-9hms]+|\?)$" "$work/stderr" >"$work/errors"
  tail -n 1 "$work/stderr" | grep -q "^dgq: error: " || fail "$name: the error should be the last line"
  [ "$(wc -l <"$work/errors")" -eq 1 ] || fail "$name: the error should be exactly one line"
  grep -q "^dgq: error: " "$work/errors" || fail "$name: the error should start with 'dgq: error: '"
  [ ! -e "$output" ] || fail "$name: $output was left behind"
  [ ! -e "$output.partial" ] || fail "$name: $output.partial was left behind"
}

case "$mode" in
  disk-full)
    # Inputs written before the limit is set.
    "$dgq" compress "$fix/good.h5" -o "$work/in.dgqz.h5" --scheme q8_0 >/dev/null || fail "setup compress"
    "$dgq" replay "$fix/good.h5" --scheme q8_0 -o "$work/in-results.h5" >/dev/null 2>&1 || fail "setup replay"
    trap '' XFSZ
    ulimit -f 8
    expect_error gen-trace "$work/gen.h5" gen-trace -o "$work/gen.h5" --tokens 512
    expect_error compress "$work/c.h5" compress "$fix/good.h5" -o "$work/c.h5" --scheme q8_0
    expect_error decompress "$work/d.h5" decompress "$work/in.dgqz.h5" -o "$work/d.h5"
    expect_error replay "$work/r.h5" replay "$fix/good.h5" --scheme q8_0 --scheme dgq -o "$work/r.h5"
    expect_error merge "$work/m.h5" merge "$work/m.h5" "$work/in-results.h5"
    ;;
  sweep-lock)
    printf 'schemes = ["q8_0"]\ntraces = ["%s"]\n' "$fix/good.h5" >"$work/sweep.toml"
    out=$work/sweep.h5
    echo "the other process's partial output" >"$out.partial"
    flock "$out.lock" sleep 4 &  # the other process: holds the lock for 4 s
    holder=$!
    for _ in $(seq 50); do  # until the holder has the lock
      flock -n "$out.lock" true 2>/dev/null || break
      sleep 0.1
    done
    "$dgq" sweep "$work/sweep.toml" -o "$out" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    echo "sweep-lock: exit $rc: $(cat "$work/stderr")"
    { [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; } || fail "exit code $rc should be 1..127"
    grep -q "^dgq: error: .*sweep\.h5: in use by another dgq process" "$work/stderr" || fail "message should name the lock"
    [ "$(cat "$out.partial" 2>/dev/null)" = "the other process's partial output" ] || fail "the other process's $out.partial was touched"
    [ -e "$out.lock" ] || fail "the other process's lock file was removed"
    wait "$holder"
    holder=""
    rm -f "$out.partial"
    "$dgq" sweep "$work/sweep.toml" -o "$out" >/dev/null 2>&1 || fail "the sweep should run once the lock is free"
    ;;
  *) fail "unknown mode $mode" ;;
esac
echo "ok: $mode"
