# The build identity of dgq (docs/results-format.md, "Provenance"), run at every build by the
# target dgq_build_info (sim/CMakeLists.txt):
#   cmake -DSOURCE_DIR=<checkout> -DOUTPUT=<generated .cpp> -P cmake/DgqBuildInfo.cmake
# It records `git rev-parse HEAD`, whether tracked files differ from HEAD
# (`git status --porcelain --untracked-files=no`) and, for such a dirty tree, the first 8 hex
# digits of the SHA-256 of `git diff HEAD`, so that two different dirty builds of one commit
# differ. Outside a git checkout of SOURCE_DIR (a tarball, no git) the commit is "unknown".
# OUTPUT is rewritten only when its content changes: an unchanged tree rebuilds nothing.
cmake_minimum_required(VERSION 3.25)

set(commit "unknown")
set(dirty 0)
set(diff_hash "")

find_program(DGQ_GIT git)
if(DGQ_GIT)
  # Only this project's own checkout counts: a tarball unpacked inside some other repository
  # must not borrow that repository's commit.
  execute_process(COMMAND "${DGQ_GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE toplevel RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  file(REAL_PATH "${SOURCE_DIR}" source_real)
  if(rc EQUAL 0 AND toplevel)
    file(REAL_PATH "${toplevel}" toplevel_real)
  endif()
  if(rc EQUAL 0 AND toplevel_real STREQUAL source_real)
    execute_process(COMMAND "${DGQ_GIT}" -C "${SOURCE_DIR}" rev-parse HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
      string(LENGTH "${head}" head_length)
      if(head_length EQUAL 40)
        set(commit "${head}")
      endif()
    endif()
  endif()
  if(NOT commit STREQUAL "unknown")
    execute_process(COMMAND "${DGQ_GIT}" -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE status RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0 OR NOT status STREQUAL "")
      set(dirty 1)
      execute_process(COMMAND "${DGQ_GIT}" -C "${SOURCE_DIR}" diff HEAD
                      OUTPUT_VARIABLE diff ERROR_QUIET)
      string(SHA256 diff_sha "${diff}")
      string(SUBSTRING "${diff_sha}" 0 8 diff_hash)
    endif()
  endif()
endif()

if(dirty)
  set(dirty_literal "true")
else()
  set(dirty_literal "false")
endif()
set(content "// Generated at build time by cmake/DgqBuildInfo.cmake; do not edit.
#include \"provenance/build_info_data.hpp\"

namespace dgq::sim::generated {
const char* const kBuildCommit = \"${commit}\";
const bool kBuildDirty = ${dirty_literal};
const char* const kBuildDiffHash = \"${diff_hash}\";
}  // namespace dgq::sim::generated
")

set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
