if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # the policies of the project (IN_LIST) when run with -P
endif()

# The never-rules of the layout (docs/architecture.md). The three implementations meet only
# through the core and the registry (and, for cpu/, the reference's public headers):
#   - cuda/ includes nothing of the CPU reference (reference/include or reference/src) and
#     dgq_cuda does not link dgq_reference;
#   - reference/ includes nothing of cpu/ or cuda/: the oracle depends on no implementation;
#   - cpu/ and cuda/ do not include each other;
#   - reference/ holds no SIMD intrinsics (immintrin.h, __AVX*, _mm256_*): it is the rules
#     written out; vectorized code lives in cpu/.
# And the direction between the simulator's libraries (sim/<name>/, sim/CMakeLists.txt):
#   - a library includes the public headers (dgq/sim/<other>/...) only of the libraries below
#     it in DGQ_SIM_LIBRARY_USES, never another library's private headers (its src/), never cli/.
# And the size of a file: no C++, CUDA, Python or shell source over DGQ_MAX_SOURCE_LINES lines
# (tests included; test data under tests/fixtures and notebooks, whose JSON lines are not source
# lines, are not counted), except the files listed in DGQ_LONG_FILES_PENDING.
# Checked at configure time (cuda/CMakeLists.txt, cpu/CMakeLists.txt) and by the ctests
# layout:*, which run this file as a script:
#   cmake -DCUDA_DIR=... -DREFERENCE_DIR=... -P cmake/DgqLayoutCheck.cmake   (cuda/ vs reference/)
#   cmake -DRULES=all -DSOURCE_DIR=... -P cmake/DgqLayoutCheck.cmake          (every rule)
#   cmake -DRULES=no-simd -DREFERENCE_DIR=... -P ...                          (one rule)
#   cmake -DRULES=sim-libraries -DSIM_DIR=... -P ...                          (one rule)
#   cmake -DRULES=file-length -DSOURCE_DIR=... -P ...                          (one rule)

# The #include lines of every source under dir that name a header of `other` (by its path
# under other/include or other/src, as "dgq/dgq.hpp" or "schemes/tensor_io.hpp") or a relative
# path into other/ (named by other_name, e.g. "reference"); appended to `violations` as
# "\n  <path>: #include \"<header>\"".
function(dgq_includes_of dir other other_name out_var)
  file(GLOB_RECURSE other_headers RELATIVE "${other}/include" "${other}/include/*.hpp" "${other}/include/*.cuh")
  file(GLOB_RECURSE private_headers RELATIVE "${other}/src" "${other}/src/*.hpp" "${other}/src/*.cuh")
  list(APPEND other_headers ${private_headers})
  file(GLOB_RECURSE files "${dir}/*.cu" "${dir}/*.cuh" "${dir}/*.cpp" "${dir}/*.hpp")
  set(violations "")
  foreach(f IN LISTS files)
    file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*$" "\\1" header "${line}")
      if(header MATCHES "(^|/)${other_name}/" OR header IN_LIST other_headers)
        file(RELATIVE_PATH rel "${dir}/.." "${f}")
        string(APPEND violations "\n  ${rel}: #include \"${header}\"")
      endif()
    endforeach()
  endforeach()
  set(${out_var} "${violations}" PARENT_SCOPE)
endfunction()

# Fails (FATAL_ERROR) naming the file, line and header for every #include in cuda_dir that
# names a header of reference_dir.
function(dgq_check_cuda_independent cuda_dir reference_dir)
  dgq_includes_of("${cuda_dir}" "${reference_dir}" reference violations)
  if(violations)
    message(FATAL_ERROR "cuda/ must include nothing of the CPU reference (docs/architecture.md); found:${violations}")
  endif()
endfunction()

# reference/ includes nothing of cpu/ or cuda/.
function(dgq_check_reference_independent reference_dir cpu_dir cuda_dir)
  dgq_includes_of("${reference_dir}" "${cpu_dir}" cpu from_cpu)
  dgq_includes_of("${reference_dir}" "${cuda_dir}" cuda from_cuda)
  if(from_cpu OR from_cuda)
    message(FATAL_ERROR "reference/ must include nothing of cpu/ or cuda/ (docs/architecture.md); found:${from_cpu}${from_cuda}")
  endif()
endfunction()

