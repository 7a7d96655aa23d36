#pragma once
// Widening a stored tensor to fp32 for the replay's fp64 arithmetic. fp16 -> fp32 and
// bf16 -> fp32 are exact, so a fast path gives the same values as dgq::to_float.
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq::sim {
// Resizes out to tokens*channels and fills it with the exact fp32 values of t.
void widen_to_float(ConstTensor t, std::vector<float>& out);
}  // namespace dgq::sim
