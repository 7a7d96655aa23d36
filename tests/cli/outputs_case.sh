#!/usr/bin/env bash
# Outputs never lose a user's data (docs/cli.md, "Outputs"; docs/robustness.md).
# Each mode works in a fresh temporary folder, on copies of make_cli_fixtures' files.
#   json-symlink     --json through a symbolic link replaces its target; the link stays a link.
#   json-fifo        --json into a named pipe is written through it; the pipe stays a pipe.
#   export-fifo      dgq export -o into a named pipe: the same.
#   hdf5-fifo        an HDF5 output (compress -o) into a named pipe is refused; the pipe stays.
#   replay-onto-trace  replay -o naming a trace is refused; the trace is unchanged.
#   compress-onto-results  compress -o naming a results file is refused; its runs are unchanged.
#   merge-existing   merge into an existing file that is not an input is refused (unchanged);
#                    named among the inputs it keeps its runs; --force replaces it.
#   eval-existing    eval -o naming an existing results file is refused before any work
#                    (unchanged); --force replaces it; through a link, the link stays.
# None uses /dev/null or /dev/stdout: the old rule renamed over any output, so these cases run
# against it (to see them fail) as root would have replaced the machine's own.
set -u
mode=$1 dgq=$2 fix=$3 source_dir=$4
work=$(mktemp -d)
reader=""
cleanup() {
  [ -n "$reader" ] && kill "$reader" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL ($mode): $*" >&2
  for f in "$work"/stdout "$work"/stderr; do [ -e "$f" ] && { echo "--- $f:" >&2; cat "$f" >&2; }; done
  exit 1
}
run() { "$dgq" "$@" >"$work/stdout" 2>"$work/stderr"; }
# expect_error REGEX ARGS...: exit code 2 and one stderr line "dgq: error: ...REGEX".
expect_error() {
  local regex=$1
  shift
  run "$@"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "dgq $* exited $rc, expected 2"
  [ "$(wc -l <"$work/stderr")" -eq 1 ] || fail "stderr should be one line"
  grep -Eq "^dgq: error: .*$regex" "$work/stderr" || fail "stderr should match '$regex'"
}
# A named pipe with a reader started on it, whose copy lands in $work/from-pipe.
start_reader() {
  mkfifo "$work/pipe"
  cat "$work/pipe" >"$work/from-pipe" &
  reader=$!
}
# The pipe is still a pipe; the reader got everything (it ends when the writer closes).
check_reader() {
  [ -p "$work/pipe" ] || fail "the named pipe was replaced by $(stat -c %F "$work/pipe")"
  wait "$reader"
  reader=""
  grep -Eq "$1" "$work/from-pipe" || fail "the reader did not get the output"
}
model="$source_dir/tests/fuzz/corpus/fuzz_model/seed-llama.h5"
tokens="$source_dir/tests/fuzz/corpus/fuzz_tokens/seed-tokens-int32.h5"
eval_into() { run eval --model "$model" --text "$tokens" --ctx 8 --scheme q8_0 --threads 1 -o "$@"; }

case "$mode" in
  json-symlink)
    echo old >"$work/real.json"
    ln -s real.json "$work/link.json"
    run memory --model llama-3-8b --tokens 8k --json "$work/link.json" || fail "memory --json failed"
    [ -L "$work/link.json" ] || fail "the link was replaced by a regular file"
    grep -Eq '"format" *: *"dgq-memory"' "$work/real.json" || fail "the link's target does not hold the JSON"
    ls "$work" | grep -q partial && fail "a partial file was left behind"
    ;;
  json-fifo)
    start_reader
    run memory --model llama-3-8b --tokens 8k --json "$work/pipe" || fail "memory --json into a pipe failed"
    check_reader '"format" *: *"dgq-memory"'
    ;;
  export-fifo)
    start_reader
    run export "$fix/prov/sweep.h5" -o "$work/pipe" || fail "export into a pipe failed"
    check_reader '^run,scheme,'
    ;;
  hdf5-fifo)
    mkfifo "$work/pipe"
    expect_error "$work/pipe: not a regular file \(a device, pipe or socket\)" compress "$fix/good.h5" -o "$work/pipe"
    [ -p "$work/pipe" ] || fail "the named pipe was replaced"
    [ ! -e "$work/pipe.partial" ] || fail "a partial file was left behind"
    ;;
  replay-onto-trace)
    cp "$fix/good.h5" "$work/trace.h5"
    expect_error "trace\.h5: attribute 'format' is 'dgq-trace', not a dgq-results file; runs are added only to a results file" \
      replay "$fix/good.h5" --scheme q8_0 -o "$work/trace.h5"
    cmp -s "$fix/good.h5" "$work/trace.h5" || fail "the trace was changed"
    ;;
  compress-onto-results)
    cp "$fix/prov/sweep.h5" "$work/r.h5"
    expect_error "r\.h5: holds [0-9]+ run\(s\) \(a dgq-results file\); this output would replace them" \
      compress "$fix/good.h5" -o "$work/r.h5"
    cmp -s "$fix/prov/sweep.h5" "$work/r.h5" || fail "the results file was changed"
    [ ! -e "$work/r.h5.partial" ] || fail "a partial file was left behind"
    ;;
  merge-existing)
    cp "$fix/prov/sweep.h5" "$work/s.h5"        # fp16@good and q8_0@good
    cp "$fix/prov/shard0.h5" "$work/shard0.h5"  # one of them
    cp "$fix/prov/shard0.h5" "$work/out.h5"
    expect_error "out\.h5: exists and holds 1 run\(s\); dgq merge would replace it: name it among the inputs" \
      merge "$work/out.h5" "$work/s.h5"
    cmp -s "$fix/prov/shard0.h5" "$work/out.h5" || fail "the existing output was changed"
    run merge "$work/shard0.h5" "$work/shard0.h5" "$work/s.h5" || fail "merge into one of its inputs failed"
    grep -q "into $work/shard0.h5: 2 run(s), 1 identical duplicate(s)" "$work/stdout" \
      || fail "the input named as output should keep its run and gain the other"
    run merge "$work/out.h5" "$work/s.h5" --force || fail "merge --force failed"
    grep -q "into $work/out.h5: 2 run(s)" "$work/stdout" || fail "--force should replace the output"
    ;;
  eval-existing)
    eval_into "$work/a.h5" || fail "the first eval failed"
    cp "$work/a.h5" "$work/before.h5"
    expect_error "a\.h5: exists \(2 run\(s\), a dgq-eval file\); dgq eval writes its results to a new file: choose another -o \(and join the two with dgq merge\), or pass --force" \
      eval --model "$model" --text "$tokens" --ctx 8 --scheme q4_0 --threads 1 -o "$work/a.h5"
    cmp -s "$work/a.h5" "$work/before.h5" || fail "the existing results were changed"
    [ ! -e "$work/a.h5.partial.d" ] || fail "the refused run left its chunk folder"
    ln -s a.h5 "$work/link.h5"
    run eval --model "$model" --text "$tokens" --ctx 8 --scheme q4_0 --threads 1 -o "$work/link.h5" --force \
      || fail "eval --force through a link failed"
    [ -L "$work/link.h5" ] || fail "the link was replaced by a regular file"
    cmp -s "$work/a.h5" "$work/before.h5" && fail "--force should have replaced the results through the link"
    ls "$work" | grep -q partial && fail "a partial file or folder was left behind"
    ;;
  *) echo "outputs_case.sh: unknown mode $mode" >&2; exit 2 ;;
esac
echo "ok: $mode"