# cpu/ and cuda/ do not include each other.
function(dgq_check_backends_apart cpu_dir cuda_dir)
  dgq_includes_of("${cpu_dir}" "${cuda_dir}" cuda cpu_to_cuda)
  dgq_includes_of("${cuda_dir}" "${cpu_dir}" cpu cuda_to_cpu)
  if(cpu_to_cuda OR cuda_to_cpu)
    message(FATAL_ERROR "cpu/ and cuda/ must not include each other (docs/architecture.md); found:${cpu_to_cuda}${cuda_to_cpu}")
  endif()
endfunction()

# reference/ holds no SIMD intrinsics: no immintrin.h (or another x86 intrinsics header), no
# branch on __AVX*/__F16C__/__FMA__, no _mm256_/_mm_ call. Plain loops the compiler may
# vectorize are fine (-ffp-contract=off keeps their bits).
function(dgq_check_no_simd reference_dir)
  file(GLOB_RECURSE files "${reference_dir}/*.cpp" "${reference_dir}/*.hpp")
  set(violations "")
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "[a-z]*intrin\\.h|__AVX|__F16C__|__FMA__|_mm256_|_mm_[a-z]")
    foreach(line IN LISTS lines)
      file(RELATIVE_PATH rel "${reference_dir}/.." "${f}")
      string(STRIP "${line}" line)
      string(APPEND violations "\n  ${rel}: ${line}")
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "reference/ must hold no SIMD code, which belongs in cpu/ (docs/architecture.md); found:${violations}")
  endif()
endfunction()

# Which simulator library may include which (the libraries each one links, directly or through
# another): "name:uses,uses". A library absent from the list may include none of the others;
# cli/, the command, may include them all and is included by none.
set(DGQ_SIM_LIBRARY_USES
    "metrics:"
    "files:metrics"
    "model:files,metrics"
    "synth:model,files,metrics"
    "device:"
    "replay:files,metrics"
    "eval:model,files,metrics"
    "export:files,metrics"
    "memory:model,files,metrics"
    "sweep:device,eval,replay,synth,model,files,metrics")

# Fails naming the file and header for every #include in a library of sim_dir that names a
# public header of a library it may not use (dgq/sim/<other>/...), a private header of another
# library (a path under sim_dir/<other>/src) or anything of cli/.
function(dgq_check_sim_libraries sim_dir)
  file(GLOB parts LIST_DIRECTORIES true RELATIVE "${sim_dir}" "${sim_dir}/*")
  set(libraries "")
  foreach(part IN LISTS parts)
    if(IS_DIRECTORY "${sim_dir}/${part}" AND NOT part STREQUAL "cli")
      list(APPEND libraries "${part}")
    endif()
  endforeach()
  set(violations "")
  foreach(library IN LISTS libraries)
    set(allowed "")
    foreach(entry IN LISTS DGQ_SIM_LIBRARY_USES)
      if(entry MATCHES "^${library}:(.*)$")
        string(REPLACE "," ";" allowed "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    set(foreign_private "")
    foreach(other IN LISTS libraries)
      if(NOT other STREQUAL library)
        file(GLOB_RECURSE headers RELATIVE "${sim_dir}/${other}/src" "${sim_dir}/${other}/src/*.hpp")
        list(APPEND foreign_private ${headers})
      endif()
    endforeach()
    file(GLOB_RECURSE own_private RELATIVE "${sim_dir}/${library}/src" "${sim_dir}/${library}/src/*.hpp")
    file(GLOB_RECURSE files "${sim_dir}/${library}/*.cpp" "${sim_dir}/${library}/*.hpp")
    foreach(f IN LISTS files)
      file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*$" "\\1" header "${line}")
        set(bad FALSE)
        if(header MATCHES "^dgq/sim/([a-z_]+)/")
          set(used "${CMAKE_MATCH_1}")
          if(NOT used STREQUAL library AND NOT used IN_LIST allowed)
            set(bad TRUE)
          endif()
        elseif(header MATCHES "(^|/)cli/" OR (header IN_LIST foreign_private AND NOT header IN_LIST own_private))
          set(bad TRUE)
        endif()
        if(bad)
          file(RELATIVE_PATH rel "${sim_dir}" "${f}")
          string(APPEND violations "\n  ${rel}: #include \"${header}\"")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "a simulator library includes a library it may not use (docs/architecture.md, "
                        "\"The simulator's libraries\"); found:${violations}")
  endif()
endfunction()

