#pragma once
// The CUDA implementation of DGQ v1: same bytes as the CPU reference (docs/spec.md),
// differentially tested against it (tests/gpu).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/dgq.hpp"
#include "dgq/scheme.hpp"

namespace dgq::cuda {

// True when a CUDA device can be used; otherwise why (driver missing, no device, ...).
bool device_available(std::string* why = nullptr);

// Host convenience calls, batched: every unit (layer x head x K/V) in one launch sequence.
// Throws dgq::Error with the CUDA error string on failure (no device, OOM, bad shape).
std::vector<DgqEncoded> encode_batch(const std::vector<ConstTensor>& units, const DgqParams& p);
void decode_batch(const std::vector<DgqEncoded>& encoded, const std::vector<MutTensor>& out);

// A Scheme whose DGQ compress/decompress run on the GPU ("dgq:..." specs only).
std::unique_ptr<Scheme> make_cuda_scheme(std::string_view spec);

}  // namespace dgq::cuda
