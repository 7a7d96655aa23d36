#pragma once
// Sub-byte codes as one little-endian bit stream: element i (row-major) occupies bits
// [i*bits, (i+1)*bits) counted from bit 0 of byte 0, so with 4 bits element 2j is the low
// nibble of byte j and 2j+1 the high nibble. bits divides 8.
#include <cstdint>
#include <vector>

namespace dgq::schemes {

inline std::uint64_t packed_bytes(std::uint64_t elements, int bits) {
  return (elements * static_cast<std::uint64_t>(bits) + 7) / 8;
}

class BitPacker {
 public:
  BitPacker(std::vector<std::uint8_t>& out, std::uint64_t elements, int bits)
      : out_(out), bits_(bits), base_(out.size()) {
    out_.resize(base_ + packed_bytes(elements, bits), 0);
  }
  void put(std::uint64_t i, std::uint8_t code) {
    const std::uint64_t bit = i * static_cast<std::uint64_t>(bits_);
    out_[base_ + bit / 8] |= static_cast<std::uint8_t>(code << (bit % 8));
  }
  // put(first + j, codes[j]) for j < count, a byte at a time where the run allows it (whole
  // bytes of 8-bit codes, nibble pairs of 4-bit codes and quads of 2-bit codes starting on a
  // byte).
  void put_run(std::uint64_t first, const std::uint8_t* codes, std::uint64_t count) {
    std::uint64_t j = 0;
    if (bits_ == 8) {
      std::uint8_t* out = out_.data() + base_ + first;
      for (; j < count; ++j) out[j] |= codes[j];
    } else if (bits_ == 4 && first % 2 == 0) {
      std::uint8_t* out = out_.data() + base_ + first / 2;
      for (; j + 2 <= count; j += 2) out[j / 2] |= static_cast<std::uint8_t>(codes[j] | (codes[j + 1] << 4));
    } else if (bits_ == 2 && first % 4 == 0) {
      std::uint8_t* out = out_.data() + base_ + first / 4;
      for (; j + 4 <= count; j += 4) {
        out[j / 4] |=
            static_cast<std::uint8_t>(codes[j] | (codes[j + 1] << 2) | (codes[j + 2] << 4) | (codes[j + 3] << 6));
      }
    }
    for (; j < count; ++j) put(first + j, codes[j]);
  }

 private:
  std::vector<std::uint8_t>& out_;
  int bits_;
  std::size_t base_;
};

inline std::uint8_t unpack_code(const std::uint8_t* stream, std::uint64_t i, int bits) {
  const std::uint64_t bit = i * static_cast<std::uint64_t>(bits);
  return static_cast<std::uint8_t>((stream[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u));
}

// codes[j] = unpack_code(stream, first + j, bits) for j < count, reading a whole byte at a
// time while the run is on a byte boundary (a decoder's row of codes without a bit-index
// division per element).
inline void unpack_run(const std::uint8_t* stream, std::uint64_t first, std::uint8_t* codes, std::uint64_t count,
                       int bits) {
  const std::uint64_t per_byte = 8 / static_cast<std::uint64_t>(bits);
  const unsigned mask = (1u << bits) - 1u;
  std::uint64_t j = 0;
  if (first % per_byte == 0) {
    const std::uint8_t* in = stream + first / per_byte;
    if (bits == 4) {  // the common cases, unrolled: no runtime shift count
      for (; j + 2 <= count; j += 2, ++in) {
        codes[j] = static_cast<std::uint8_t>(*in & 15u);
        codes[j + 1] = static_cast<std::uint8_t>(*in >> 4);
      }
    } else if (bits == 2) {
      for (; j + 4 <= count; j += 4, ++in) {
        codes[j] = static_cast<std::uint8_t>(*in & 3u);
        codes[j + 1] = static_cast<std::uint8_t>((*in >> 2) & 3u);
        codes[j + 2] = static_cast<std::uint8_t>((*in >> 4) & 3u);
        codes[j + 3] = static_cast<std::uint8_t>(*in >> 6);
      }
    }
    for (; j + per_byte <= count; j += per_byte, ++in) {  // the pointer walks: no division per byte
      const unsigned b = *in;
      for (std::uint64_t k = 0; k < per_byte; ++k) codes[j + k] = static_cast<std::uint8_t>((b >> (k * bits)) & mask);
    }
  }
  for (; j < count; ++j) codes[j] = unpack_code(stream, first + j, bits);
}

}  // namespace dgq::schemes
