#pragma once
// DGQ_HD marks the scalar rules that *are* the semantics (docs/spec.md): they are
// compiled once for the CPU reference and once for the CUDA kernels from this one source.
#if defined(__CUDACC__)
#define DGQ_HD __host__ __device__ __forceinline__
#else
#define DGQ_HD inline
#endif
