// The sweep's run list (grid expansion, names, shards) and its execution.
#include <filesystem>
#include <map>
#include <set>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/device/scheme_factory.hpp"
#include "dgq/sim/files/output/progress.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/replay/replay.hpp"
#include "dgq/sim/sweep/sweep.hpp"
#include "sweep/eval_sweep.hpp"
#include "sweep/number_text.hpp"
#include "sweep/resume_check.hpp"

namespace dgq::sim {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxSweepRuns = 100000;

// The axes of the grid that family declares as parameters, in the grid's order.
std::vector<SweepAxis> axes_of_family(const SweepGrid& g, const std::string& family) {
  std::vector<SweepAxis> axes;
  const SchemeFamily* f = find_scheme_family(family, Device::cpu);
  if (f == nullptr) return axes;
  for (const SweepAxis& a : g.scheme_axes) {
    for (const SchemeParam& p : f->params) {
      if (p.key == a.key) axes.push_back(a);
    }
  }
  return axes;
}

// The keys a spec sets explicitly ("dgq:win=8,markers=bitmap" -> {win, markers}).
std::set<std::string> spec_keys(const std::string& spec) {
  std::set<std::string> keys;
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return keys;
  std::size_t start = colon + 1;
  while (start < spec.size()) {
    const auto comma = spec.find(',', start);
    const std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    keys.insert(item.substr(0, item.find('=')));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return keys;
}

// Every grid point of a spec, last axis fastest; the spec itself when there is no grid.
std::vector<std::string> expand_spec(const std::string& spec, const std::vector<SweepAxis>& axes) {
  const std::set<std::string> own = spec_keys(spec);
  for (const SweepAxis& a : axes) {
    if (own.count(a.key)) {
      throw ParameterError("scheme '" + spec + "' sets " + a.key + ", which [grid] also sweeps; remove one of them");
    }
  }
  std::vector<std::string> specs = {spec};
  for (const SweepAxis& a : axes) {
    if (specs.size() * a.values.size() > kMaxSweepRuns)  // a config of a few KB must not expand to 10^9 runs
      throw ParameterError("the grid of scheme '" + spec + "' has more than " + std::to_string(kMaxSweepRuns) +
                           " points");
    std::vector<std::string> next;
    for (const std::string& s : specs) {
      for (const std::string& v : a.values) {
        next.push_back(s + (s.find(':') == std::string::npos ? ":" : ",") + a.key + "=" + v);
      }
    }
    specs = std::move(next);
  }
  return specs;
}

// The string recorded as the run's `trace` attribute: the config's path for recorded traces
// (not the resolved one, so shard files written from different folders still agree), and
// "synthetic:<label>" for generated ones (their cache sits next to each results file).
std::string trace_identity(const SweepTrace& t) { return t.synthetic ? "synthetic:" + t.label : t.recorded_as; }

// What differs between a cached synthetic trace and the one the config asks for ("" if
// nothing): the label does not encode every option, so an edited config must not silently
// reuse a trace generated from the old one.
std::string cache_mismatch(const TraceMeta& cached, const TraceMeta& wanted) {
  const auto differ = [](const char* what, auto a, auto b) {
    return a == b ? std::string() : std::string(what) + " " + std::to_string(a) + " vs " + std::to_string(b);
  };
  for (const std::string& why :
       {differ("layers", cached.num_layers, wanted.num_layers),
        differ("q heads", cached.num_q_heads, wanted.num_q_heads),
        differ("KV heads", cached.num_kv_heads, wanted.num_kv_heads),
        differ("head_dim", cached.head_dim, wanted.head_dim), differ("tokens", cached.tokens, wanted.tokens),
        differ("probes", cached.q_pos.size(), wanted.q_pos.size()),
        differ("seed", cached.seed.value_or(0), wanted.seed.value_or(0))}) {
    if (!why.empty()) return why;
  }
  if (cached.prompt_kind != wanted.prompt_kind) return "kind " + cached.prompt_kind + " vs " + wanted.prompt_kind;
  if (cached.model != wanted.model) return "model " + cached.model + " vs " + wanted.model;
  if (cached.kv_dtype != wanted.kv_dtype) return "dtype";
  if (cached.noise_mask != wanted.noise_mask) return "noise mask (noise_rate)";
  // The options above are those the label or the shape shows; these cover the rest (rope_theta,
  // outlier channels and scale) and the generator itself.
  if (cached.generator_version != wanted.generator_version)
    return "generator version " + (cached.generator_version ? std::to_string(*cached.generator_version) : "none") +
           " vs " + std::to_string(wanted.generator_version.value_or(0));
  if (cached.generator_options != wanted.generator_options)
    return "generator options '" + cached.generator_options + "' vs '" + wanted.generator_options + "'";
  return "";
}

std::string trace_file(const SweepTrace& t, const std::string& output) {
  if (!t.synthetic) return t.path;
  const std::string path = synthetic_cache_path(output, t);
  if (!fs::exists(path)) {  // write_synthetic_trace writes PATH.partial and renames: a cached file is whole
    fs::create_directories(fs::path(path).parent_path());
    write_synthetic_trace(*t.synthetic, path);
    return path;
  }
  const std::string why = cache_mismatch(TraceReader(path).meta(), synthetic_meta(*t.synthetic));
  if (!why.empty()) {
    throw ParameterError(path + ": this cached trace was generated with other options than [[synthetic]] '" + t.label +
                         "' now has (" + why + "); delete it and the runs made from it, or give the table a new label");
  }
  return path;
}

}  // namespace

std::vector<SweepRun> expand_runs(const SweepConfig& config) {
  std::vector<std::string> specs;  // canonical, in order
  for (const std::string& spec : config.schemes) {
    const std::vector<SweepAxis> axes = axes_of_family(config.grid, make_scheme(spec)->family());
    std::vector<std::string> points = {spec};
    if (!axes.empty()) {
      try {
        points = expand_spec(spec, axes);
      } catch (const ParameterError& e) {
        throw ParameterError(config.config_path + ": " + e.what());
      }
    }
    if (specs.size() + points.size() > kMaxSweepRuns)
      throw ParameterError(config.config_path + ": more than " + std::to_string(kMaxSweepRuns) + " runs");
    for (const std::string& s : points) {
      specs.push_back(make_scheme(s)->spec());
    }
  }
  std::vector<SweepRun> runs;
  std::map<std::string, std::size_t> seen;
  const std::vector<std::string> labels = config.input_labels();
  if (specs.size() * labels.size() > kMaxSweepRuns)
    throw ParameterError(config.config_path + ": more than " + std::to_string(kMaxSweepRuns) + " runs");
  for (std::size_t t = 0; t < labels.size(); ++t) {
    for (const std::string& spec : specs) {
      SweepRun r;
      r.index = runs.size();
      r.scheme = spec;
      r.trace = t;
      r.name = sanitize_run_name(spec + "@" + labels[t]);
      if (!seen.emplace(r.name, r.index).second) {
        throw ParameterError(config.config_path + ": two sweep points are the same run '" + r.name +
                             "' (a scheme listed twice, or a grid value repeated)");
      }
      runs.push_back(std::move(r));
    }
  }
  return runs;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  std::size_t i = 0, n = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    i = std::stoul(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("index");
    const std::string rest = text.substr(slash + 1);
    n = std::stoul(rest, &used);
    if (used != rest.size() || text[0] == '-' || rest[0] == '-') throw std::invalid_argument("count");
  } catch (const std::exception&) {
    throw ParameterError("--shard '" + text + "': expected i/n, e.g. 0/4");
  }
  if (n == 0 || i >= n) throw ParameterError("--shard '" + text + "': need 0 <= i < n");
  return {i, n};
}

std::vector<SweepRun> select_shard(const std::vector<SweepRun>& runs, Shard shard) {
  std::vector<SweepRun> out;
  for (const SweepRun& r : runs) {
    if (r.index % shard.count == shard.index) out.push_back(r);
  }
  return out;
}

std::string synthetic_cache_path(const std::string& output, const SweepTrace& trace) {
  const std::string generator = "gen-v" + std::to_string(kGeneratorVersion);
  return (fs::path(output + ".cache") / generator / (sanitize_run_name(trace.label) + ".h5")).string();
}

SweepReport run_sweep(const SweepConfig& config, const SweepOptions& options) {
  const OutputLock lock(options.output);  // before any work: one writer per output
  SweepReport report;
  const std::vector<SweepRun> all = expand_runs(config);
  const std::vector<SweepRun> mine = select_shard(all, options.shard);
  report.total = all.size();
  report.in_shard = mine.size();
  const RunListing done = list_runs(options.output);
  check_resumed_runs(config, mine, done, options);  // before any work: nothing is written when refused
  if (config.eval) return run_eval_sweep(config, options, mine, done, report);
  // Pending runs grouped by trace, in run-list order.
  std::map<std::size_t, std::vector<const SweepRun*>> by_trace;
  for (const SweepRun& r : mine) {
    if (done.is_complete(r.name)) {
      ++report.skipped_complete;
      continue;
    }
    by_trace[r.trace].push_back(&r);
  }
  Progress progress(options.progress, "sweep", static_cast<std::int64_t>(report.in_shard));
  if (report.skipped_complete > 0)
    progress.already_done("run(s) done (already complete)", static_cast<std::int64_t>(report.skipped_complete));
  for (const auto& [t, runs] : by_trace) {
    const SweepTrace& trace = config.traces[t];
    const TraceReader reader(trace_file(trace, options.output));
    for (std::size_t first = 0; first < runs.size(); first += kSweepSchemesPerPass) {
      const std::size_t last = std::min(runs.size(), first + kSweepSchemesPerPass);
      std::vector<std::unique_ptr<Scheme>> owned;
      std::vector<const Scheme*> schemes;
      std::vector<std::string> names;
      for (std::size_t i = first; i < last; ++i) {
        owned.push_back(make_device_scheme(runs[i]->scheme, options.device));
        schemes.push_back(owned.back().get());
        names.push_back(runs[i]->name);
      }
      ReplayOptions ro;
      ro.threads = options.threads;
      ro.layers = config.layers;
      ro.serialize_schemes = options.device == Device::cuda;
      ro.device = options.device;
      std::vector<RunResult> results = replay_trace(reader, schemes, names, ro);
      for (RunResult& r : results) r.trace_path = trace_identity(trace);
      add_runs(options.output, results, false);
      report.ran += results.size();
      progress.finished("run(s) done (trace " + trace.label + ")", static_cast<std::int64_t>(results.size()));
    }
  }
  return report;
}

}  // namespace dgq::sim
