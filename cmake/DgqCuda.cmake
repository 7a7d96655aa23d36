# DGQ_CUDA=AUTO builds the CUDA library whenever nvcc is found (CI has nvcc but no GPU),
# ON requires it, OFF skips it.
set(DGQ_CUDA_ENABLED OFF)
if(NOT DGQ_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # With a GPU visible, build for it. Without one (CI, a login node) build sm_80 code plus
      # compute_80 PTX, which the driver compiles for any later GPU (sm_90 included) at first
      # launch: one architecture proves the code compiles at half the CPU time of two, and
      # CI's 2 cores are its bottleneck (docs/robustness.md, "How long CI takes").
      execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _dgq_smi_rc OUTPUT_VARIABLE _dgq_smi_out
                      ERROR_QUIET)
      if(_dgq_smi_rc EQUAL 0 AND _dgq_smi_out MATCHES "GPU ")
        set(CMAKE_CUDA_ARCHITECTURES native)
      else()
        set(CMAKE_CUDA_ARCHITECTURES 80)
      endif()
      message(STATUS "dgq: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (set CMAKE_CUDA_ARCHITECTURES for others)")
    endif()
    enable_language(CUDA)
    # No CMAKE_CUDA_STANDARD: CMake 3.25 does not know nvcc 13's C++20 dialect; cuda/
    # passes -std=c++20 itself.
    set(DGQ_CUDA_ENABLED ON)
  elseif(DGQ_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DGQ_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    message(STATUS "dgq: nvcc not found, the CUDA implementation is not built (DGQ_CUDA=AUTO)")
  endif()
endif()

# The exactness flags of every target that compiles dgq's device code (cuda/'s library and the
# .cu files of tests/gpu, which run its device helpers): no contraction into fma unless the spec
# names it, IEEE division and square root, denormals kept, no fast-math; and C++20 by hand, since
# CMake 3.25 does not know nvcc 13's flag for it (its CUDA_STANDARD property is cleared).
function(dgq_cuda_exact_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-fmad=false --prec-div=true --prec-sqrt=true --ftz=false -std=c++20>)
  set_property(TARGET ${target} PROPERTY CUDA_STANDARD)
  set_property(TARGET ${target} PROPERTY CUDA_STANDARD_REQUIRED OFF)
endfunction()
