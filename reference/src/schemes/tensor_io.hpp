#pragma once
// The boundary every scheme shares: input tensors are widened to fp32 (exactly) with a
// NaN/Inf check that names the element, and decoded fp32 values are narrowed to the output
// dtype with round-to-nearest-even (docs/spec.md rule 0).
#include <string_view>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"

namespace dgq::schemes {

// Row-major fp32 copy of x. Throws InputError "<scheme>: non-finite value nan at token t,
// channel d" for the first NaN/Inf.
std::vector<float> widen_checked(ConstTensor x, std::string_view scheme);

// The same NaN/Inf check without keeping the fp32 copy.
void check_finite(ConstTensor x, std::string_view scheme);

// Writes values (tokens*channels fp32) into out, rounding to out.dtype (nearest even); a
// finite value that would round to infinity saturates to the largest finite one.
void narrow_into(const float* values, MutTensor out);

// Checks that c was made by the scheme with this spec and that out matches its shape and
// dtype; throws InputError otherwise.
void check_decompress_target(const Compressed& c, MutTensor out, std::string_view spec);

// The part called name, which must hold exactly expected bytes; throws InputError
// "<scheme>: part 'codes' has N bytes, expected M" (or "... is missing").
const Part& expect_part(const Compressed& c, std::string_view name, std::uint64_t expected);

// A Compressed with the metadata of x filled in and no parts.
Compressed start_compressed(std::string spec, ConstTensor x, TensorRole role);

}  // namespace dgq::schemes
