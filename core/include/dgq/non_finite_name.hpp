#pragma once
// How every error that refuses a NaN or an infinity names it: "nan", "inf" or "-inf". Streams
// and printf write a NaN with its sign bit set as "-nan" (glibc), a sign no one typed, and some
// sites had written both infinities as "inf"; one spelling keeps the errors of the input checks
// (core's check_finite, the trace reader, DGQ v1's scan, the CUDA encoder, stored scales)
// alike, and the sign of an infinity is kept because it tells the user where to look.
#include <cmath>
#include <string_view>

namespace dgq {

// v must not be finite.
inline std::string_view non_finite_name(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace dgq
