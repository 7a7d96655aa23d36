// dgq/dgq_parts.hpp, the one declaration of DGQ's part layout that the CPU and CUDA dgq schemes
// share: parts round-trip a DgqV1Encoded exactly in every marker mode and granularity, the CPU
// scheme stores exactly these parts, spec parsing is make_scheme's, and corrupt part sizes give
// the scheme's own messages.
#include "test_scheme_support.hpp"

#include "dgq/dgq.hpp"
#include "dgq/dgq_parts.hpp"
#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;

namespace {

// Every marker mode with every granularity.
std::vector<DgqV1Params> all_modes() {
  std::vector<DgqV1Params> modes;
  for (const Granularity g : {Granularity::segment, Granularity::segment_channel}) {
    for (const Markers m : {Markers::table, Markers::bitmap, Markers::inband}) {
      DgqV1Params p;
      p.granularity = g;
      p.markers = m;
      modes.push_back(p);
    }
  }
  return modes;
}

std::string spec_of(const DgqV1Params& p) { return "dgq:" + p.to_string(); }

// Quiet tokens, loud ones, quiet again: two segment edges for tensors long enough.
OwnedTensor two_steps(std::int64_t l, std::int64_t d, std::uint64_t stream) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t t = 0; t < l; ++t) {
    const float spread = (t >= l / 3 && t < 2 * l / 3) ? 8.0f : 0.5f;
    for (std::int64_t c = 0; c < d; ++c) v[static_cast<std::size_t>(t * d + c)] = spread * normal(gen);
  }
  return tensor_from(v, l, d);
}

Compressed parts_of(const DgqV1Encoded& enc) {
  Compressed c;
  c.scheme = spec_of(enc.params);
  c.tokens = enc.tokens;
  c.channels = enc.channels;
  c.dtype = enc.dtype;
  append_dgq_parts(enc, c);
  return c;
}

std::vector<std::string> part_names(const Compressed& c) {
  std::vector<std::string> names;
  for (const Part& p : c.parts) names.push_back(p.name);
  return names;
}

// The error the CPU scheme's decompress gives for c, and the one dgq_encoded_from_parts gives.
void require_same_message(const Compressed& c, const DgqV1Params& p, const std::string& expected) {
  const auto scheme = make_scheme(spec_of(p));
  OwnedTensor out(c.dtype, c.tokens, c.channels);
  const std::string from_scheme = error_message_of<InputError>([&] { scheme->decompress(c, out.mut()); });
  const std::string from_parts = error_message_of<InputError>([&] { (void)dgq_encoded_from_parts(c, p); });
  CAPTURE(from_scheme, from_parts);
  REQUIRE_THAT(from_parts, Contains(expected));
  REQUIRE(from_scheme == from_parts);
}

}  // namespace

TEST_CASE("dgq parts of an empty tensor are empty and read back", "[scheme][dgq][parts][edge]") {
  for (const DgqV1Params& p : all_modes()) {
    CAPTURE(p.to_string());
    const OwnedTensor x(DType::f16, 0, 64);
    const DgqV1Encoded enc = dgq_encode(x.view(), p);
    const Compressed c = parts_of(enc);
    CHECK(c.total_bytes() == 0);
    CHECK(dgq_encoded_from_parts(c, p) == enc);
  }
}

TEST_CASE("dgq parts reject a negative shape before sizing anything by it", "[scheme][dgq][parts][errors]") {
  Compressed c;
  c.scheme = spec_of(DgqV1Params{});
  c.tokens = -3;
  c.channels = 0;
  c.parts.push_back({"codes", {}});
  c.parts.push_back({"ranges", {}});
  CHECK(error_message_of<InputError>([&] { (void)dgq_encoded_from_parts(c, DgqV1Params{}); }) ==
        c.scheme + ": negative shape [-3, 0]");
}

TEST_CASE("dgq parts round-trip the encoder's output in every marker mode and granularity",
          "[scheme][dgq][parts][roundtrip]") {
  for (const DgqV1Params& p : all_modes()) {
    for (const std::int64_t l : {1, 16, 17, 300}) {
      for (const std::int64_t d : {1, 31, 64}) {
        CAPTURE(p.to_string(), l, d);
        const OwnedTensor x = two_steps(l, d, static_cast<std::uint64_t>(l * 7 + d));
        const DgqV1Encoded enc = dgq_encode(x.view(), p);
        const Compressed c = parts_of(enc);
        const std::vector<std::string> expected_names =
            p.markers == Markers::table    ? std::vector<std::string>{"codes", "ranges", "boundaries"}
            : p.markers == Markers::bitmap ? std::vector<std::string>{"codes", "ranges", "bitmap"}
                                           : std::vector<std::string>{"codes", "ranges"};
        CHECK(part_names(c) == expected_names);
        CHECK(c.total_bytes() == enc.stored_bytes().total());
        CHECK(dgq_encoded_from_parts(c, p) == enc);

        const DgqPartsView view = view_dgq_parts(c, p);
        CHECK(view.header.codes.empty());
        CHECK(view.codes == reinterpret_cast<const std::int8_t*>(c.find("codes")->bytes.data()));
        DgqV1Encoded header = enc;
        header.codes.clear();
        CHECK(view.header == header);
      }
    }
  }
}

