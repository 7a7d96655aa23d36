#pragma once
// The domain of a numeric option, checked when the command line is parsed and refused in dgq's
// words. CLI11's own checks (CLI::PositiveNumber, ...) print their range with DBL_MAX written out
// in 300 digits ("Value 0 not in range 0.000000 to 1797693...") and its conversion fails with
// "Could not convert"; these say what the option takes: "must be >= 1, got 0", "must be in [0,
// 1024] (0 = OpenMP's default), got -1", "must be a whole number, got '3.5'". CLI11 prefixes the
// option's name, parse_errors.cpp the command and the --help hint, so the user reads
// "dgq: error: memory: --layers: must be >= 1, got 0; run 'dgq memory --help'".
// Validators run on the text before CLI11 converts it, so a value the option's type cannot hold
// (a negative seed, 2^40 layers) is refused here too, never wrapped or clamped.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace dgq::cli {

// A decimal whole number in [min, max] ("+", hex, exponents and fractions are refused).
// `meaning`, if given, follows the bound in the message: "(0 = all)". A max that is only the
// option's type limit (INT_MAX, INT64_MAX) is not a domain anyone chose: the message then says
// ">= min", and "at most max" only to a value beyond it.
CLI::Validator whole_number(std::int64_t min, std::int64_t max = std::numeric_limits<int>::max(),
                            const std::string& meaning = "");
// The same for an unsigned 64-bit option (a seed): any decimal in [0, 2^64 - 1], "-1" refused
// rather than wrapped to 2^64 - 1.
CLI::Validator whole_number_u64();

}  // namespace dgq::cli
