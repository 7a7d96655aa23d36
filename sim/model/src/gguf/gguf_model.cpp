// A GGUF model read straight into the runner's fp32 weights: the settings from its metadata as
// llama.cpp reads them (src/llama-model.cpp), the tensors decoded with ggml's rules, and every
// setting the runner does not implement refused by its GGUF name. tools/export-model.py makes
// the same model file from the same GGUF; tests/python/test_eval_gguf.py holds the two equal.
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "dgq/sim/model/tokenizer_id.hpp"
#include "gguf/gguf_weight_types.hpp"
#include "model_sources.hpp"

namespace dgq::sim {
namespace {

const char* const kArchitectures[] = {"llama", "gemma3", "qwen2", "qwen3"};

// llama.cpp's 27B Gemma 3 (62 layers) scales queries by 1/sqrt(hidden / heads) (its
// query_pre_attn_scalar), every other size by 1/sqrt(head_dim); the runner implements only the
// latter (tools/export-model.py, GEMMA3_27B_BLOCK_COUNT).
constexpr std::int64_t kGemma3_27bBlockCount = 62;

std::string architecture_of(const gguf::File& f) {
  const std::string arch = f.string_value("general.architecture");
  for (const char* known : kArchitectures)
    if (arch == known) return arch;
  throw InputError(
      one_line(f.path() + ": GGUF architecture '" + arch + "' is not supported (llama, gemma3, qwen2, qwen3)"));
}

std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// The settings of this GGUF the runner does not implement, by their GGUF names: such a model
// would run and be silently wrong (Gemma 3 4B and larger use linear RoPE scaling on their global
// layers, Llama 3.1 per-frequency factors), so it is refused instead.
std::vector<std::string> unimplemented_settings(const gguf::File& f, const ModelConfig& c) {
  const std::string& a = c.architecture;
  std::vector<std::string> found;
  const std::string scaling = f.string_value(a + ".rope.scaling.type", "none");
  const double factor = f.real_value(a + ".rope.scaling.factor", 0.0);
  if (scaling != "none" || (factor != 0.0 && factor != 1.0))
    found.push_back(a + ".rope.scaling.type=" + scaling + " (factor " + format_number(factor) + "): RoPE scaling");
  if (f.find_tensor("rope_freqs.weight") != nullptr)
    found.emplace_back("tensor rope_freqs.weight: per-frequency RoPE factors (Llama 3.1 scaling)");
  const std::int64_t rope_dims = f.integer_value(a + ".rope.dimension_count", c.head_dim);
  if (rope_dims != c.head_dim)
    found.push_back(a + ".rope.dimension_count=" + std::to_string(rope_dims) + " != head_dim " +
                    std::to_string(c.head_dim) + ": partial RoPE");
  const std::int64_t value_dim = f.integer_value(a + ".attention.value_length", c.head_dim);
  if (value_dim != c.head_dim)
    found.push_back(a + ".attention.value_length=" + std::to_string(value_dim) + " != key_length " +
                    std::to_string(c.head_dim));
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (f.real_value(a + "." + key, 0.0) != 0.0) found.push_back(a + "." + key + ": logit soft-capping");
  if (f.integer_value(a + ".expert_count", 0) > 0) found.push_back(a + ".expert_count: mixture of experts");
  if (a == "gemma3" && c.num_layers == kGemma3_27bBlockCount && c.hidden / c.num_q_heads != c.head_dim)
    found.push_back("query_pre_attn_scalar: llama.cpp scales a " + std::to_string(kGemma3_27bBlockCount) +
                    "-layer Gemma 3's queries by 1/sqrt(" + std::to_string(c.hidden / c.num_q_heads) +
                    "), not 1/sqrt(head_dim " + std::to_string(c.head_dim) + ")");
  return found;
}

// What llama.cpp hard-codes per architecture (tools/export-model.py llama_extras, gemma3_extras).
void set_architecture_rules(const gguf::File& f, ModelConfig& c) {
  if (c.architecture == "gemma3") {
    c.activation = "gelu-tanh";
    // float32 sqrt, widened: as llama.cpp scales the embeddings (and the exporter stores it).
    c.embedding_scale = static_cast<double>(std::sqrt(static_cast<float>(c.hidden)));
    c.sliding_window = f.integer_value("gemma3.attention.sliding_window");
    c.sliding_window_pattern = 6;
    c.rope_theta_local = 10000.0;
    c.qk_norm = true;
    c.post_norms = true;
    c.attn_bias = false;
  } else {
    c.activation = "silu";
    c.embedding_scale = 1.0;
    c.sliding_window = 0;
    c.sliding_window_pattern = 0;
    c.rope_theta_local = 0.0;
    c.qk_norm = c.architecture == "qwen3";
    c.post_norms = false;
    c.attn_bias = c.architecture == "qwen2";
  }
}

ModelConfig config_of(const gguf::File& f) {
  ModelConfig c;
  c.architecture = architecture_of(f);
  const std::string& a = c.architecture;
  c.name = gguf_model_name(f);
  c.hidden = f.integer_value(a + ".embedding_length");
  c.num_q_heads = f.integer_value(a + ".attention.head_count");
  c.num_layers = f.integer_value(a + ".block_count");
  c.ffn = f.integer_value(a + ".feed_forward_length");
  c.num_kv_heads = f.integer_value(a + ".attention.head_count_kv");
  c.head_dim = c.num_q_heads > 0 ? f.integer_value(a + ".attention.key_length", c.hidden / c.num_q_heads) : 0;
  // Products of these (heads x head_dim, rows x columns) must not overflow.
  constexpr std::int64_t kMaxDimension = std::int64_t(1) << 24;
  for (const auto& [key, value] : {std::pair{".embedding_length", c.hidden},
                                   {".attention.head_count", c.num_q_heads},
                                   {".block_count", c.num_layers},
                                   {".feed_forward_length", c.ffn},
                                   {".attention.head_count_kv", c.num_kv_heads},
                                   {".attention.key_length", c.head_dim}})
    if (value <= 0 || value > kMaxDimension)
      throw InputError(f.path() + ": GGUF " + a + key + " = " + std::to_string(value) + ", must be in [1, " +
                       std::to_string(kMaxDimension) + "]");
  // Each layer has at least 9 tensors: a count the file cannot hold is refused before the layers
  // are allocated.
  if (static_cast<std::uint64_t>(c.num_layers) * 9 > f.tensors().size())
    throw InputError(f.path() + ": GGUF " + a + ".block_count = " + std::to_string(c.num_layers) +
                     " layers, the file has " + std::to_string(f.tensors().size()) + " tensors");
  c.vocab_size = static_cast<std::int64_t>(f.string_array("tokenizer.ggml.tokens").size());
  c.rope_theta = f.real_value(a + ".rope.freq_base");
  c.rms_eps = f.real_value(a + ".attention.layer_norm_rms_epsilon");
  c.context_length = f.integer_value(a + ".context_length");
  c.bos_token_id = f.integer_value("tokenizer.ggml.bos_token_id");
  // llama.cpp's default when the key is absent: BOS for SentencePiece vocabularies, none for
  // GPT-2 byte-level BPE ones (SmolLM2 has no key and no BOS).
  const bool default_add_bos = f.string_value("tokenizer.ggml.model", "") == "llama";
  c.add_bos = f.integer_value("tokenizer.ggml.add_bos_token", default_add_bos ? 1 : 0) != 0;
  c.tied_output = f.find_tensor("output.weight") == nullptr;
  c.tokenizer_id = tokenizer_id(f);
  const std::vector<std::string> refused = unimplemented_settings(f, c);
  if (!refused.empty()) {
    std::string list;
    for (const std::string& s : refused) list += (list.empty() ? "" : "; ") + s;
    throw InputError(one_line(f.path() + ": the model runner does not implement " + list));
  }
  set_architecture_rules(f, c);
  check_model_config(c, f.path());
  return c;
}

// llama GGUF files hold each head's Q/K rows permuted for llama.cpp's adjacent-pair RoPE
// (convert_hf_to_gguf's `permute`): GGUF row 2j + s of a head is Hugging Face row s * d/2 + j.
// The runner pairs rows as Hugging Face does (rotate-half), so they are put back; qwen2/qwen3 and
// gemma3 rows are not permuted (llama.cpp runs them with NEOX RoPE, which is rotate-half).
std::vector<float> unpermute_rope_rows(const std::vector<float>& w, std::int64_t heads, std::int64_t cols) {
  const std::int64_t rows = static_cast<std::int64_t>(w.size()) / cols;
  const std::int64_t d = rows / heads;
  std::vector<float> out(w.size());
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t j = 0; j < d / 2; ++j)
      for (std::int64_t s = 0; s < 2; ++s) {
        const float* from = w.data() + (h * d + 2 * j + s) * cols;
        std::copy(from, from + cols, out.data() + (h * d + s * (d / 2) + j) * cols);
      }
  return out;
}

class TensorReader {
 public:
  explicit TensorReader(const gguf::File& f) : f_(f) {}

