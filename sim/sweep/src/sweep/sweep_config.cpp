// The sweep TOML (docs/replay.md, "Sweep configuration"), parsed with toml++. Every key is
// known in advance; anything else is an error naming the key and its line, so a typo never
// silently falls back to a default.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"
#include "dgq/sim/sweep/sweep.hpp"
#include "sweep/number_text.hpp"

namespace dgq::sim {

namespace {

namespace fs = std::filesystem;

// Error context: the config path; messages read "PATH:LINE: key 'name': what".
struct Context {
  std::string path;

  [[noreturn]] void fail(const toml::node& node, const std::string& key, const std::string& what) const {
    const auto line = node.source().begin.line;
    throw ParameterError(path + ":" + std::to_string(line) + ": key '" + key + "': " + what);
  }

  void only_known_keys(const toml::table& table, const std::set<std::string>& known, const std::string& where) const {
    for (auto&& [key, node] : table) {
      if (!known.count(std::string(key.str()))) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        throw ParameterError(path + ":" + std::to_string(key.source().begin.line) + ": unknown key '" +
                             std::string(key.str()) + "'" + (where.empty() ? "" : " in " + where) + " (known: " + list +
                             ")");
      }
    }
  }

  std::string string_value(const toml::node& node, const std::string& key) const {
    if (const auto v = node.value<std::string>(); v && node.is_string()) return *v;
    fail(node, key, "expected a string");
  }
  std::int64_t int_value(const toml::node& node, const std::string& key) const {
    if (node.is_integer()) return *node.value<std::int64_t>();
    fail(node, key, "expected an integer");
  }
  double number_value(const toml::node& node, const std::string& key) const {
    if (node.is_integer() || node.is_floating_point()) return *node.value<double>();
    fail(node, key, "expected a number");
  }

