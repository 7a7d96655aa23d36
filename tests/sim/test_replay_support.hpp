#pragma once
// Schemes with known, simple damage for the replay tests, independent of the real baselines.
#include <cstring>
#include <string>
#include <vector>

#include "dgq/scheme.hpp"

namespace dgq::test {

// Stores the tensor verbatim except that tokens >= first_damaged get `offset` added (in fp32,
// rounded back to the dtype). Reports two segments split at the middle token and two parts.
class DamageScheme : public Scheme {
 public:
  DamageScheme(std::int64_t first_damaged, float offset) : first_(first_damaged), offset_(offset) {}
  std::string spec() const override {
    return "damage:from=" + std::to_string(first_) + ",offset=" + std::to_string(offset_);
  }
  std::string family() const override { return "damage"; }
  Compressed compress(ConstTensor x, TensorRole role) const override {
    Compressed c = start_compressed(spec(), x, role);
    Part body{"body", std::vector<std::uint8_t>(x.bytes())};
    std::memcpy(body.bytes.data(), x.data, x.bytes());
    c.parts.push_back(std::move(body));
    c.parts.push_back(Part{"header", std::vector<std::uint8_t>(role == TensorRole::key ? 3 : 5)});
    c.diagnostics.segments =
        SegmentDiagnostics{{0, static_cast<std::uint32_t>(x.tokens / 2), static_cast<std::uint32_t>(x.tokens)}};
    return c;
  }
  void decompress(const Compressed& c, MutTensor out) const override {
    std::memcpy(out.data, c.parts[0].bytes.data(), out.bytes());
    for (std::int64_t t = first_; t < out.tokens; ++t) {
      for (std::int64_t ch = 0; ch < out.channels; ++ch) {
        const std::int64_t i = t * out.channels + ch;
        store_element(out, i, load_element(out, i) + offset_);
      }
    }
  }
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * channels) * dtype_size(dtype) + 4;
  }

 private:
  std::int64_t first_;
  float offset_;
};

}  // namespace dgq::test
