#pragma once
// Inputs of the CLI provenance cases (tests/cli/CMakeLists.txt, provenance_case.sh).
#include <string>

namespace dgq::test {
// Writes DIR/prov/: sweep.toml and layer0.toml (two runs on ../good.h5; the second replays layer
// 0 only), sweep.h5 (the sweep, this build), other-version.h5 and allowed.h5 (sweep.h5 with
// run q8_0@good relabelled dgq "not-this-build"), no-provenance.h5 (every run as written before
// provenance), other-config.h5 (a copy of sweep.h5 for layer0.toml), shard0.h5 and
// shard1-other.h5 (the two shards, the second relabelled).
void write_provenance_fixtures(const std::string& dir);
}  // namespace dgq::test
