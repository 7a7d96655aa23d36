#pragma once
// The checks every scheme's decompress makes on a Compressed before reading a byte, in the
// same words for every scheme and backend: that it was made by this scheme, that the output
// matches its shape and dtype, and that each part holds exactly the bytes its layout says.
#include <cstdint>
#include <string_view>

#include "dgq/scheme.hpp"

namespace dgq::schemes {

// Checks that c was made by the scheme with this spec and that out matches its shape and
// dtype; throws InputError otherwise.
void check_decompress_target(const Compressed& c, MutTensor out, std::string_view spec);

// The part called name, which must hold exactly expected bytes; throws InputError
// "<scheme>: part 'codes' has N bytes, expected M" (or "... is missing").
const Part& expect_part(const Compressed& c, std::string_view name, std::uint64_t expected);

}  // namespace dgq::schemes