  // The tensor `gguf_name` as [rows][cols] fp32 (rows 0: a vector of cols).
  Weight read(const std::string& gguf_name, std::int64_t rows, std::int64_t cols) const {
    const std::string context = f_.path() + ": GGUF tensor " + gguf_name;
    const gguf::TensorInfo* t = f_.find_tensor(gguf_name);
    if (t == nullptr) throw InputError(context + " missing");
    const std::vector<std::uint64_t> expected =
        rows == 0 ? std::vector<std::uint64_t>{std::uint64_t(cols)}
                  : std::vector<std::uint64_t>{std::uint64_t(cols), std::uint64_t(rows)};
    if (t->dims != expected) throw InputError(context + ": shape " + shape(t->dims) + ", expected " + shape(expected));
    const gguf::WeightType* type = gguf::weight_type(t->type);
    if (type == nullptr)
      throw InputError(context + ": type " + gguf::weight_type_name(t->type) + " is not decoded by dgq (" +
                       gguf::decoded_weight_types() + ")");
    if (cols % type->block_values != 0)
      throw InputError(context + ": row length " + std::to_string(cols) + " is not a multiple of " + type->name +
                       "'s block of " + std::to_string(type->block_values));
    Weight w{rows == 0 ? 1 : rows, cols, {}};
    const std::int64_t row_bytes = cols / type->block_values * type->block_bytes;
    // Compared by division: rows x row_bytes of an absurd shape would overflow.
    if (static_cast<std::uint64_t>(w.rows) > f_.data_bytes() / static_cast<std::uint64_t>(row_bytes))
      throw InputError(context + ": " + std::to_string(w.rows) + " rows of " + std::to_string(row_bytes) +
                       " bytes do not fit in the file's " + std::to_string(f_.data_bytes()) + " data bytes");
    const std::uint8_t* data = f_.tensor_data(*t, static_cast<std::uint64_t>(w.rows * row_bytes));
    w.values.resize(static_cast<std::size_t>(w.rows * w.cols));
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < w.rows; ++r)
      gguf::dequantize_weight_row(t->type, data + r * row_bytes, cols, w.values.data() + r * cols);
    for (std::size_t i = 0; i < w.values.size(); ++i)
      if (!std::isfinite(w.values[i])) throw InputError(context + ": element " + std::to_string(i) + " is not finite");
    return w;
  }

