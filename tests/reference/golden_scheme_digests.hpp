#pragma once
// Golden digests of a family's bytes: each case compresses the same f16 data (splitmix64 values of
// test_dgq_support.hpp, 37 tokens, seed 2026) as K and compares parts_digest (FNV-1a 64 over every
// part in order) with the pinned value. DGQ_PRINT_GOLDEN=1 prints the digests instead of only
// checking them, to re-pin after a deliberate format change.
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <string>

#include "dgq/scheme.hpp"
#include "test_dgq_support.hpp"
#include "test_scheme_support.hpp"

namespace dgq::test {

struct GoldenSchemeCase {
  const char* spec;
  std::int64_t channels;
  const char* digest;
};

inline void check_golden_scheme_digests(std::initializer_list<GoldenSchemeCase> cases) {
  const bool print = std::getenv("DGQ_PRINT_GOLDEN") != nullptr;
  for (const GoldenSchemeCase& g : cases) {
    CAPTURE(g.spec, g.channels);
    const OwnedTensor x = random_tensor(DType::f16, 37, g.channels, 2026);
    const std::string digest = parts_digest(make_scheme(g.spec)->compress(x.view(), TensorRole::key));
    if (print) std::cout << g.spec << " " << g.channels << " " << digest << "\n";
    CHECK(digest == g.digest);
  }
}

// The same check for cases that each name their own input: make(stream, dtype) builds the tensor
// (a family's own golden input), and the case says the role it is compressed as.
struct GoldenTensorCase {
  const char* spec;
  DType dtype;
  TensorRole role;
  std::uint64_t stream;
  const char* digest;
};

template <class MakeTensor>
void check_golden_tensor_digests(std::initializer_list<GoldenTensorCase> cases, MakeTensor make) {
  const bool print = std::getenv("DGQ_PRINT_GOLDEN") != nullptr;
  for (const GoldenTensorCase& g : cases) {
    CAPTURE(g.spec, dtype_name(g.dtype), role_name(g.role));
    const OwnedTensor x = make(g.stream, g.dtype);
    const std::string digest = parts_digest(make_scheme(g.spec)->compress(x.view(), g.role));
    if (print) std::cout << g.spec << " " << dtype_name(g.dtype) << " " << role_name(g.role) << " " << digest << "\n";
    CHECK(digest == g.digest);
  }
}

}  // namespace dgq::test
