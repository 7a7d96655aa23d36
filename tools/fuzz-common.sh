# Sourced by tools/sanitize-and-fuzz.sh and tools/fuzz-explore.sh (not run alone): what the
# two fuzz scripts share besides the classifier (tools/fuzz-classify.sh): the sanitizer build,
# the targets, the regression inputs of each, and the sanitizer settings. Expects $root (the
# repository).

# sanitize_build BUILD_DIR JOBS TARGET...: after enter_fuzz_stage BUILD_DIR, configures BUILD_DIR as the clang ASan + UBSan build
# (-fno-sanitize-recover=all; -fsanitize=fuzzer-no-link, so that one build serves the tests and
# the fuzz targets) and builds the given targets in it. Two exceptions keep fuzz runs
# reproducible (docs/robustness.md): UBSan's vptr check is off (it caches dynamic-type checks in
# a table indexed by vtable addresses, so under ASLR the instrumented code took its cache-hit or
# its cache-miss edge depending on where the libraries were loaded: libFuzzer saw different
# coverage for the same input in about 1 run in 40), and the files in
# tools/fuzz-coverage-ignorelist.txt carry no coverage instrumentation.
# Debug information is line tables only (-gline-tables-only): the reports' stacks keep their
# functions, files and lines, and the build, which CI pays for on every run, takes less time
# than with full -g (docs/robustness.md, "How long CI takes").
sanitize_build() {
  local build=$1 jobs=$2
  shift 2
  local sanitizers="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer"
  # Configured and compiled through the fixed stage folder (enter_fuzz_stage, below): its paths
  # are the only ones the compiler sees, so none of the checkout's or the build's real paths
  # reach the binaries (ASan's global and stack descriptions, lambda names in UBSan's type
  # descriptors, unity files' #include lines: -ffile-prefix-map reaches none of these in clang
  # 14, and fuzz binaries built in two checkouts differed in those bytes and fuzzed differently:
  # docs/robustness.md, "Sanitizers and fuzzing in CI"). The prefix maps still shorten the file
  # names of reports and line tables.
  local src=$stage/r bin=$stage/b
  local coverage="-fsanitize=fuzzer-no-link -fsanitize-coverage-ignorelist=$src/tools/fuzz-coverage-ignorelist.txt"
  local prefix_maps="-ffile-prefix-map=$src=. -ffile-prefix-map=$bin=build"
  # A build folder first configured from another path (before the stage, or by hand) keeps that
  # source path in its cache: configure it afresh (its objects are rebuilt once).
  if [ -f "$build/CMakeCache.txt" ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$build/CMakeCache.txt"; then
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
  cmake -S "$src" -B "$bin" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only $sanitizers $coverage $prefix_maps" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" -DDGQ_CUDA=OFF -DDGQ_BENCH=OFF -DDGQ_FUZZ=ON -DDGQ_ONEDNN=OFF >/dev/null
  cmake --build "$bin" -j "$jobs" --target "$@"
}

# enter_fuzz_stage BUILD_DIR: the fixed folder through which the sanitizer build is configured
# and every fuzz process sees the checkout (r) and the build (b), so that neither the binaries
# nor what a process sees depend on where the checkout is (docs/robustness.md, "Sanitizers and
# fuzzing in CI"): /tmp/dgq-fuzz-stage-UID, held (flock) until the script exits, so a second run
# on the machine waits for the first. Sets stage and fuzz_cwd (fuzz_run runs every libFuzzer
# process there with a fixed environment) and points LSAN_OPTIONS at a copy of the suppressions
# inside the stage.
enter_fuzz_stage() {
  local build=$1
  mkdir -p "$build"
  stage=/tmp/dgq-fuzz-stage-$(id -u)
  exec {stage_lock}>"$stage.lock"
  flock "$stage_lock"
  rm -rf "$stage" && mkdir -p "$stage"
  trap 'rm -rf "$stage"' EXIT
  ln -s "$root" "$stage/r"
  ln -s "$(realpath "$build")" "$stage/b"
  fuzz_cwd=$stage
  cp "$root/tools/lsan-suppressions.txt" "$stage/lsan-suppressions.txt"
  LSAN_OPTIONS=${LSAN_OPTIONS//"$root/tools/lsan-suppressions.txt"/"$stage/lsan-suppressions.txt"}
}

# The libFuzzer targets (tests/fuzz/<target>.cpp), in the order the scripts run them.
fuzz_targets=(fuzz_trace fuzz_compressed fuzz_results fuzz_model fuzz_gguf fuzz_tokens fuzz_base_logits fuzz_sweep_toml)

# fuzz_regression_inputs TARGET: prints the target's regression inputs, one path a line,
# sorted by path (LC_ALL=C) so that every machine lists them in the same order:
#   - the committed corpus, tests/fuzz/corpus/TARGET/ (generated seed-* files and the inputs
#     kept by tools/fuzz-explore.sh, named by sha1);
#   - for the HDF5 targets, the shipped fixtures tests/fixtures/hostile/*.h5 and
#     tests/fixtures/libhdf5/*.h5, read in place. Left out: the *-loop.h5 reproducers, on which
#     libhdf5 never returns, so each would cost its whole CPU budget twice (the replay and the
#     classification) in every target, on every run; ctest covers them with dgq's own read
#     deadline (cli:error:libhdf5-*-global-heap-loop, docs/robustness.md);
#   - for fuzz_sweep_toml, the shipped sweep configs experiments/*.toml.
fuzz_regression_inputs() {
  local target=$1
  {
    find "$root/tests/fuzz/corpus/$target" -type f 2>/dev/null || true
    if [ "$target" = fuzz_sweep_toml ]; then
      find "$root/experiments" -maxdepth 1 -name '*.toml'
    else
      find "$root/tests/fixtures/hostile" "$root/tests/fixtures/libhdf5" -maxdepth 1 -name '*.h5' ! -name '*-loop.h5'
    fi
  } | LC_ALL=C sort
}

# Sanitizer settings of the fuzz runs and the replays (the ctest stage before them overrides
# ASAN_OPTIONS with the fast unwinder: tools/sanitize-and-fuzz.sh).
# fast_unwind_on_malloc=0: full allocation stacks through libhdf5 (built without frame
# pointers), which the leak suppressions (tools/lsan-suppressions.txt) need to match.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:fast_unwind_on_malloc=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tools/lsan-suppressions.txt:print_suppressions=0}
# The deadline of the child that walks every file's metadata before dgq reads it
# (h5::open_file_readonly, docs/robustness.md "Hostile HDF5 isolated"): wall-clock seconds, in
# the child, so neither libFuzzer's -timeout nor the CPU-time budget below sees it. 1 s (the
# least it takes), not 60: libhdf5 loops forever in the child on some mutated global heaps, and
# each such input costs the whole deadline (one course of fuzz_trace met 28 of them: 147 s at
# 5 s each); a walk of these small files takes milliseconds, so 1 s is still two orders of
# magnitude above what load could make of it.
fuzz_check_timeout=${DGQ_HDF5_CHECK_TIMEOUT:-1}

# fuzz_run COMMAND...: runs a fuzz target (a fuzz run, a replay, a classification) with
# allocator_may_return_null=1 added: a malloc of an absurd size (libhdf5 allocates sizes it read
# from the file) then returns NULL, as it does without ASan, and libhdf5 reports an error
# instead of ASan aborting with allocation-size-too-big, which no release build would do. dgq's
# own allocations still fail loudly: operator new throws std::bad_alloc, which no target catches.
# It also ends every stack frame with its module (<PATH>), which tools/fuzz-classify.sh reads,
# and keeps allocation stacks to 10 frames (malloc_context_size; 30 by default): with
# fast_unwind_on_malloc=0 every allocation is unwound frame by frame, which was half of an
# execution's CPU time (45 instead of 80 ms for a seed trace), and the leak suppressions'
# H5F_open / H5O_protect sit within 10 frames of the allocation (results-open-leak.h5 stays
# suppressed).
# Every fuzz run, replay and classification also runs with address-space layout randomisation
# off (setarch -R): libhdf5 reads memory it never wrote on corrupt inputs (freed or
# uninitialised heap, which can hold pointers), so with ASLR on, the same inputs in the same
# order took different paths in about one run in two (docs/robustness.md, "Sanitizers and fuzzing
# in CI"). Where setarch -R is refused (a sandbox that forbids personality(2)), the runs go on with
# ASLR and the script says that their counts may differ between runs.
fuzz_stack_format="stack_trace_format='    #%n %p %F %L <%m>'"
fuzz_no_aslr=(setarch "$(uname -m)" -R)
if ! "${fuzz_no_aslr[@]}" true 2>/dev/null; then
  echo "fuzz: warning: setarch -R is refused here, fuzz runs keep ASLR and their counts may vary between runs" >&2
  fuzz_no_aslr=()
fi
# With fuzz_cwd set (tools/sanitize-and-fuzz.sh: its fixed stage folder), the process runs there
# with only the environment below (env -i): without ASLR the stack starts where the environment
# ends, so an environment that spells the checkout's path (PWD, the suppressions file) moves
# every stack address, and libFuzzer's comparison tracing feeds compared addresses into its
# mutations (docs/robustness.md, "Sanitizers and fuzzing in CI").
fuzz_run() {
  (
    local clean=()
    if [ -n "${fuzz_cwd:-}" ]; then
      cd "$fuzz_cwd" || exit 1
      clean=(-i PATH=/usr/local/bin:/usr/bin:/bin PWD="$fuzz_cwd" LSAN_OPTIONS="$LSAN_OPTIONS")
    fi
    env "${clean[@]}" ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1:quarantine_size_mb=16:$fuzz_stack_format" \
      UBSAN_OPTIONS="$UBSAN_OPTIONS:$fuzz_stack_format" \
      DGQ_HDF5_CHECK_TIMEOUT=$fuzz_check_timeout DGQ_FUZZ_CPU_SECONDS=$fuzz_cpu_seconds "${fuzz_no_aslr[@]}" "$@"
  )
}

# Limits of every fuzz run and replay: an allocation or a resident size above 3 GB is a finding;
# an input that uses more than DGQ_FUZZ_CPU_SECONDS of CPU time is aborted and saved as crash-*
# (tests/fuzz/cpu_budget.hpp: CPU time does not grow with the machine's load); an input that runs
# past fuzz_timeout seconds of wall-clock time is saved as timeout-*, a safety net for what does
# not spend CPU (waiting). Both are far above what any input needs here (the slowest regression
# and corpus inputs take under 0.1 s), so load never decides what hangs.
fuzz_cpu_seconds=${DGQ_FUZZ_CPU_SECONDS:-5}
fuzz_timeout=${fuzz_timeout:-60}
fuzz_limits=(-timeout="$fuzz_timeout" -rss_limit_mb=3072 -malloc_limit_mb=3072)
