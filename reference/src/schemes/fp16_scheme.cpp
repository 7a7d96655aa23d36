// fp16: the uncompressed baseline. Stores the input bytes unchanged in the input dtype
// (fp16 for real traces), so decompress is bit-identical.
#include <cstring>

#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

class Fp16Scheme final : public Scheme {
 public:
  std::string spec() const override { return "fp16"; }
  std::string family() const override { return "fp16"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_finite(x, "fp16");
    Compressed c = start_compressed(spec(), x, role);
    const auto* bytes = static_cast<const std::uint8_t*>(x.data);
    c.parts.push_back({"values", std::vector<std::uint8_t>(bytes, bytes + x.bytes())});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const Part& values = expect_part(c, "values", out.bytes());
    if (!values.bytes.empty()) std::memcpy(out.data, values.bytes.data(), values.bytes.size());
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * channels) * dtype_size(dtype);
  }
};

constexpr std::string_view kFp16Aliases[] = {"f16"};  // llama.cpp's cache type name

[[maybe_unused]] const bool registered_fp16 = register_scheme_family({
    .name = "fp16",
    .device = Device::reference,
    .order = 20,
    .summary = "the input bytes unchanged (the uncompressed baseline)",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> { return std::make_unique<Fp16Scheme>(); },
    .stores_input_bytes = true,
    .aliases = kFp16Aliases,
});

}  // namespace

}  // namespace dgq::schemes
