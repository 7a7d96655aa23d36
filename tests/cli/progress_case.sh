#!/usr/bin/env bash
# Progress on stderr, on by default (dgq/sim/files/output/progress.hpp; docs/cli.md, "Progress"):
#   progress_case.sh piped DGQ FIXTURES     stderr a file: one line per finished unit in the
#       documented format, counted in order, the last with "ETA 0s"; --quiet: nothing on stderr;
#       --progress (the old flag) still accepted; a run that fails after a finished unit ends
#       with its one error line.
#   progress_case.sh terminal DGQ FIXTURES  stderr a terminal (script(1)'s pty): a bar with
#       "ETA ?" at once, redrawn in place; a run that fails under a bar prints its error on a
#       line of its own.
# Checked by format, never by timing: the elapsed times and ETAs are matched as patterns.
set -u
mode=$1 dgq=$2 fix=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/stderr "$work"/tty; do [ -f "$f" ] && { echo "--- $f:" >&2; cat -A "$f" >&2; }; done
  exit 1
}
duration='[0-9]+(s|m[0-9]{2}s|h[0-9]{2}m)'

# expect_progress LABEL TOTAL WHAT LINES: stderr opens with LINES progress lines of LABEL, each
# "LABEL: i/TOTAL WHAT, D elapsed, ETA D|?" (WHAT literal), i increasing to TOTAL on the last,
# whose ETA is 0s.
expect_progress() {
  local label=$1 total=$2 what=$3 lines=$4 n=0 last=0 line
  while IFS= read -r line; do
    [[ "$line" =~ ^"$label: "([0-9]+)/"$total $what, "$duration" elapsed, ETA "($duration|\?)$ ]] || break
    [ "${BASH_REMATCH[1]}" -gt "$last" ] || fail "$label: the count should increase: $line"
    last=${BASH_REMATCH[1]} n=$((n + 1))
  done <"$work/stderr"
  [ "$n" -eq "$lines" ] || fail "$label: expected $lines progress lines, found $n"
  [ "$last" -eq "$total" ] || fail "$label: the last line should count $total"
  sed -n "${lines}p" "$work/stderr" | grep -q ", ETA 0s$" || fail "$label: the last line's ETA should be 0s"
}

case "$mode" in
  piped)
    "$dgq" replay "$fix/good.h5" --scheme q8_0 -o "$work/r.h5" >"$work/stdout" 2>"$work/stderr" || fail "replay"
    expect_progress "replay $fix/good.h5" 2 "layer(s)" 2
    [ "$(wc -l <"$work/stderr")" -eq 3 ] || fail "replay: two progress lines and the throughput line"
    tail -n 1 "$work/stderr" | grep -q "tokens\\*heads/s$" || fail "replay: the throughput line last"

    "$dgq" replay "$fix/good.h5" --scheme q8_0 -o "$work/r.h5" --force --progress >"$work/stdout" 2>"$work/stderr" ||
      fail "replay --progress"
    expect_progress "replay $fix/good.h5" 2 "layer(s)" 2

    "$dgq" replay "$fix/good.h5" --scheme q8_0 -o "$work/r.h5" --force --quiet >"$work/stdout" 2>"$work/stderr" ||
      fail "replay --quiet"
    [ ! -s "$work/stderr" ] || fail "replay --quiet: stderr should be empty"
    grep -q "^q8_0 @ good" "$work/stdout" || fail "replay --quiet: the table on stdout"

    printf 'schemes = ["q8_0", "q4_0"]\ntraces = ["%s"]\n' "$fix/good.h5" >"$work/sweep.toml"
    "$dgq" sweep "$work/sweep.toml" -o "$work/s.h5" >"$work/stdout" 2>"$work/stderr" || fail "sweep"
    expect_progress sweep 2 "run(s) done (trace good)" 1
    [ "$(wc -l <"$work/stderr")" -eq 1 ] || fail "sweep: one pass, one line"
    "$dgq" sweep "$work/sweep.toml" -o "$work/s.h5" >"$work/stdout" 2>"$work/stderr" || fail "sweep resumed"
    expect_progress sweep 2 "run(s) done (already complete)" 1

    "$dgq" gen-trace -o "$work/g.h5" --layers 2 --kv-heads 1 --q-heads 1 --head-dim 16 --tokens 64 --probes 2 \
      >"$work/stdout" 2>"$work/stderr" || fail "gen-trace"
    expect_progress "gen-trace $work/g.h5" 2 "layer(s)" 2
    "$dgq" compress "$fix/good.h5" -o "$work/c.h5" --scheme q8_0 >"$work/stdout" 2>"$work/stderr" || fail "compress"
    expect_progress "compress $fix/good.h5" 2 "layer(s)" 2
    "$dgq" decompress "$work/c.h5" -o "$work/d.h5" >"$work/stdout" 2>"$work/stderr" || fail "decompress"
    expect_progress "decompress $work/c.h5" 2 "layer(s)" 2

    # Layer 0 is compressed before layer 1's NaN is found: its line, then the one error line.
    "$dgq" compress "$fix/nan.h5" -o "$work/n.h5" >"$work/stdout" 2>"$work/stderr" && fail "compress nan.h5 should fail"
    [ "$(wc -l <"$work/stderr")" -eq 2 ] || fail "compress nan.h5: a progress line and the error"
    head -n 1 "$work/stderr" | grep -Eq "^compress $fix/nan.h5: 1/2 layer\\(s\\), " || fail "compress nan.h5: layer 0's line"
    tail -n 1 "$work/stderr" | grep -q "^dgq: error: .*nan.h5: /layers/1/v: non-finite" || fail "compress nan.h5: the error last"
    ;;
  terminal)
    on_tty() { script -qec "$*" /dev/null >"$work/tty" 2>&1; }
    on_tty "'$dgq' replay '$fix/good.h5' --scheme q8_0 -o '$work/r.h5'" || fail "replay on a terminal"
    grep -q $'\r'"replay $fix/good.h5: \\[\\.*\\] 0/2, ETA ?" "$work/tty" || fail "replay: a bar with ETA ? at once"
    grep -Eq $'\r'"replay $fix/good.h5: \\[#+\\] 2/2 layer\\(s\\), .*ETA 0s" "$work/tty" || fail "replay: the full bar last"
    on_tty "'$dgq' replay '$fix/good.h5' --scheme q8_0 -o '$work/q.h5' --quiet" || fail "replay --quiet on a terminal"
    ! grep -q "ETA" "$work/tty" || fail "replay --quiet: no bar"

    on_tty "'$dgq' compress '$fix/nan.h5' -o '$work/n.h5'" && fail "compress nan.h5 should fail"
    grep -Eq $'\r'"compress $fix/nan.h5: \\[#+\\.+\\] 1/2 layer\\(s\\)" "$work/tty" || fail "compress nan.h5: the bar at 1/2"
    # The bar's line is ended before the error: the error is a line of its own, the last.
    [ "$(grep -c "dgq: error: " "$work/tty")" -eq 1 ] || fail "compress nan.h5: one error"
    tr -d '\r' <"$work/tty" | tail -n 1 | grep -q "^dgq: error: .*nan.h5: /layers/1/v: non-finite" ||
      fail "compress nan.h5: the error should start its own line"
    ;;
  *) fail "unknown mode $mode" ;;
esac
echo "ok: progress $mode"
