if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # the policies of the project (IN_LIST) when run with -P
endif()

# The never-rule of the layout (docs/architecture.md): cuda/ includes nothing of the CPU
# reference (reference/include or reference/src) and dgq_cuda does not link dgq_reference;
# the two backends share only the core and meet in tests/gpu. Checked at configure time
# (cuda/CMakeLists.txt) and by the ctest layout:cuda-independent, which runs this file as a
# script: cmake -DCUDA_DIR=... -DREFERENCE_DIR=... -P cmake/DgqLayoutCheck.cmake

# Fails (FATAL_ERROR) naming the file, line and header for every #include in cuda_dir that
# names a header of reference_dir, by path ("dgq/dgq.hpp", "schemes/tensor_io.hpp") or by a
# relative path into reference/.
function(dgq_check_cuda_independent cuda_dir reference_dir)
  file(GLOB_RECURSE reference_headers RELATIVE "${reference_dir}/include" "${reference_dir}/include/*.hpp")
  file(GLOB_RECURSE private_headers RELATIVE "${reference_dir}/src" "${reference_dir}/src/*.hpp")
  list(APPEND reference_headers ${private_headers})
  file(GLOB_RECURSE cuda_files "${cuda_dir}/*.cu" "${cuda_dir}/*.cuh" "${cuda_dir}/*.cpp" "${cuda_dir}/*.hpp")
  set(violations "")
  foreach(f IN LISTS cuda_files)
    file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*$" "\\1" header "${line}")
      if(header MATCHES "(^|/)reference/" OR header IN_LIST reference_headers)
        file(RELATIVE_PATH rel "${cuda_dir}/.." "${f}")
        string(APPEND violations "\n  ${rel}: #include \"${header}\"")
      endif()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "cuda/ must include nothing of the CPU reference (docs/architecture.md); found:${violations}")
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
  dgq_check_cuda_independent("${CUDA_DIR}" "${REFERENCE_DIR}")
  message(STATUS "cuda/ includes nothing of the CPU reference")
endif()
