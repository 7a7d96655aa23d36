#pragma once
// Little-endian reading and writing of the scalar fields schemes store in their parts.
// memcpy keeps the bytes exact (no aliasing tricks); the project targets little-endian hosts,
// which the static_assert makes explicit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/non_finite_name.hpp"

namespace dgq::schemes {

static_assert(std::endian::native == std::endian::little,
              "parts are little-endian and copied as-is; a big-endian host needs byte swaps here");

template <class T>
void append_le(std::vector<std::uint8_t>& out, T value) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

template <class T>
T read_le(const std::vector<std::uint8_t>& bytes, std::size_t index) {
  T value;
  std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

// One asymmetric range as stored: lo then hi, fp32 each (8 bytes).
inline constexpr std::uint64_t kRangeBytes = 8;

inline void append_range(std::vector<std::uint8_t>& out, float lo, float hi) {
  append_le(out, lo);
  append_le(out, hi);
}

struct Range {
  float lo = 0.0f, hi = 0.0f;
};

// compress never stores a NaN/Inf range or scale: one in a file is corruption, refused at
// decode time (the hostile-file hardening, docs/robustness.md) instead of decoding into garbage or non-finite values.
inline float finite_stored(float value, const char* what, std::size_t index) {
  if (!std::isfinite(value))
    throw InputError(std::string("stored ") + what + " " + std::to_string(index) + " is " +
                     std::string(non_finite_name(value)) + " (corrupt file)");
  return value;
}

inline Range read_range(const std::vector<std::uint8_t>& bytes, std::size_t index) {
  return {finite_stored(read_le<float>(bytes, 2 * index), "range", index),
          finite_stored(read_le<float>(bytes, 2 * index + 1), "range", index)};
}

}  // namespace dgq::schemes
