// BitPacker::put_run (whole bytes / nibble pairs / 2-bit quads) must write the stream put() writes code by
// code, for runs of 1..300 codes starting at even and odd elements, with 8-, 4-, 2- and 1-bit
// codes, next to codes already in the stream; unpack_run must read what unpack_code reads.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "../../reference/src/schemes/bit_packing.hpp"
#include "test_seed.hpp"

using dgq::schemes::BitPacker;

TEST_CASE("BitPacker::put_run writes the stream put writes, at any start and length", "[scheme][fast]") {
  std::mt19937_64 gen(dgq::test::seed() * 31u + 7u);
  for (const int bits : {8, 4, 2, 1}) {
    for (std::uint64_t count = 1; count <= 300; ++count) {
      for (const std::uint64_t first : {0u, 1u, 2u, 3u, 64u, 65u}) {
        CAPTURE(bits, count, first);
        const std::uint64_t elements = first + count + 3;
        std::vector<std::uint8_t> codes(count);
        for (auto& c : codes) c = static_cast<std::uint8_t>(gen() & ((1u << bits) - 1u));
        // Neighbours before and after the run share its edge bytes.
        const std::uint8_t before = static_cast<std::uint8_t>((1u << bits) - 1u), after = 1;
        std::vector<std::uint8_t> fast, scalar;
        BitPacker f(fast, elements, bits), s(scalar, elements, bits);
        if (first > 0) {
          f.put(first - 1, before);
          s.put(first - 1, before);
        }
        f.put(first + count, after);
        s.put(first + count, after);
        f.put_run(first, codes.data(), count);
        for (std::uint64_t j = 0; j < count; ++j) s.put(first + j, codes[j]);
        REQUIRE(fast == scalar);
      }
    }
  }
}

TEST_CASE("unpack_run reads the codes unpack_code reads, at any start and length", "[scheme][fast]") {
  std::mt19937_64 gen(dgq::test::seed() * 37u + 11u);
  std::vector<std::uint8_t> stream(200);
  for (auto& b : stream) b = static_cast<std::uint8_t>(gen());
  for (const int bits : {8, 4, 2, 1}) {
    for (std::uint64_t count = 0; count <= 150; ++count) {
      for (const std::uint64_t first : {0u, 1u, 2u, 3u, 4u, 8u, 64u, 65u}) {
        CAPTURE(bits, count, first);
        std::vector<std::uint8_t> got(count + 1, 0xAA), want(count + 1, 0xAA);  // + a guard
        dgq::schemes::unpack_run(stream.data(), first, got.data(), count, bits);
        for (std::uint64_t j = 0; j < count; ++j) want[j] = dgq::schemes::unpack_code(stream.data(), first + j, bits);
        REQUIRE(got == want);
      }
    }
  }
}
