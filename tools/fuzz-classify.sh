# Sourced by tools/sanitize-and-fuzz.sh and tools/fuzz-explore.sh (not run alone): the one rule
# by which every input a fuzz run saves (crash-*, leak-*, timeout-*, oom-*) is judged
# (docs/robustness.md, "Sanitizers and fuzzing in CI"). Expects tools/fuzz-common.sh sourced.
#
# The input is run again, alone, in a fresh process of the same target with the same limits:
#   (c) it exits 0: "not reproducible alone" (what failed depended on what earlier inputs did to
#       libhdf5's global state, or on the run itself): recorded, not a failure;
#   otherwise, in the report, each stack's first frame outside the sanitizer runtime, libFuzzer,
#   libc and the shared C++ runtime decides (the first stack of a crash, timeout or
#   out-of-memory report; every stack of a leak report, one per leaked block):
#   (b) every deciding frame is inside libhdf5: a known libhdf5 defect: recorded (the input
#       is kept and its path printed), not a failure;
#   (a) any deciding frame elsewhere (dgq's code, the fuzz target), or a failure without any
#       stack (a resident-size out-of-memory, an exit): a FINDING, which fails the script.
# Leaks that LeakSanitizer reports when a process exits after its last input belong to no input
# (libFuzzer saves the empty one); that report is judged as it stands, by (a) and (b).

# Every frame of a report ends with its module, <PATH> (fuzz_stack_format, set by fuzz_run in
# tools/fuzz-common.sh), so that a frame is placed by the binary or library it is in, whatever
# the symbolizer knows about it (glibc's frames, for one, come with or without source paths).
# The machinery around the code under test: the sanitizer runtime and libFuzzer (linked into
# the target: told by function name or source path), the fuzz targets' CPU-time limit
# (tests/fuzz/cpu_budget.hpp), and the C and C++ runtime libraries.
fuzz_runtime_frame='compiler-rt/lib/| in (dgq_fuzz_cpu_budget_spent|__asan|__lsan|__ubsan|__sanitizer|__interceptor_|fuzzer::|malloc |calloc |realloc |free |operator new|operator delete)|<(/[^>]*/)?(libc|libm|libstdc\+\+|libgcc_s|libpthread|ld-linux[^>/]*)\.so[^>/]*>$'
fuzz_libhdf5_frame='<(/[^>]*/)?libhdf5[^>/]*>$'

# fuzz_deciding_frames LOG: prints the deciding frame of each stack that counts (see above).
fuzz_deciding_frames() {
  awk -v runtime="$fuzz_runtime_frame" '
    /LeakSanitizer: detected memory leaks/ { leak = 1 }
    /^ *#[0-9]+ 0x/ {
      if (!in_stack) { in_stack = 1; stacks++; decided = 0 }
      if (!decided && $0 !~ runtime && (leak || stacks == 1)) { print; decided = 1 }
      next
    }
    { in_stack = 0 }
  ' "$1"
}

# fuzz_entry_frame LOG: the outermost frame of the libhdf5 frames that the first stack's
# deciding frame starts (for an input out of time: the libhdf5 call dgq made, e.g. H5Aread; the
# innermost frame is wherever the CPU-time limit happened to interrupt the loop, which varies).
fuzz_entry_frame() {
  awk -v runtime="$fuzz_runtime_frame" -v hdf5="$fuzz_libhdf5_frame" '
    /^ *#[0-9]+ 0x/ {
      if (!started) { if ($0 ~ runtime) next; started = 1 }
      if ($0 ~ hdf5 || $0 ~ runtime) { if ($0 ~ hdf5) entry = $0; next }
      exit
    }
    started { exit }
    END { if (entry != "") print entry }
  ' "$1"
}

# A frame for people: no number, address, build id or module suffix; library paths cut to
# the library's name (the offset kept: frames without a symbol are told apart by it).
fuzz_frame_text() {
  sed -E -e 's/^ *#[0-9]+ 0x[0-9a-f]+ +(in )?//' -e 's/ <[^>]*>$//' -e 's/ \(BuildId: [0-9a-f]+\)//' \
    -e 's#\(/([^ )]*/)?([^/ )]+\+0x[0-9a-f]+)\)#(\2)#' -e "s#$root/##g"
}

# fuzz_judge_report LOG RC: applies the frame rule to the report in LOG of a process that
# exited with RC != 0; sets fuzz_class (finding | libhdf5), fuzz_where (the deciding frame, or
# what happened instead) and fuzz_hang (1 when the input ran out of time: CPU budget or timeout).
fuzz_judge_report() {
  local log=$1 rc=$2 frames
  fuzz_hang=0
  if grep -qE 'used up its CPU-time budget|ERROR: libFuzzer: timeout' "$log"; then fuzz_hang=1; fi
  frames=$(fuzz_deciding_frames "$log")
  if [ -z "$frames" ]; then
    fuzz_class=finding fuzz_where="exit code $rc without a stack"
  elif grep -qvE "$fuzz_libhdf5_frame" <<<"$frames"; then
    fuzz_class=finding fuzz_where=$(grep -vE "$fuzz_libhdf5_frame" <<<"$frames" | head -1 | fuzz_frame_text)
  else
    fuzz_class=libhdf5 fuzz_where=$(head -1 <<<"$frames" | fuzz_frame_text)
  fi
  if [ "$fuzz_hang" = 1 ] && [ "$fuzz_class" = libhdf5 ]; then
    fuzz_where="out of time inside $(fuzz_entry_frame "$log" | fuzz_frame_text)"
  elif [ "$fuzz_hang" = 1 ]; then
    fuzz_where="out of time at $fuzz_where"
  fi
}

# fuzz_classify BINARY INPUT LOG: runs INPUT alone (its output goes to LOG) and judges it: sets
# fuzz_class to finding | libhdf5 | not-reproducible, and fuzz_where and fuzz_hang as above.
fuzz_classify() {
  local binary=$1 input=$2 log=$3 rc=0
  fuzz_run "$binary" "${fuzz_limits[@]}" "$input" >"$log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    fuzz_class=not-reproducible fuzz_where="exits 0 when run alone" fuzz_hang=0
    return
  fi
  fuzz_judge_report "$log" "$rc"
}

# fuzz_exit_leak LOG: true when LOG ends with LeakSanitizer's report at the process's exit,
# after libFuzzer finished its runs ("Done N runs"): leaks no single input can be blamed for
# (libFuzzer then saves the empty input). Such a report is judged as it stands (fuzz_judge_report).
fuzz_exit_leak() {
  awk '/^Done [0-9]+ runs/ { done = 1 } done && /LeakSanitizer: detected memory leaks/ { found = 1 } END { exit !found }' "$1"
}