TEST_CASE("dgq parts with codes moved in equal the parts with codes copied", "[scheme][dgq][parts]") {
  for (const DgqV1Params& p : all_modes()) {
    CAPTURE(p.to_string());
    const DgqV1Encoded enc = dgq_encode(two_steps(300, 32, 11).view(), p);
    Compressed moved;
    append_dgq_parts(enc, std::vector<std::uint8_t>(enc.codes.begin(), enc.codes.end()), moved);
    CHECK(moved.parts == parts_of(enc).parts);
  }
}

TEST_CASE("the CPU dgq scheme stores exactly the declared parts", "[scheme][dgq][parts]") {
  for (const DgqV1Params& p : all_modes()) {
    CAPTURE(p.to_string());
    const OwnedTensor x = two_steps(300, 64, 5);
    const Compressed from_scheme = make_scheme(spec_of(p))->compress(x.view(), TensorRole::key);
    const Compressed declared = parts_of(dgq_encode(x.view(), p));
    REQUIRE(from_scheme.segment_edges().size() >= 3);  // a boundary, so every marker part is non-empty
    CHECK(from_scheme.parts == declared.parts);
    CHECK(from_scheme.scheme == declared.scheme);
  }
}

TEST_CASE("dgq_v1_params_from_spec reads a spec as make_scheme does", "[scheme][dgq][parts][registry]") {
  for (const std::string spec : {"dgq", "dgq:markers=bitmap", "dgq: win = 32 , granularity=segment-channel",
                                 "dgq:markers=inband,min_var=1e-40,max_groups=8,group_ratio=0.123456789,win=65536"}) {
    CAPTURE(spec);
    CHECK(spec_of(dgq_v1_params_from_spec(spec)) == make_scheme(spec)->spec());
    CHECK(dgq_v1_params_from_spec(make_scheme(spec)->spec()) == dgq_v1_params_from_spec(spec));
  }
  for (const std::string spec :
       {"dgq:max_groups=9", "dgq:win=0", "dgq:win=16.5", "dgq:group_ratio=nan", "dgq:min_var=-1", "dgq:markers=morse",
        "dgq:granularity=token", "dgq:window=16", "dgq:win", "dgq:win=8,win=16", "dgq:max_groups=9,window=16"}) {
    CAPTURE(spec);
    const std::string expected = error_message_of<ParameterError>([&] { (void)make_scheme(spec); });
    REQUIRE_FALSE(expected.empty());
    CHECK(error_message_of<ParameterError>([&] { (void)dgq_v1_params_from_spec(spec); }) == expected);
  }
  CHECK(error_message_of<ParameterError>([] { (void)dgq_v1_params_from_spec("q8_0"); }) ==
        "scheme spec 'q8_0' is of family 'q8_0', not dgq");
}

TEST_CASE("dgq parts with a wrong size give the CPU scheme's messages", "[scheme][dgq][parts][errors]") {
  for (const DgqV1Params& p : all_modes()) {
    CAPTURE(p.to_string());
    const OwnedTensor x = two_steps(300, 64, 5);
    const Compressed good = parts_of(dgq_encode(x.view(), p));
    REQUIRE(good.parts.size() >= 2);
    for (std::size_t i = 0; i < good.parts.size(); ++i) {
      const Part& part = good.parts[i];
      CAPTURE(part.name);
      Compressed short_part = good;
      short_part.parts[i].bytes.pop_back();
      require_same_message(short_part, p,
                           "part '" + part.name + "' has " + std::to_string(part.bytes.size() - 1) + " bytes");
      Compressed missing = good;
      missing.parts.erase(missing.parts.begin() + static_cast<std::ptrdiff_t>(i));
      require_same_message(missing, p, good.scheme + ": part '" + part.name + "' is missing");
    }
  }
}

TEST_CASE("dgq ranges outside the segment budget give the CPU scheme's message", "[scheme][dgq][parts][errors]") {
  // L = 300 (under 2048 tokens): a budget of 2 segments (rule 4), 8 bytes each at granularity=segment.
  const DgqV1Params p;
  const Compressed good = parts_of(dgq_encode(two_steps(300, 8, 3).view(), p));
  Compressed too_many = good;
  too_many.parts[1].bytes.assign(24, 0);
  require_same_message(too_many, p,
                       good.scheme + ": part 'ranges' has 24 bytes, expected 8 per segment for 1 to 2 segments");
  Compressed none = good;
  none.parts[1].bytes.clear();
  require_same_message(none, p,
                       good.scheme + ": part 'ranges' has 0 bytes, expected 8 per segment for 1 to 2 segments");
}
