#pragma once
// llama.cpp's KV-cache rotation (src/llama-kv-cache.cpp, PR #21038): every row is cut into
// blocks of n channels and each block is multiplied by the orthonormal Walsh-Hadamard matrix
// H_n (Sylvester order, entries +-1/sqrt(n)); H_n is symmetric and H_n H_n = I, so the same
// call rotates back. Arithmetic: dgq::rules::hadamard_butterfly / hadamard_scale (docs/spec.md,
// "Hadamard rotation"). A scheme uses it through the spec modifier `rot=hadamard`.
#include <cstdint>

namespace dgq::kernels {
struct CpuKernels;
}

namespace dgq {

// Rotates row[0 .. channels) in place, block by block; block is a power of two >= 2 dividing
// channels (rules::hadamard_block gives llama.cpp's choice).
void hadamard_rotate_row(float* row, std::int64_t channels, int block);
// The same with k's Walsh-Hadamard transform (the reference's above).
void hadamard_rotate_row(const kernels::CpuKernels& k, float* row, std::int64_t channels, int block);

}  // namespace dgq
