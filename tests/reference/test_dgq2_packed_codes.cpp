// DGQ v2's code stream (docs/spec.md rule V5): element i at bits [i*b, (i+1)*b) of one
// little-endian stream. pack_codes/unpack_codes (with their 8-codes-at-a-time path) against a
// bit-by-bit oracle written from the rule, for every width, start and length around the
// 8-element groups; plus the bytes of a hand-worked example.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "dgq/schemes/dgq2/packed_codes.hpp"
#include "test_seed.hpp"

using dgq::schemes::dgq2::pack_codes;
using dgq::schemes::dgq2::packed_code_bytes;
using dgq::schemes::dgq2::unpack_codes;

namespace {

// Rule V5 literally: bit k of code j goes to stream bit (first + j) * b + k.
std::vector<std::uint8_t> oracle_stream(const std::vector<std::uint8_t>& codes, std::uint64_t first, int bits,
                                        std::uint64_t bytes) {
  std::vector<std::uint8_t> out(bytes, 0);
  for (std::uint64_t j = 0; j < codes.size(); ++j) {
    for (int k = 0; k < bits; ++k) {
      const std::uint64_t bit = (first + j) * static_cast<std::uint64_t>(bits) + static_cast<std::uint64_t>(k);
      if ((codes[j] >> k) & 1u) out[bit / 8] |= static_cast<std::uint8_t>(1u << (bit % 8));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("dgq2 packed codes: sizes, empty and single-element streams", "[dgq2][packing][edge]") {
  CHECK(packed_code_bytes(0, 3) == 0);
  CHECK(packed_code_bytes(1, 2) == 1);
  CHECK(packed_code_bytes(1, 3) == 1);
  CHECK(packed_code_bytes(3, 3) == 2);    // 9 bits
  CHECK(packed_code_bytes(8, 3) == 3);    // 24 bits: eight 3-bit codes fill three bytes
  CHECK(packed_code_bytes(64, 3) == 24);  // one head_dim-64 row
  CHECK(packed_code_bytes(5, 8) == 5);
  std::vector<std::uint8_t> stream(1, 0);
  const std::uint8_t seven = 7;
  pack_codes(stream.data(), 0, &seven, 1, 3);
  CHECK(stream[0] == 0x07);  // the unused high bits stay 0
  std::uint8_t back = 0;
  unpack_codes(stream.data(), stream.size(), 0, &back, 1, 3);
  CHECK(back == 7);
  pack_codes(stream.data(), 0, nullptr, 0, 3);  // nothing to write
  CHECK(stream[0] == 0x07);
}

TEST_CASE("dgq2 packed codes: a hand-worked 3-bit example straddling bytes", "[dgq2][packing]") {
  // Codes 1..7, 0 at elements 0..7: bits (LSB first) 100 010 110 001 101 011 111 000
  // -> byte 0 = bits 0..7 = 1,0,0,0,1,0,1,1 = 0xd1; byte 1 = 0,0,0,1,1,0,1,0 = 0x58;
  //    byte 2 = 1,1,1,1,1,0,0,0 = 0x1f.
  const std::vector<std::uint8_t> codes{1, 2, 3, 4, 5, 6, 7, 0};
  std::vector<std::uint8_t> fast(3, 0), slow(4, 0);
  pack_codes(fast.data(), 0, codes.data(), 8, 3);  // the eight-at-a-time path
  pack_codes(slow.data(), 1, codes.data(), 8, 3);  // element by element (start 1)
  CHECK(fast == std::vector<std::uint8_t>{0xd1, 0x58, 0x1f});
  CHECK(slow == oracle_stream(codes, 1, 3, 4));
}

TEST_CASE("dgq2 packed codes: pack and unpack match the bit-by-bit rule at every start and length", "[dgq2][packing]") {
  std::mt19937_64 gen(dgq::test::seed() * 131u + 5u);
  for (const int bits : {2, 3, 4, 8}) {
    std::uniform_int_distribution<int> code(0, (1 << bits) - 1);
    for (std::uint64_t first = 0; first <= 17; ++first) {
      for (std::uint64_t count = 0; count <= 41; ++count) {
        CAPTURE(bits, first, count);
        std::vector<std::uint8_t> codes(count);
        for (auto& c : codes) c = static_cast<std::uint8_t>(code(gen));
        const std::uint64_t bytes = packed_code_bytes(first + count, bits);
        std::vector<std::uint8_t> stream(bytes, 0);
        pack_codes(stream.data(), first, codes.data(), count, bits);
        REQUIRE(stream == oracle_stream(codes, first, bits, bytes));
        std::vector<std::uint8_t> back(count, 0xff);
        unpack_codes(stream.data(), stream.size(), first, back.data(), count, bits);
        REQUIRE(back == codes);
      }
    }
  }
}

TEST_CASE("dgq2 packed codes: consecutive rows pack into the stream one long run would", "[dgq2][packing]") {
  std::mt19937_64 gen(dgq::test::seed() * 131u + 6u);
  for (const int bits : {2, 3, 4, 8}) {
    for (const std::uint64_t row : {1u, 5u, 8u, 13u, 64u}) {
      CAPTURE(bits, row);
      std::uniform_int_distribution<int> code(0, (1 << bits) - 1);
      std::vector<std::uint8_t> codes(row * 7);
      for (auto& c : codes) c = static_cast<std::uint8_t>(code(gen));
      std::vector<std::uint8_t> by_rows(packed_code_bytes(codes.size(), bits), 0), whole(by_rows.size(), 0);
      for (std::uint64_t t = 0; t < 7; ++t) pack_codes(by_rows.data(), t * row, codes.data() + t * row, row, bits);
      pack_codes(whole.data(), 0, codes.data(), codes.size(), bits);
      CHECK(by_rows == whole);
    }
  }
}
