// The eval's options at the library's boundary (sim::run_eval, which sweeps and the CLI call):
// counts outside their domain are refused before any chunk runs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "dgq/errors.hpp"
#include "dgq/sim/eval/eval.hpp"

namespace {

dgq::sim::EvalOptions seed_options(const std::string& output_name) {
  dgq::sim::EvalOptions o;
  o.model_path = std::string(DGQ_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_model/seed-llama.h5";
  o.text_path = std::string(DGQ_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_tokens/seed-tokens-int32.h5";
  o.output_path = (std::filesystem::temp_directory_path() / output_name).string();
  o.ctx = 8;
  o.schemes = {"q8_0"};
  return o;
}

}  // namespace

// `dgq eval --chunks -3` once ran every chunk (a count below 0 read as "all").
TEST_CASE("eval: a negative chunk count is refused, not run as every chunk", "[eval][errors]") {
  dgq::sim::EvalOptions o = seed_options("dgq-test-eval-negative-chunks.h5");
  o.max_chunks = -3;
  std::filesystem::remove(o.output_path);
  REQUIRE_THROWS_MATCHES(dgq::sim::run_eval(o), dgq::ParameterError,
                         Catch::Message("--chunks -3: must be >= 0 (0 = every whole chunk)"));
  CHECK_FALSE(std::filesystem::exists(o.output_path));
}

TEST_CASE("eval: no scheme is refused by the option's name, --scheme", "[eval][errors]") {
  dgq::sim::EvalOptions o = seed_options("dgq-test-eval-no-scheme.h5");
  o.schemes.clear();
  REQUIRE_THROWS_MATCHES(dgq::sim::run_eval(o), dgq::ParameterError,
                         Catch::Message("--scheme: give at least one scheme"));
}
