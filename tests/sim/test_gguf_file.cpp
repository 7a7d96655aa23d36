// The GGUF container reader (sim/model/src/gguf/gguf_file.cpp) on files built byte by byte here:
// hostile and truncated headers first, then a well-formed file's metadata and tensor places, then
// the K-quant decoders on hand-made blocks whose values are known. The decoders' agreement with
// the gguf package on real models is tests/python/test_eval_gguf.py's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "gguf/gguf_weight_types.hpp"
#include "gguf_bytes.hpp"

using dgq::InputError;
namespace gguf = dgq::sim::gguf;
using dgq::test::gguf_header;
using dgq::test::GgufBytes;

namespace {

std::string gguf_error_of(const std::string& name, const std::vector<std::uint8_t>& data) {
  const std::string path = dgq::test::write_gguf_file(name, data);
  try {
    gguf::File f(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// One string key and one F32 tensor [2][4] at data offset 0, then its 32 bytes.
GgufBytes small_gguf_model() {
  GgufBytes b = gguf_header(1, 2);
  b.str("general.architecture").u32(8).str("llama");
  b.str("general.name").u32(8).str("tiny");
  b.str("w.weight").u32(2).u64(4).u64(2).u32(0).u64(0);
  b.pad_to(32);
  for (int i = 0; i < 8; ++i) b.f32(float(i) - 3.5f);
  return b;
}

}  // namespace

TEST_CASE("gguf: an empty file is refused with its name and the byte where it ends") {
  const std::string e = gguf_error_of("empty", {});
  CHECK(e.find("dgq-test-gguf-empty.gguf: GGUF magic") != std::string::npos);
  CHECK(e.find("(byte 0)") != std::string::npos);
}

TEST_CASE("gguf: another magic or version is refused by name") {
  GgufBytes wrong_magic;
  wrong_magic.raw("GGML", 4).u32(3).u64(0).u64(0);
  CHECK(gguf_error_of("magic", wrong_magic.data).find("not a GGUF file") != std::string::npos);
  GgufBytes v1;
  v1.raw("GGUF", 4).u32(1).u64(0).u64(0);
  CHECK(gguf_error_of("v1", v1.data).find("version 1: dgq reads GGUF versions 2 and 3") != std::string::npos);
}

TEST_CASE("gguf: counts the file cannot hold are refused before anything is reserved") {
  CHECK(gguf_error_of("keys", gguf_header(0, std::uint64_t(1) << 60).data).find("metadata keys do not fit") !=
        std::string::npos);
  CHECK(gguf_error_of("tensors", gguf_header(std::uint64_t(1) << 60, 0).data).find("tensors do not fit") !=
        std::string::npos);
  GgufBytes strings = gguf_header(0, 1);
  strings.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(std::uint64_t(1) << 61);
  CHECK(gguf_error_of("strings", strings.data).find("metadata key tokenizer.ggml.tokens:") != std::string::npos);
}

TEST_CASE("gguf: a string running past the end names its key") {
  GgufBytes b = gguf_header(0, 1);
  b.str("general.name").u32(8).u64(1000).raw("abc", 3);
  const std::string e = gguf_error_of("string", b.data);
  CHECK(e.find("metadata key general.name: the file ends 3 bytes later") != std::string::npos);
}

TEST_CASE("gguf: duplicate keys, unknown value types and bad tensor entries are refused") {
  GgufBytes twice = gguf_header(0, 2);
  twice.str("a").u32(4).u32(1).str("a").u32(4).u32(2);
  CHECK(gguf_error_of("twice", twice.data).find("metadata key a appears twice") != std::string::npos);
  GgufBytes unknown = gguf_header(0, 1);
  unknown.str("a").u32(13).u32(0);
  CHECK(gguf_error_of("type", unknown.data).find("value type 13 is not a GGUF type") != std::string::npos);
  const std::uint8_t padding[48] = {};  // so that the tensor count fits and the entry is read
  GgufBytes dims = gguf_header(1, 0);
  dims.str("t").u32(5).raw(padding, sizeof padding);
  CHECK(gguf_error_of("dims", dims.data).find("tensor t: 5 dimensions, expected 1 to 4") != std::string::npos);
  GgufBytes zero = gguf_header(1, 0);
  zero.str("t").u32(1).u64(0).raw(padding, sizeof padding);
  CHECK(gguf_error_of("zero", zero.data).find("tensor t: dimension 0 is 0") != std::string::npos);
  GgufBytes misaligned = gguf_header(1, 0);
  misaligned.str("t").u32(1).u64(4).u32(0).u64(4).raw(padding, sizeof padding);
  CHECK(gguf_error_of("aligned", misaligned.data).find("data offset 4 is not a multiple of the alignment 32") !=
        std::string::npos);
}

TEST_CASE("gguf: a well-formed file gives its metadata and tensor bytes") {
  const gguf::File f(dgq::test::write_gguf_file("small", small_gguf_model().data));
  CHECK(f.version() == 3);
  CHECK(f.string_value("general.architecture") == "llama");
  CHECK(f.integer_value("llama.block_count", 7) == 7);
  CHECK_THROWS_WITH(f.integer_value("general.name"), Catch::Contains("general.name: string, expected an integer"));
  CHECK_THROWS_WITH(f.string_value("llama.block_count"),
                    Catch::Contains("GGUF metadata key llama.block_count missing"));
  const gguf::TensorInfo* t = f.find_tensor("w.weight");
  REQUIRE(t != nullptr);
  CHECK(t->dims == std::vector<std::uint64_t>{4, 2});
  float values[8];
  std::memcpy(values, f.tensor_data(*t, 32), 32);
  CHECK(values[0] == -3.5f);
  CHECK(values[7] == 3.5f);
  CHECK_THROWS_WITH(f.tensor_data(*t, 36),
                    Catch::Contains("tensor w.weight: 36 bytes at data offset 0 run past the end"));
}

TEST_CASE("gguf: a truncated tensor is refused when it is read, naming it") {
  GgufBytes b = small_gguf_model();
  b.data.resize(b.data.size() - 4);
  const gguf::File f(dgq::test::write_gguf_file("truncated", b.data));
  CHECK_THROWS_WITH(f.tensor_data(*f.find_tensor("w.weight"), 32), Catch::Contains("(28 data bytes)"));
}

TEST_CASE("gguf weights: types dgq does not decode are named, the decoded ones listed") {
  CHECK(gguf::weight_type(10) == nullptr);
  CHECK(gguf::weight_type_name(10) == "q2_K (ggml type 10)");
  CHECK(gguf::weight_type_name(99) == "unknown (ggml type 99)");
  CHECK(gguf::decoded_weight_types() == "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K");
}

TEST_CASE("gguf weights: q4_K decodes d * scale * q - dmin * min per 32 values") {
  std::uint8_t block[144] = {};
  const std::uint16_t d = dgq::rules::float_to_half(0.5f), dmin = dgq::rules::float_to_half(0.25f);
  std::memcpy(block, &d, 2);
  std::memcpy(block + 2, &dmin, 2);
  block[4] = 3;      // scale 0 = 3
  block[4 + 4] = 2;  // min 0 = 2
  block[4 + 1] = 1;  // scale 1 = 1, min 1 = 0
  block[16] = 0x5A;  // element 0: low nibble 10; element 32: high nibble 5
  float out[256];
  gguf::dequantize_weight_row(12, block, 256, out);
  CHECK(out[0] == 0.5f * 3 * 10 - 0.25f * 2);
  CHECK(out[1] == -0.5f);  // q 0: only the min
  CHECK(out[32] == 0.5f * 1 * 5);
  CHECK(out[64] == 0.0f);  // scales 2.. are 0
}

TEST_CASE("gguf weights: q6_K decodes d * scale * (q - 32), q from 4 low and 2 high bits") {
  std::uint8_t block[210] = {};
  const std::uint16_t d = dgq::rules::float_to_half(0.125f);
  std::memcpy(block + 208, &d, 2);
  auto* scales = reinterpret_cast<std::int8_t*>(block + 192);
  scales[0] = -2;
  scales[2] = 4;
  block[0] = 0x0F;               // element 0: low 4 bits 15, high bits (qh[0] & 3) = 2 -> 47 - 32 = 15
  block[128] = 0x02 | (1 << 2);  // element 32's high bits (qh[0] >> 2) & 3 = 1; its low bits ql[32] & 0xF = 0
  float out[256];
  gguf::dequantize_weight_row(14, block, 256, out);
  CHECK(out[0] == 0.125f * -2 * 15);
  CHECK(out[32] == 0.125f * 4 * (16 - 32));
  CHECK(out[1] == 0.125f * -2 * -32);
}
