#pragma once
// The `rot` spec modifier, taken by make_scheme for every family (registry.cpp).
#include <memory>
#include <string>

#include "dgq/scheme.hpp"

namespace dgq::schemes {

// "none": inner unchanged; "hadamard": inner behind llama.cpp's rotation (rotation_scheme.cpp).
// Anything else: ParameterError naming the value.
std::unique_ptr<Scheme> apply_rotation(std::unique_ptr<Scheme> inner, const std::string& rotation);

}  // namespace dgq::schemes
