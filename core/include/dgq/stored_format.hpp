#pragma once
// The format of a stored head's codes as the decode kernels read them (cpu/'s and cuda/'s decode
// attention, through dgq/kv_block_rules.hpp): 32 values per block, either ggml's blocks with
// their fp16 scale inside (q8_0, q4_0, iq4_nl) or codes whose ranges live beside them, one per
// span of tokens (dgq: DGQ v1's int8 codes; uniform b: unsigned b-bit codes, dgq2's, KIVI's and
// vLLM's preset values; codebook b: b-bit indices into a codebook, TurboQuant's). One enum for
// every backend, so that a format means the same bytes on the CPU and the GPU.
#include <cstdint>

namespace dgq {

enum class StoredFormat : std::uint8_t {
  q8_0,
  q4_0,
  iq4_nl,
  dgq,
  uniform2,
  uniform3,
  uniform4,
  uniform8,
  codebook2,
  codebook3,
  codebook4
};

}  // namespace dgq
