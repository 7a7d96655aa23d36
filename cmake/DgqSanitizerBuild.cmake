# dgq_sanitizer_drivers_unoptimised(TARGET...): in the sanitizer build (DGQ_FUZZ,
# tools/fuzz-common.sh), the targets' own files compile at -O0 instead of the build's -O1.
#
# Why: those targets (the CLI, the test binaries, the fixture maker) drive the code under test,
# dgq_sim and the reference, which keep -O1 and all of the instrumentation; their own code only
# parses arguments, builds inputs and compares results. At -O0 their big unity files compile
# 2.4x faster (test_sim's first batch: 38.7 s -> 16.3 s), on the CI's critical path
# (docs/robustness.md, "How long CI takes"). ASan and UBSan still instrument them.
function(dgq_sanitizer_drivers_unoptimised)
  if(NOT DGQ_FUZZ)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE -O0)
  endforeach()
endfunction()