  // A scalar or an array of scalars, each converted by `one`.
  template <class T, class F>
  std::vector<T> list_of(const toml::node& node, const std::string& key, F one) const {
    std::vector<T> out;
    if (const toml::array* a = node.as_array()) {
      if (a->empty()) fail(node, key, "the list is empty");
      for (const toml::node& item : *a) out.push_back(one(item, key));
    } else {
      out.push_back(one(node, key));
    }
    return out;
  }
};

std::vector<double> numbers(const Context& c, const toml::node& n, const std::string& key) {
  return c.list_of<double>(n, key, [&](const toml::node& x, const std::string& k) { return c.number_value(x, k); });
}
std::vector<std::int64_t> integers(const Context& c, const toml::node& n, const std::string& key) {
  return c.list_of<std::int64_t>(n, key, [&](const toml::node& x, const std::string& k) { return c.int_value(x, k); });
}
std::vector<std::string> strings(const Context& c, const toml::node& n, const std::string& key) {
  return c.list_of<std::string>(n, key,
                                [&](const toml::node& x, const std::string& k) { return c.string_value(x, k); });
}

// The words of t[key] (one or a list), each through parse (which throws ParameterError naming the
// word); {fallback} when the key is absent.
template <class Parse, class Value>
std::vector<Value> parsed_words(const Context& c, const toml::table& t, const std::string& key, Parse parse,
                                Value fallback) {
  const toml::node* n = t.get(key);
  if (!n) return {fallback};
  std::vector<Value> out;
  for (const std::string& word : strings(c, *n, key)) {
    try {
      out.push_back(parse(word));
    } catch (const ParameterError& e) {
      c.fail(*n, key, e.what());
    }
  }
  return out;
}

const toml::table& as_table(const Context& c, const toml::node& node, const std::string& key) {
  if (const toml::table* t = node.as_table()) return *t;
  c.fail(node, key, "expected a table");
}

// Tables of an array of tables ([[trace]] / [[synthetic]]).
std::vector<const toml::table*> tables_of(const Context& c, const toml::node& node, const std::string& key) {
  std::vector<const toml::table*> out;
  const toml::array* a = node.as_array();
  if (!a) c.fail(node, key, "expected [[" + key + "]] tables");
  for (const toml::node& item : *a) out.push_back(&as_table(c, item, key));
  return out;
}

SweepTrace parse_recorded(const Context& c, const toml::table& t, const fs::path& base) {
  c.only_known_keys(t, {"path", "label"}, "[[trace]]");
  SweepTrace trace;
  const toml::node* path = t.get("path");
  if (!path) throw ParameterError(c.path + ":" + std::to_string(t.source().begin.line) + ": [[trace]] needs a 'path'");
  trace.recorded_as = c.string_value(*path, "path");
  const fs::path p(trace.recorded_as);
  trace.path = (p.is_absolute() ? p : base / p).lexically_normal().string();
  trace.label = fs::path(trace.recorded_as).stem().string();
  if (const toml::node* label = t.get("label")) trace.label = c.string_value(*label, "label");
  return trace;
}

SynthOptions parse_synthetic(const Context& c, const toml::table& t, std::string& label, std::vector<double>& noise) {
  c.only_known_keys(t,
                    {"label", "kind", "model", "tokens", "layers", "q_heads", "kv_heads", "head_dim", "probes", "seed",
                     "noise_rate", "dtype", "rope_theta", "outlier_channels", "outlier_scale"},
                    "[[synthetic]]");
  SynthOptions o;
  noise = {o.noise_rate};
  for (auto&& [k, node] : t) {
    const std::string key(k.str());
    if (key == "label")
      label = c.string_value(node, key);
    else if (key == "kind")
      o.kind = c.string_value(node, key);
    else if (key == "model")
      o.model = c.string_value(node, key);
    else if (key == "tokens")
      o.tokens = c.int_value(node, key);
    else if (key == "layers")
      o.layers = static_cast<int>(c.int_value(node, key));
    else if (key == "q_heads")
      o.q_heads = static_cast<int>(c.int_value(node, key));
    else if (key == "kv_heads")
      o.kv_heads = static_cast<int>(c.int_value(node, key));
    else if (key == "head_dim")
      o.head_dim = static_cast<int>(c.int_value(node, key));
    else if (key == "probes")
      o.probes = static_cast<int>(c.int_value(node, key));
    else if (key == "seed")
      o.seed = static_cast<std::uint64_t>(c.int_value(node, key));
    else if (key == "noise_rate")
      noise = numbers(c, node, key);
    else if (key == "dtype")
      o.dtype = parse_dtype(c.string_value(node, key));
    else if (key == "rope_theta")
      o.rope_theta = c.number_value(node, key);
    else if (key == "outlier_channels")
      o.outlier_channels = static_cast<int>(c.int_value(node, key));
    else if (key == "outlier_scale")
      o.outlier_scale = c.number_value(node, key);
  }
  try {
    o.validate();
  } catch (const ParameterError& e) {
    throw ParameterError(c.path + ":" + std::to_string(t.source().begin.line) + ": [[synthetic]]: " + e.what());
  }
  if (label.empty()) label = o.kind + "-L" + std::to_string(o.tokens) + "-s" + std::to_string(o.seed);
  return o;
}

void parse_grid(const Context& c, const toml::table& t, SweepGrid& g) {
  // Every registered family's parameters (the first declaration of a key gives its type and
  // its place among the axes), plus the traces' noise rate.
  std::set<std::string> known{"noise_rate"};
  std::vector<const SchemeParam*> params;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device != Device::cpu) continue;
    for (const SchemeParam& p : f.params) {
      if (known.emplace(p.key).second) params.push_back(&p);
    }
  }
  c.only_known_keys(t, known, "[grid]");
  if (const toml::node* n = t.get("noise_rate")) g.noise_rate = numbers(c, *n, "noise_rate");
  for (const SchemeParam* p : params) {
    const std::string key(p->key);
    const toml::node* node = t.get(key);
    if (node == nullptr) continue;
    SweepAxis axis{key, {}};
    switch (p->kind) {
      case SchemeParam::Kind::integer:
        for (const std::int64_t v : integers(c, *node, key)) axis.values.push_back(std::to_string(v));
        break;
      case SchemeParam::Kind::number:
        for (const double v : numbers(c, *node, key)) axis.values.push_back(short_number(v));
        break;
      case SchemeParam::Kind::word: axis.values = strings(c, *node, key); break;
    }
    g.scheme_axes.push_back(std::move(axis));
  }
}