# The source size rule. DGQ_LONG_FILES_PENDING holds the files still over the limit that wait
# for their split at their seams; the change that splits one removes its entry, and an entry
# whose file is within the limit (or gone) fails the check, so the list cannot go stale.
# The limit; a fixture test passes a small one (-DDGQ_MAX_SOURCE_LINES=10) so that its too-long
# file stays short.
if(NOT DEFINED DGQ_MAX_SOURCE_LINES)
  set(DGQ_MAX_SOURCE_LINES 450)
endif()
set(DGQ_LONG_FILES_PENDING)
function(dgq_check_file_lengths source_dir)
  set(sources)
  foreach(top core reference cpu cuda sim bench tests tools experiments python)
    file(GLOB_RECURSE found LIST_DIRECTORIES false RELATIVE "${source_dir}"
         "${source_dir}/${top}/*.cpp" "${source_dir}/${top}/*.hpp" "${source_dir}/${top}/*.h"
         "${source_dir}/${top}/*.cu" "${source_dir}/${top}/*.cuh" "${source_dir}/${top}/*.py"
         "${source_dir}/${top}/*.sh")
    list(APPEND sources ${found})
  endforeach()
  list(FILTER sources EXCLUDE REGEX "^tests/fixtures/|/__pycache__/")
  set(violations "")
  foreach(path IN LISTS sources)
    file(READ "${source_dir}/${path}" text)
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines lines)
    if(path IN_LIST DGQ_LONG_FILES_PENDING)
      if(lines LESS_EQUAL DGQ_MAX_SOURCE_LINES)
        string(APPEND violations "\n  ${path}: ${lines} lines, within the limit: remove it from DGQ_LONG_FILES_PENDING")
      endif()
    elseif(lines GREATER DGQ_MAX_SOURCE_LINES)
      string(APPEND violations "\n  ${path}: ${lines} lines (at most ${DGQ_MAX_SOURCE_LINES}: split it at its seams)")
    endif()
  endforeach()
  foreach(path IN LISTS DGQ_LONG_FILES_PENDING)
    if(NOT EXISTS "${source_dir}/${path}")
      string(APPEND violations "\n  ${path}: listed in DGQ_LONG_FILES_PENDING but gone: remove the entry")
    endif()
  endforeach()
  if(violations)
    message(FATAL_ERROR "files over the size limit:${violations}")
  endif()
endfunction()

# dgq_cuda must not link dgq_reference (directly or through its archive).
function(dgq_check_cuda_links)
  foreach(target dgq_cuda dgq_cuda_archive)
    get_target_property(libs ${target} LINK_LIBRARIES)
    get_target_property(interface_libs ${target} INTERFACE_LINK_LIBRARIES)
    if("${libs};${interface_libs}" MATCHES "dgq_reference")
      message(FATAL_ERROR "${target} links the CPU reference (${libs};${interface_libs}); it may depend on dgq_core only")
    endif()
  endforeach()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  if(NOT DEFINED RULES)
    dgq_check_cuda_independent("${CUDA_DIR}" "${REFERENCE_DIR}")
    message(STATUS "cuda/ includes nothing of the CPU reference")
  elseif(RULES STREQUAL "all")
    dgq_check_cuda_independent("${SOURCE_DIR}/cuda" "${SOURCE_DIR}/reference")
    dgq_check_reference_independent("${SOURCE_DIR}/reference" "${SOURCE_DIR}/cpu" "${SOURCE_DIR}/cuda")
    dgq_check_backends_apart("${SOURCE_DIR}/cpu" "${SOURCE_DIR}/cuda")
    dgq_check_no_simd("${SOURCE_DIR}/reference")
    dgq_check_sim_libraries("${SOURCE_DIR}/sim")
    dgq_check_file_lengths("${SOURCE_DIR}")
    message(STATUS "layout: every rule holds")
  elseif(RULES STREQUAL "reference-independent")
    dgq_check_reference_independent("${REFERENCE_DIR}" "${CPU_DIR}" "${CUDA_DIR}")
  elseif(RULES STREQUAL "no-simd")
    dgq_check_no_simd("${REFERENCE_DIR}")
  elseif(RULES STREQUAL "sim-libraries")
    dgq_check_sim_libraries("${SIM_DIR}")
    message(STATUS "sim/: every library includes only the libraries it may use")
  elseif(RULES STREQUAL "file-length")
    dgq_check_file_lengths("${SOURCE_DIR}")
    message(STATUS "no source over ${DGQ_MAX_SOURCE_LINES} lines but the pending ones")
  else()
    message(FATAL_ERROR "RULES=${RULES}: expected all, reference-independent, no-simd, sim-libraries or file-length")
  endif()
endif()