 private:
  const gguf::File& f_;

  // As the exporter's messages write shapes: logical order, rows first.
  static std::string shape(const std::vector<std::uint64_t>& dims) {
    std::string s = "[";
    for (std::size_t i = dims.size(); i-- > 0;) s += std::to_string(dims[i]) + (i > 0 ? ", " : "");
    return s + "]";
  }
};

}  // namespace

std::string gguf_model_name(const gguf::File& f) {
  // Unnamed: the file's name without its extension (as tools/export-model.py names it).
  std::string stem = f.path().substr(f.path().find_last_of('/') + 1);
  stem = stem.substr(0, stem.find_last_of('.'));
  return f.string_value("general.name", stem);
}

ModelConfig read_gguf_model_config(const std::string& path) {
  const gguf::File f(path);
  return config_of(f);
}

Model load_gguf_model(const std::string& path) {
  const gguf::File f(path);
  return model_from_gguf(f);
}

Model model_from_gguf(const gguf::File& f) {
  Model m;
  m.config = config_of(f);
  const ModelConfig& c = m.config;
  const TensorReader in(f);
  m.token_embd = in.read("token_embd.weight", c.vocab_size, c.hidden);
  m.output_norm = in.read("output_norm.weight", 0, c.hidden);
  if (!c.tied_output) m.output = in.read("output.weight", c.vocab_size, c.hidden);
  m.layers.resize(static_cast<std::size_t>(c.num_layers));
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = m.layers[static_cast<std::size_t>(i)];
    l.attn_norm = in.read(p + "attn_norm.weight", 0, c.hidden);
    l.attn_q = in.read(p + "attn_q.weight", c.q_rows(), c.hidden);
    l.attn_k = in.read(p + "attn_k.weight", c.kv_rows(), c.hidden);
    if (c.architecture == "llama") {
      l.attn_q.values = unpermute_rope_rows(l.attn_q.values, c.num_q_heads, c.hidden);
      l.attn_k.values = unpermute_rope_rows(l.attn_k.values, c.num_kv_heads, c.hidden);
    }
    l.attn_v = in.read(p + "attn_v.weight", c.kv_rows(), c.hidden);
    l.attn_output = in.read(p + "attn_output.weight", c.hidden, c.q_rows());
    l.ffn_norm = in.read(p + "ffn_norm.weight", 0, c.hidden);
    l.ffn_gate = in.read(p + "ffn_gate.weight", c.ffn, c.hidden);
    l.ffn_up = in.read(p + "ffn_up.weight", c.ffn, c.hidden);
    l.ffn_down = in.read(p + "ffn_down.weight", c.hidden, c.ffn);
    if (c.qk_norm) {
      l.attn_q_norm = in.read(p + "attn_q_norm.weight", 0, c.head_dim);
      l.attn_k_norm = in.read(p + "attn_k_norm.weight", 0, c.head_dim);
    }
    if (c.attn_bias) {
      l.attn_q_bias = in.read(p + "attn_q.bias", 0, c.q_rows());
      l.attn_k_bias = in.read(p + "attn_k.bias", 0, c.kv_rows());
      l.attn_v_bias = in.read(p + "attn_v.bias", 0, c.kv_rows());
    }
    if (c.post_norms) {
      l.post_attention_norm = in.read(p + "post_attention_norm.weight", 0, c.hidden);
      l.post_ffw_norm = in.read(p + "post_ffw_norm.weight", 0, c.hidden);
    }
  }
  return m;
}

}  // namespace dgq::sim
