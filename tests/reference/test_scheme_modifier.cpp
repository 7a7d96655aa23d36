// Scheme modifiers (dgq/registry.hpp): a key every family accepts, applied around the family's
// scheme. This binary registers a test modifier "tag" (values none, x) whose wrapper only
// prints the key in its spec and delegates to the family's scheme.
#include <catch2/catch.hpp>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "test_scheme_support.hpp"

namespace dgq::test {
namespace {

class TaggedScheme final : public Scheme {
 public:
  TaggedScheme(std::unique_ptr<Scheme> inner, std::string value) : inner_(std::move(inner)), value_(std::move(value)) {}
  std::string spec() const override { return spec_with_key(inner_->spec(), "tag", value_); }
  std::string family() const override { return inner_->family(); }
  Compressed compress(ConstTensor x, TensorRole role) const override {
    Compressed c = inner_->compress(x, role);
    c.scheme = spec();
    return c;
  }
  void decompress(const Compressed& c, MutTensor out) const override {
    if (c.scheme != spec()) throw InputError("tag: compressed with '" + c.scheme + "'");
    Compressed inner = c;
    inner.scheme = inner_->spec();
    inner_->decompress(inner, out);
  }
  std::uint64_t planned_bytes(std::int64_t t, std::int64_t d, DType dt, TensorRole r) const override {
    return inner_->planned_bytes(t, d, dt, r);
  }

 private:
  std::unique_ptr<Scheme> inner_;
  std::string value_;
};

[[maybe_unused]] const bool registered = register_scheme_modifier({
    .key = "tag",
    .default_value = "none",
    .values = "none or x",
    .help = "test modifier",
    .check =
        [](std::string_view v) {
          if (v != "none" && v != "x") throw ParameterError("parameter tag='" + std::string(v) + "' is unknown");
        },
    .wrap = [](std::unique_ptr<Scheme> inner, const std::string& value, Device) -> std::unique_ptr<Scheme> {
      return std::make_unique<TaggedScheme>(std::move(inner), value);
    },
});

}  // namespace

TEST_CASE("a modifier applies to every family, and its default leaves the scheme as it was",
          "[scheme][registry][modifier]") {
  for (const std::string& family : scheme_families()) {
    CAPTURE(family);
    const auto plain = make_scheme(family);
    CHECK(make_scheme(family + ":tag=none")->spec() == plain->spec());
    const auto tagged = make_scheme(family + ":tag=x");
    CHECK(tagged->spec() == spec_with_key(plain->spec(), "tag", "x"));
    CHECK(make_scheme(tagged->spec())->spec() == tagged->spec());
    const OwnedTensor x = random_tensor(40, accepted_channels(family, 33), 21);
    const Compressed a = plain->compress(x.view(), TensorRole::value);
    const Compressed b = tagged->compress(x.view(), TensorRole::value);
    CHECK(a.parts == b.parts);
    CHECK(decompressed(*tagged, b).bytes == decompressed(*plain, a).bytes);
  }
  CHECK(make_scheme("dgq:win=8,tag=x")->spec() ==
        "dgq:win=8,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table,tag=x");
}

TEST_CASE("a modifier's values are checked, and unknown keys still rejected after it", "[scheme][registry][modifier]") {
  CHECK_THROWS_WITH(make_scheme("fp16:tag=y"), Catch::Contains("tag='y'"));
  CHECK_THROWS_WITH(make_scheme("fp16:tag=x,bits=4"), Catch::Contains("unknown parameter 'bits'"));
  CHECK(spec_with_key("fp16", "tag", "x") == "fp16:tag=x");
  CHECK(spec_with_key("kivi-2:group=32,residual=32", "tag", "x") == "kivi-2:group=32,residual=32,tag=x");
}

}  // namespace dgq::test
