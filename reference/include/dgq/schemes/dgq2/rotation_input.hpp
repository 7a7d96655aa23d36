#pragma once
// Rule V0.2 (docs/spec.md, "DGQ v2"): the largest input the Hadamard rotation takes. Below it
// neither the rotation nor the decoder's inverse rotation of any value in a stored range can
// overflow fp32, so an overflow is always the input's fault and is reported at an input element.
#include <cstdint>

#include "dgq/tensor.hpp"

namespace dgq::schemes::dgq2 {

// e in the bound |x| < 2^e for an n-element block (n a power of two): 127 - ceil(1.5 * log2 n),
// 118 for n = 64.
int rotation_bound_exponent(int block);

// Throws InputError "dgq2: value <v> at token t, channel d exceeds the Hadamard rotation's input
// bound |x| < 2^e (n-channel blocks)" for the first element of rows [0, rows) of x, in row-major
// order, at or beyond the bound. x is finite (checked before, rule V0.1).
void check_rotation_input(ConstTensor x, std::int64_t rows, int block);

}  // namespace dgq::schemes::dgq2
