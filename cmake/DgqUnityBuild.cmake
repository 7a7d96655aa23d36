# Unity builds for the simulator, the CLI and the test binaries (DGQ_UNITY_BUILD, on by default).
#
# Why: CI builds everything twice on two cores (Release, then clang with ASan + UBSan + coverage),
# and most of that time went into parsing and instantiating the same headers again in every
# file: CLI11 2.1 (header-only, in each of the CLI's files), libhdf5, toml++ and Catch2. Compiled
# in batches of dgq_unity_batch_size files, each batch pays for them once (the measured effect
# is in docs/robustness.md, "How long CI takes").
#
# Not batched: the reference and the CUDA backend (they define the bytes; each file stays its own
# translation unit, as the spec's rules are written; the reference is batched in the sanitizer
# build only, where its tests do not run: reference/CMakeLists.txt), and sources that must stay separate:
# generated ones (rewritten at every commit), files with their own compile options, and
# isolated_metadata_check.cpp, which the fuzz build leaves without coverage instrumentation by
# file name (tools/fuzz-coverage-ignorelist.txt).
set(dgq_unity_batch_size 8)

# dgq_unity_build(TARGET...): batches the targets' sources when DGQ_UNITY_BUILD is on.
function(dgq_unity_build)
  if(NOT DGQ_UNITY_BUILD)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${dgq_unity_batch_size})
  endforeach()
endfunction()
