// closest_spelling: the "did you mean" of scheme families, spec parameters and CLI options.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "dgq/spelling_suggestion.hpp"

using dgq::closest_spelling;
using dgq::spelling_distance;

namespace {
// A slice of the registry's names, in its listing order, both separators included.
const std::vector<std::string> kFamilies{"fp16",   "q8_0",   "q4_0", "fp8-e4m3", "fp8_per_token_head",
                                         "kivi-2", "kivi-4", "dgq",  "dgq2"};
const std::vector<std::string> kDgqParams{"win",         "group_ratio", "min_var", "max_groups",
                                          "granularity", "markers",     "rot",     "sink"};
}  // namespace

TEST_CASE("closest_spelling of nothing, or among nothing, is no suggestion", "[spelling][edge]") {
  CHECK(closest_spelling("", kFamilies).empty());
  CHECK(closest_spelling("--", {"--threads"}).empty());
  CHECK(closest_spelling("q8_0", {}).empty());
}

TEST_CASE("closest_spelling suggests nothing for a name unlike every candidate", "[spelling][edge]") {
  CHECK(closest_spelling("int3", kFamilies).empty());
  CHECK(closest_spelling("zzzzzz", kDgqParams).empty());
  // Two letters begin too many names to call them an abbreviation.
  CHECK(closest_spelling("ki", kFamilies).empty());
  CHECK(closest_spelling("--ou", {"--output", "--json"}).empty());
  // One letter from every short option is a different option, not a typo of one.
  CHECK(closest_spelling("-x", {"-h", "-o"}).empty());
}

TEST_CASE("closest_spelling ignores case and treats '-' and '_' alike", "[spelling]") {
  CHECK(closest_spelling("Q8_0", kFamilies) == "q8_0");
  CHECK(closest_spelling("fp8_e4m3", kFamilies) == "fp8-e4m3");
  CHECK(closest_spelling("KIVI_2", kFamilies) == "kivi-2");
  CHECK(closest_spelling("group-ratio", kDgqParams) == "group_ratio");
}

TEST_CASE("closest_spelling takes the nearest candidate in edits", "[spelling]") {
  CHECK(closest_spelling("--thread", {"--help", "--threads", "--device"}) == "--threads");
  CHECK(closest_spelling("--thred", {"--help", "--threads", "--device"}) == "--threads");  // two edits in five letters
  CHECK(closest_spelling("dgq3", kFamilies) == "dgq");  // one edit from both dgq and dgq2: the earlier wins
  CHECK(closest_spelling("q80", kFamilies) == "q8_0");
  CHECK(closest_spelling("mni_var", kDgqParams) == "min_var");  // a transposition is one edit
}

TEST_CASE("closest_spelling completes an abbreviation, or a name typed too long", "[spelling]") {
  CHECK(closest_spelling("group", kDgqParams) == "group_ratio");
  CHECK(closest_spelling("fp8", kFamilies) == "fp8-e4m3");  // the nearest of the two it begins
  CHECK(closest_spelling("--schemes", {"--scheme", "--output"}) == "--scheme");
  CHECK(closest_spelling("granularity_mode", kDgqParams) == "granularity");
}

TEST_CASE("closest_spelling prefers a near misspelling to an abbreviation", "[spelling]") {
  // "marker" is one edit from markers: not treated as an abbreviation of anything else.
  CHECK(closest_spelling("marker", kDgqParams) == "markers");
}

TEST_CASE("spelling_distance counts insertions, deletions, substitutions and transpositions once", "[spelling]") {
  CHECK(spelling_distance("", "") == 0);
  CHECK(spelling_distance("", "abc") == 3);
  CHECK(spelling_distance("abc", "") == 3);
  CHECK(spelling_distance("abc", "abc") == 0);
  CHECK(spelling_distance("abc", "abd") == 1);
  CHECK(spelling_distance("abc", "acb") == 1);
  CHECK(spelling_distance("kitten", "sitting") == 3);
}
