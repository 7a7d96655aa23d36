#pragma once
// Sweeps (docs/replay.md, "Sweeps"): a TOML config names traces (recorded or synthetic),
// schemes and parameter grids; every grid point x trace is one run with a deterministic
// name. Runs already complete in the results file are skipped, so a rerun resumes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dgq/registry.hpp"
#include "dgq/sim/eval/eval.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "dgq/sim/synth/synth.hpp"

namespace dgq::sim {

// A trace of the sweep: a file, or a synthetic trace generated into the cache folder.
struct SweepTrace {
  std::string label;        // unique within the sweep; part of every run name
  std::string path;         // recorded: resolved path; synthetic: empty (cache decides)
  std::string recorded_as;  // recorded: the path as written in the config
  std::optional<SynthOptions> synthetic;
};

// One [grid] axis over a scheme parameter: the key and its values as spec text.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

// The parameter grids. [grid] accepts every parameter of a registered scheme family
// (dgq/registry.hpp), typed as the family declares it, plus noise_rate.
struct SweepGrid {
  // The axes given, in the registry's order: families in listing order, each family's
  // parameters in declaration order (dgq: win, group_ratio, min_var, max_groups, granularity,
  // markers). A scheme is expanded over the axes its family declares.
  std::vector<SweepAxis> scheme_axes;
  std::vector<double> noise_rate;  // synthetic traces; empty: the trace's own noise_rate
};

// An input of an eval sweep ([eval] in the config, docs/eval.md "Eval sweeps"): one model,
// one token file, one n_ctx. Every scheme of the sweep is one `dgq eval` run on it.
struct SweepEvalInput {
  std::string label;                  // <model label>+<text stem>+ctx<N>; part of every run name
  std::string model_path, text_path;  // resolved against the config's folder
  std::string model_as, text_as;      // as written in the config (recorded in each run)
  std::int64_t ctx = 0;
  CacheMode cache = CacheMode::prefill;       // docs/eval.md, "The causal cache"; "+causal" in the label
  KeyPosition keys = KeyPosition::post_rope;  // docs/eval.md, "Pre-RoPE keys"; "+prerope" in the label
  DType raw_dtype = DType::f16;               // docs/eval.md, "Raw rows"; "+raw-bf16", "+raw-f32" in the label
};
struct SweepEval {
  std::int64_t chunks = 0;  // per input; 0 = every whole chunk of the text
  std::string base = "fp16";
  QueryRounding query_rounding = QueryRounding::off;
  std::vector<SweepEvalInput> inputs;  // model (config order) x text x ctx
};

struct SweepConfig {
  std::string config_path;
  std::vector<SweepTrace> traces;  // recorded first, then synthetic x noise_rate, config order
  std::vector<std::string> schemes;
  SweepGrid grid;
  std::vector<int> layers;  // [replay] layers; empty: all
  // Set for an eval sweep: its runs are `dgq eval` runs over eval->inputs instead of replays
  // of traces (a config has one or the other).
  std::optional<SweepEval> eval;
  // The labels of the sweep's inputs (traces, or eval inputs), in config order.
  std::vector<std::string> input_labels() const;
};

// Parses and validates; unknown keys, wrong types and bad values throw ParameterError
// naming the file, the key and its line.
SweepConfig parse_sweep_config(const std::string& path);
SweepConfig parse_sweep_config_text(const std::string& text, const std::string& path);

struct SweepRun {
  std::size_t index = 0;  // position in the full run list
  std::string name;       // sanitize(canonical spec + "@" + trace label)
  std::string scheme;     // canonical spec
  std::size_t trace = 0;  // index into SweepConfig::traces (eval sweeps: eval->inputs)
};

// The deterministic run list: for each trace (config order), for each scheme (config order),
// for each grid point (over the axes of SweepGrid::scheme_axes its family declares, nested
// loops in that order, the last varying fastest).
std::vector<SweepRun> expand_runs(const SweepConfig& config);

// "i/n" -> {i, n}; throws ParameterError unless 0 <= i < n.
struct Shard {
  std::size_t index = 0, count = 1;
};
Shard parse_shard(const std::string& text);
std::vector<SweepRun> select_shard(const std::vector<SweepRun>& runs, Shard shard);

struct SweepOptions {
  std::string output;  // results file
  Shard shard;
  int threads = 0;
  Device device = Device::cpu;                // the schemes' (make_device_scheme); [eval] sweeps run on the CPU
  ProgressMode progress = ProgressMode::off;  // a unit: one run of the sweep
  // Resume runs that another dgq build or another configuration wrote (each keeps its own
  // dgq_version and config_hash); without it such a run is refused before any work
  // (docs/results-format.md, "Provenance").
  bool allow_mixed_versions = false;
};

struct SweepReport {
  std::size_t total = 0, in_shard = 0, skipped_complete = 0, ran = 0;
};

// Runs the pending runs of the shard, grouped by trace (schemes of a trace share each layer
// read, at most kSweepSchemesPerPass at a time), adding each pass's runs to the results file.
// Eval sweeps: grouped by input, each group one run_eval call (base run + the group's pending
// schemes; resumable by chunk), whose results become runs of the results file.
// A complete run of the shard is skipped only when it records this build's dgq version and
// the config hash this build would record for it; otherwise (unless allow_mixed_versions)
// InputError "OUTPUT: run NAME was written by dgq A (config HA), this is dgq B (config HB); ..."
// before any work.
inline constexpr std::size_t kSweepSchemesPerPass = 8;
SweepReport run_sweep(const SweepConfig& config, const SweepOptions& options);

// Where a synthetic trace is cached: OUTPUT.cache/gen-v<kGeneratorVersion>/<label>.h5, so that
// a new generator version never finds the old generator's traces.
std::string synthetic_cache_path(const std::string& output, const SweepTrace& trace);

// The config hash a run of the sweep records (replay_config_text or eval_run_config_text).
// Reads the trace's metadata (synthetic: synthetic_meta), or the model's attributes and the
// token file; no K/V and no weights.
std::string sweep_run_config_hash(const SweepConfig& config, const SweepRun& run);

}  // namespace dgq::sim
