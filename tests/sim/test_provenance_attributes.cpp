// The provenance every dgq writer records (docs/results-format.md, "Provenance"): compressed
// files and the traces decompressed from them carry this build and a config hash; files from
// before provenance read as "not recorded"; the refusal line names both sides.
#include <catch2/catch.hpp>

#include <filesystem>

#include "dgq/sim/files/compressed.hpp"
#include "dgq/sim/files/provenance/build_info.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/synth/synth.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {
sim::SynthOptions one_layer_synthetic() {
  return {.layers = 1, .q_heads = 2, .kv_heads = 1, .head_dim = 16, .tokens = 64, .probes = 2};
}
}  // namespace

TEST_CASE("compressed files record this build and a hash of scheme and trace") {
  const std::string dir = test::scratch_dir("provenance-compressed");
  sim::write_synthetic_trace(one_layer_synthetic(), dir + "/t.h5");
  const auto q8 = make_scheme("q8_0"), fp16 = make_scheme("fp16");
  sim::compress_trace(dir + "/t.h5", dir + "/a.h5", *q8, 1);
  sim::compress_trace(dir + "/t.h5", dir + "/b.h5", *q8, 2);
  sim::compress_trace(dir + "/t.h5", dir + "/c.h5", *fp16);
  const sim::FileProvenance a = sim::read_file_provenance(dir + "/a.h5");
  CHECK(a.format == "dgq-compressed");
  CHECK(a.version == sim::build_info().version_string());
  CHECK(a.commit == sim::build_info().commit);
  CHECK(a.dirty == sim::build_info().dirty);
  REQUIRE(a.config_hash);
  CHECK(a.config_hash == sim::read_file_provenance(dir + "/b.h5").config_hash);  // threads do not count
  CHECK(a.config_hash != sim::read_file_provenance(dir + "/c.h5").config_hash);
  sim::decompress_to_trace(dir + "/a.h5", dir + "/back.h5");
  const sim::FileProvenance back = sim::read_file_provenance(dir + "/back.h5");
  CHECK(back.version == sim::build_info().version_string());
  REQUIRE(back.config_hash);
  CHECK(back.config_hash != a.config_hash);
}

TEST_CASE("a file written before provenance reads as not recorded") {
  // The shipped traces predate provenance.
  const sim::FileProvenance p = sim::read_file_provenance(std::string(DGQ_SOURCE_DIR) + "/data/synthetic-code-2k.h5");
  CHECK(p.format == "dgq-trace");
  CHECK_FALSE(p.version);
  CHECK_FALSE(p.commit);
  CHECK_FALSE(p.dirty);
  CHECK_FALSE(p.config_hash);
}

TEST_CASE("require_provenance passes equal records, refuses others with one line, and allows them on request") {
  const sim::Provenance here = sim::this_build("0123456789abcdef");
  CHECK(here.version == sim::build_info().version_string());
  CHECK_NOTHROW(sim::require_provenance("r.h5", "run x", here, here, false));
  const sim::Provenance old;  // nothing recorded
  CHECK(old.version == "unknown");
  CHECK(old.config_hash == "unknown");
  CHECK_THROWS_WITH(sim::require_provenance("r.h5", "run x", old, here, false),
                    "r.h5: run x was written by dgq unknown (config unknown), this is dgq " + here.version +
                        " (config 0123456789abcdef); rerun into a new output or pass --allow-mixed-versions");
  CHECK_THROWS_AS(sim::require_provenance("r.h5", "run x", old, here, false), InputError);
  CHECK_NOTHROW(sim::require_provenance("r.h5", "run x", old, here, true));
  const sim::Provenance other_config = sim::this_build("fedcba9876543210");
  CHECK_THROWS_AS(sim::require_provenance("r.h5", "run x", other_config, here, false), InputError);
}
