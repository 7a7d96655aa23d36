#pragma once
// dgq.Compressed's C++ object (scheme_bindings.cpp binds it; decode_attention_bindings.cpp reads
// it): the compressed tensor and the scheme that decompresses it (so decompress needs no spec).
#include <memory>

#include "dgq/scheme.hpp"

namespace dgq::python {

struct CompressedObject {
  Compressed c;
  std::shared_ptr<const Scheme> scheme;
};

}  // namespace dgq::python