// [eval] with its [[eval.model]] tables: every model x text x ctx is one input.
SweepEval parse_eval(const Context& c, const toml::table& t, const fs::path& base) {
  c.only_known_keys(t, {"ctx", "chunks", "base", "query_rounding", "cache", "keys", "raw_dtype", "model"}, "[eval]");
  SweepEval eval;
  const int line = static_cast<int>(t.source().begin.line);
  const toml::node* ctx_node = t.get("ctx");
  if (!ctx_node)
    throw ParameterError(c.path + ":" + std::to_string(line) + ": [eval] needs 'ctx' (n_ctx, one or a list)");
  const std::vector<std::int64_t> ctxs = integers(c, *ctx_node, "ctx");
  for (const std::int64_t n : ctxs)
    if (n < 4 || n > (1 << 20)) c.fail(*ctx_node, "ctx", std::to_string(n) + " is outside [4, 1048576]");
  if (const toml::node* n = t.get("chunks")) {
    eval.chunks = c.int_value(*n, "chunks");
    if (eval.chunks < 0) c.fail(*n, "chunks", "must be >= 0 (0 = every whole chunk)");
  }
  if (const toml::node* n = t.get("base")) {
    eval.base = c.string_value(*n, "base");
    try {
      (void)SchemeCache(eval.base, QueryRounding::off);
    } catch (const ParameterError& e) {
      c.fail(*n, "base", e.what());
    }
  }
  if (const toml::node* n = t.get("query_rounding")) {
    try {
      eval.query_rounding = parse_query_rounding(c.string_value(*n, "query_rounding"));
    } catch (const ParameterError& e) {
      c.fail(*n, "query_rounding", e.what());
    }
  }
  const std::vector<CacheMode> caches = parsed_words(c, t, "cache", parse_cache_mode, CacheMode::prefill);
  const std::vector<KeyPosition> key_positions = parsed_words(c, t, "keys", parse_key_position, KeyPosition::post_rope);
  const std::vector<DType> raw_dtypes = parsed_words(c, t, "raw_dtype", parse_raw_dtype, DType::f16);
  const toml::node* models = t.get("model");
  if (!models)
    throw ParameterError(c.path + ":" + std::to_string(line) + ": [eval] needs [[eval.model]] tables (path, texts)");
  const auto resolve = [&](const std::string& p) {
    const fs::path f(p);
    return (f.is_absolute() ? f : base / f).lexically_normal().string();
  };
  for (const toml::table* m : tables_of(c, *models, "eval.model")) {
    c.only_known_keys(*m, {"path", "label", "texts"}, "[[eval.model]]");
    const std::string where = c.path + ":" + std::to_string(m->source().begin.line) + ": [[eval.model]]";
    const toml::node* path = m->get("path");
    const toml::node* texts = m->get("texts");
    if (!path || !texts) throw ParameterError(where + " needs 'path' (a model file) and 'texts' (token files)");
    const std::string model_as = c.string_value(*path, "path");
    std::string label = fs::path(model_as).stem().string();
    if (const toml::node* l = m->get("label")) label = c.string_value(*l, "label");
    for (const std::string& text_as : strings(c, *texts, "texts")) {
      for (const std::int64_t n : ctxs)
        for (const CacheMode cache : caches)
          for (const KeyPosition keys : key_positions)
            for (const DType raw_dtype : raw_dtypes) {
              SweepEvalInput in;
              in.model_as = model_as;
              in.text_as = text_as;
              in.model_path = resolve(model_as);
              in.text_path = resolve(text_as);
              in.ctx = n;
              in.cache = cache;
              in.keys = keys;
              in.raw_dtype = raw_dtype;
              // The default raw dtype adds nothing to the label, as the default cache and keys.
              in.label = label + "+" + fs::path(text_as).stem().string() + "+ctx" + std::to_string(n) +
                         (cache == CacheMode::causal ? "+causal" : "") +
                         (keys == KeyPosition::pre_rope ? "+prerope" : "") +
                         (raw_dtype == DType::f16 ? "" : "+raw-" + std::string(dtype_name(raw_dtype)));
              eval.inputs.push_back(std::move(in));
            }
    }
  }
  return eval;
}

}  // namespace

std::vector<std::string> SweepConfig::input_labels() const {
  std::vector<std::string> labels;
  if (eval) {
    for (const SweepEvalInput& in : eval->inputs) labels.push_back(in.label);
  } else {
    for (const SweepTrace& t : traces) labels.push_back(t.label);
  }
  return labels;
}

