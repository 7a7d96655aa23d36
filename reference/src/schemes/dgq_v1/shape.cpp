#include "shape.hpp"

#include <cstdint>
#include <string>

#include "dgq/errors.hpp"

namespace dgq::detail {

void check_shape(ConstTensor x) {
  if (x.tokens < 0 || x.tokens > static_cast<std::int64_t>(UINT32_MAX))
    throw InputError("tokens=" + std::to_string(x.tokens) + " is out of range: expected [0, 4294967295]");
  if (x.channels < 1) throw InputError("channels=" + std::to_string(x.channels) + " is out of range: expected >= 1");
  if (x.dtype != DType::f16 && x.dtype != DType::bf16 && x.dtype != DType::f32)
    throw InputError("unknown dtype code " + std::to_string(static_cast<int>(x.dtype)));
  if (x.tokens > 0 && x.data == nullptr) throw InputError("tensor data is missing (null pointer)");
}

}  // namespace dgq::detail
