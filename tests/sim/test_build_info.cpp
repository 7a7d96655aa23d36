// The build identity baked in by cmake/DgqBuildInfo.cmake: a 40-hex commit (or "unknown"
// outside a git checkout), the dirty flag, and the version string files record.
#include <catch2/catch.hpp>

#include <regex>

#include "dgq/sim/files/provenance/build_info.hpp"

using namespace dgq;

TEST_CASE("the build info is a 40-hex commit or 'unknown', and its version string follows it") {
  const sim::BuildInfo& b = sim::build_info();
  CAPTURE(b.commit, b.dirty, b.diff_hash);
  const bool hex_commit = std::regex_match(b.commit, std::regex("[0-9a-f]{40}"));
  CHECK((hex_commit || b.commit == "unknown"));
  if (b.dirty) {
    CHECK(hex_commit);  // a dirty tree is known only inside a checkout
    CHECK(std::regex_match(b.diff_hash, std::regex("[0-9a-f]{8}")));
    CHECK(b.version_string() == b.commit + "-dirty-" + b.diff_hash);
  } else {
    CHECK(b.diff_hash.empty());
    CHECK(b.version_string() == b.commit);
  }
}

TEST_CASE("a dirty build's version string carries its diff hash, a clean one only the commit") {
  const sim::BuildInfo clean{"0123456789abcdef0123456789abcdef01234567", false, ""};
  const sim::BuildInfo dirty{"0123456789abcdef0123456789abcdef01234567", true, "89abcdef"};
  CHECK(clean.version_string() == "0123456789abcdef0123456789abcdef01234567");
  CHECK(dirty.version_string() == "0123456789abcdef0123456789abcdef01234567-dirty-89abcdef");
}
