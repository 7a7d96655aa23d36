#pragma once
// DGQ v2's code stream (docs/spec.md, "DGQ v2", rule V5): codes of b bits (b in {2, 3, 4, 8})
// as one little-endian bit stream over the quantized tokens in row-major order. Element i
// (i = t*D + d) occupies bits [i*b, (i+1)*b) counted from bit 0 (the least significant) of
// byte 0; a 3-bit code may straddle two bytes. No padding between rows; the unused high bits
// of the last byte are 0. So the stream is ceil(n*b/8) bytes. Unlike bit_packing.hpp (whose
// bits divide 8) this also takes b = 3.
#include <cstdint>
#include <cstring>
#include <vector>

namespace dgq::schemes::dgq2 {

inline std::uint64_t packed_code_bytes(std::uint64_t elements, int bits) {
  return (elements * static_cast<std::uint64_t>(bits) + 7) / 8;
}

// Writes codes[0 .. count) as elements first .. first+count of the stream (which must be
// zero there: bits are OR-ed in). Eight codes of b bits fill exactly b bytes, so where the run
// starts on a multiple of 8 elements whole bytes are written at once (8-, 4- and 2-bit codes
// byte by byte, 3-bit codes eight at a time through a 64-bit word); the rest go one at a time.
// Every path writes the bits of the one-at-a-time loop (tested against a bit-by-bit oracle).
inline void pack_codes(std::uint8_t* stream, std::uint64_t first, const std::uint8_t* codes, std::uint64_t count,
                       int bits) {
  std::uint64_t j = 0;
  // The stream and the codes never overlap (restrict), so the compiler vectorizes these loops.
  if (first % 8 == 0 && bits == 8) {  // whole bytes
    std::uint8_t* __restrict out = stream + first;
    const std::uint8_t* __restrict in = codes;
    for (std::uint64_t k = 0; k < count; ++k) out[k] |= in[k];
    j = count;
  } else if (first % 8 == 0 && bits == 4) {
    // Nibble pairs, low nibble first.
    std::uint8_t* __restrict out = stream + first / 2;
    const std::uint8_t* __restrict in = codes;
    const std::uint64_t pairs = count / 2;
    for (std::uint64_t k = 0; k < pairs; ++k) out[k] |= static_cast<std::uint8_t>(in[2 * k] | (in[2 * k + 1] << 4));
    j = 2 * pairs;
  } else if (first % 8 == 0 && bits == 2) {  // four codes per byte
    std::uint8_t* __restrict out = stream + first / 4;
    const std::uint8_t* __restrict in = codes;
    const std::uint64_t quads = count / 4;
    for (std::uint64_t k = 0; k < quads; ++k) {
      out[k] |=
          static_cast<std::uint8_t>(in[4 * k] | (in[4 * k + 1] << 2) | (in[4 * k + 2] << 4) | (in[4 * k + 3] << 6));
    }
    j = 4 * quads;
  } else if (first % 8 == 0) {
    std::uint8_t* out = stream + first / 8 * static_cast<std::uint64_t>(bits);
    for (; j + 8 <= count; j += 8, out += bits) {
      std::uint64_t word = 0;
      for (int k = 0; k < 8; ++k) word |= static_cast<std::uint64_t>(codes[j + k]) << (k * bits);
      std::uint8_t le[8];
      for (int k = 0; k < 8; ++k) le[k] = static_cast<std::uint8_t>(word >> (8 * k));
      std::memcpy(out, le, static_cast<std::size_t>(bits));
    }
  }
  for (; j < count; ++j) {
    const std::uint64_t bit = (first + j) * static_cast<std::uint64_t>(bits);
    const unsigned shifted = static_cast<unsigned>(codes[j]) << (bit % 8);  // at most 8 + 7 bits
    stream[bit / 8] |= static_cast<std::uint8_t>(shifted & 0xffu);
    if (shifted > 0xffu) stream[bit / 8 + 1] |= static_cast<std::uint8_t>(shifted >> 8);
  }
}

// codes[j] = element first + j of a stream of stream_bytes bytes, for j < count.
inline void unpack_codes(const std::uint8_t* stream, std::uint64_t stream_bytes, std::uint64_t first,
                         std::uint8_t* codes, std::uint64_t count, int bits) {
  const unsigned mask = (1u << bits) - 1u;
  std::uint64_t j = 0;
  if (first % 8 == 0 && bits == 8) {
    std::memcpy(codes, stream + first, static_cast<std::size_t>(count));
    j = count;
  } else if (first % 8 == 0 && bits == 4) {
    const std::uint8_t* __restrict in = stream + first / 2;
    std::uint8_t* __restrict out = codes;
    const std::uint64_t pairs = count / 2;
    for (std::uint64_t k = 0; k < pairs; ++k) {
      out[2 * k] = static_cast<std::uint8_t>(in[k] & 0x0fu);
      out[2 * k + 1] = static_cast<std::uint8_t>(in[k] >> 4);
    }
    j = 2 * pairs;
  } else if (first % 8 == 0) {
    const std::uint8_t* in = stream + first / 8 * static_cast<std::uint64_t>(bits);
    for (; j + 8 <= count; j += 8, in += bits) {
      std::uint64_t word = 0;
      for (int k = 0; k < bits; ++k) word |= static_cast<std::uint64_t>(in[k]) << (8 * k);
      for (int k = 0; k < 8; ++k) codes[j + k] = static_cast<std::uint8_t>((word >> (k * bits)) & mask);
    }
  }
  for (; j < count; ++j) {
    const std::uint64_t bit = (first + j) * static_cast<std::uint64_t>(bits);
    unsigned window = stream[bit / 8];
    if (bit / 8 + 1 < stream_bytes) window |= static_cast<unsigned>(stream[bit / 8 + 1]) << 8;
    codes[j] = static_cast<std::uint8_t>((window >> (bit % 8)) & mask);
  }
}

}  // namespace dgq::schemes::dgq2