SweepConfig parse_sweep_config_text(const std::string& text, const std::string& path) {
  const Context c{path};
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ParameterError(path + ":" + std::to_string(e.source().begin.line) + ":" +
                         std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
  c.only_known_keys(root, {"schemes", "cache_k", "cache_v", "traces", "trace", "synthetic", "grid", "replay", "eval"},
                    "");
  SweepConfig config;
  config.config_path = path;
  const fs::path base = fs::path(path).parent_path();
  if (const toml::node* s = root.get("schemes")) config.schemes = strings(c, *s, "schemes");
  for (const std::string& spec : config.schemes) {
    try {
      (void)make_scheme(spec);
    } catch (const ParameterError& e) {
      c.fail(*root.get("schemes"), "schemes", e.what());
    }
  }
  // K and V apart, as the CLI's --cache-k/--cache-v: the pairs follow the schemes.
  const toml::node* cache_k = root.get("cache_k");
  const toml::node* cache_v = root.get("cache_v");
  if (cache_k != nullptr || cache_v != nullptr) {
    const toml::node& where = cache_k != nullptr ? *cache_k : *cache_v;
    const std::vector<std::string> k = cache_k ? strings(c, *cache_k, "cache_k") : std::vector<std::string>{};
    const std::vector<std::string> v = cache_v ? strings(c, *cache_v, "cache_v") : std::vector<std::string>{};
    try {
      for (const std::string& spec : kv_pair_specs(k, v, "cache_k", "cache_v")) {
        (void)make_scheme(spec);
        config.schemes.push_back(spec);
      }
    } catch (const ParameterError& e) {
      c.fail(where, cache_k != nullptr ? "cache_k" : "cache_v", e.what());
    }
  }
  if (config.schemes.empty())
    throw ParameterError(path + ": the key 'schemes' (a list of scheme specs) or 'cache_k'/'cache_v' is required");
  if (const toml::node* g = root.get("grid")) parse_grid(c, as_table(c, *g, "grid"), config.grid);
  if (const toml::node* r = root.get("replay")) {
    const toml::table& t = as_table(c, *r, "replay");
    c.only_known_keys(t, {"layers"}, "[replay]");
    if (const toml::node* l = t.get("layers")) {
      for (auto v : integers(c, *l, "layers")) config.layers.push_back(static_cast<int>(v));
    }
  }
  if (const toml::node* n = root.get("traces")) {  // shorthand: traces = ["a.h5", ...]
    for (const std::string& p : strings(c, *n, "traces")) {
      toml::table t{{"path", p}};
      config.traces.push_back(parse_recorded(c, t, base));
    }
  }
  if (const toml::node* n = root.get("trace")) {
    for (const toml::table* t : tables_of(c, *n, "trace")) config.traces.push_back(parse_recorded(c, *t, base));
  }
  if (const toml::node* n = root.get("synthetic")) {
    for (const toml::table* t : tables_of(c, *n, "synthetic")) {
      std::string label;
      std::vector<double> own_noise;
      const SynthOptions o = parse_synthetic(c, *t, label, own_noise);
      const std::vector<double>& rates = config.grid.noise_rate.empty() ? own_noise : config.grid.noise_rate;
      for (double rate : rates) {
        SweepTrace trace;
        trace.synthetic = o;
        trace.synthetic->noise_rate = rate;
        try {
          trace.synthetic->validate();
        } catch (const ParameterError& e) {
          throw ParameterError(path + ": noise_rate " + short_number(rate) + ": " + e.what());
        }
        trace.label = rate == 0.0 ? label : label + "-noise" + short_number(rate);
        config.traces.push_back(std::move(trace));
      }
    }
  }
  if (const toml::node* e = root.get("eval")) {
    if (!config.traces.empty() || root.get("replay") || !config.grid.noise_rate.empty())
      throw ParameterError(path +
                           ": [eval] runs a model on token files; it cannot be combined with traces, "
                           "[replay] or a noise_rate grid (use two configs)");
    config.eval = parse_eval(c, as_table(c, *e, "eval"), base);
  }
  if (!config.eval && config.traces.empty())
    throw ParameterError(path + ": no traces: add [[trace]] or [[synthetic]] tables (or [eval] for model runs)");
  std::set<std::string> labels;
  for (const std::string& label : config.input_labels()) {
    if (!labels.insert(label).second) {
      throw ParameterError(path + ": two " + std::string(config.eval ? "eval inputs" : "traces") + " are labelled '" +
                           label + "' (set 'label' to tell them apart)");
    }
  }
  return config;
}

SweepConfig parse_sweep_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ParameterError(path + ": cannot read the sweep config");
  std::stringstream text;
  text << in.rdbuf();
  return parse_sweep_config_text(text.str(), path);
}

}  // namespace dgq::sim
