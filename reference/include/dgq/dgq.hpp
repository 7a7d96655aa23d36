#pragma once
// DGQ v1, the CPU reference. docs/spec.md defines every byte these functions produce;
// rule numbers below refer to it. The parameter and stored-layout types (DgqV1Params,
// DgqV1Encoded) are the core's, shared with every backend: dgq/dgq_v1_params.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/tensor.hpp"

namespace dgq {

// Intermediate results, exposed so each rule can be tested on its own (and compared with
// the CUDA kernels stage by stage).
struct DgqAnalysis {
  std::vector<float> token_var;      // rule 1: v_t = max(var_t, min_var), tokens entries
  std::vector<float> block_mean;     // rule 2: one per block of win tokens
  std::vector<float> block_ratio;    // rule 3: r_b for b = 1..blocks-1 at index b-1
  int budget = 0;                    // rule 4
  std::vector<std::uint32_t> edges;  // rule 5 (rule C3 with boundaries=online): accepted interior edges, increasing
};

// Rules 1-5 on fp32 data ([tokens][channels] row-major).
DgqAnalysis dgq_analyze(const float* x, std::int64_t tokens, std::int64_t channels, const DgqV1Params& p);

// The canonical sums of rule 1 over one row (exposed for tests and the CUDA comparison).
float canonical_sum(const float* x, std::int64_t n);
float canonical_sum_of_squares(const float* x, std::int64_t n, float mean);

// Full encode (rules 1-8). Throws InputError for NaN/Inf (naming token and channel) or a
// segment whose value range overflows fp32; ParameterError for bad params.
DgqV1Encoded dgq_encode(ConstTensor x, const DgqV1Params& p);
// The same bytes written into `out`, reusing its vectors' capacity: encoding tensors of one
// size over and over allocates nothing. Throws as dgq_encode; `out` is then unspecified.
void dgq_encode_into(ConstTensor x, const DgqV1Params& p, DgqV1Encoded& out);

// Decode into out (same shape, out.dtype == enc.dtype). Uses only the stored parts: bitmap
// and in-band modes recover the boundaries from the bitmap or the markers.
void dgq_decode(const DgqV1Encoded& enc, MutTensor out);

}  // namespace dgq

namespace dgq {
// Every unit (layer x head x K/V) encoded independently, OpenMP over units; the bytes do not
// depend on the thread count.
std::vector<DgqV1Encoded> dgq_encode_batch(const std::vector<ConstTensor>& units, const DgqV1Params& p);
// The same into `out` (resized to units.size()), reusing each entry's buffers (dgq_encode_into).
void dgq_encode_batch_into(const std::vector<ConstTensor>& units, const DgqV1Params& p, std::vector<DgqV1Encoded>& out);
}  // namespace dgq
