#pragma once
#include "dgq/tensor.hpp"

namespace dgq::detail {
// Shapes DGQ accepts: tokens in [0, 2^32 - 1] (edges are stored as uint32), channels >= 1,
// data present when there are elements. Throws InputError naming the offending value.
void check_shape(ConstTensor x);
}  // namespace dgq::detail
