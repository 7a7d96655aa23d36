// Reads a dgq model file (docs/model-format.md; a GGUF goes to gguf_model.cpp) into fp32 weights, checking every
// attribute and tensor before the runner sees it: one clear error naming the file and the tensor at fault.
#include <cmath>
#include <string>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/model/gguf_file.hpp"
#include "dgq/sim/model/model.hpp"
#include "model_sources.hpp"

namespace dgq::sim {
namespace {

std::int64_t positive(hid_t file, const std::string& name, const std::string& context) {
  const std::int64_t v = h5::read_int_attribute(file, name, context);
  if (v <= 0) throw InputError(context + ": attribute '" + name + "' = " + std::to_string(v) + ", must be > 0");
  return v;
}

ModelConfig read_config(hid_t file, const std::string& path) {
  const std::string format = h5::read_string_attribute(file, "format", path);
  if (format != "dgq-model") throw InputError(path + ": format is '" + format + "', expected 'dgq-model'");
  const std::int64_t version = h5::read_int_attribute(file, "version", path);
  if (version != kModelFormatVersion)
    throw InputError(path + ": model format version " + std::to_string(version) + ", this dgq reads " +
                     std::to_string(kModelFormatVersion));
  ModelConfig c;
  c.architecture = h5::read_string_attribute(file, "architecture", path);
  if (c.architecture != "llama" && c.architecture != "gemma3" && c.architecture != "qwen2" && c.architecture != "qwen3")
    throw InputError(path + ": unknown architecture '" + c.architecture + "' (known: llama, gemma3, qwen2, qwen3)");
  const std::string pairing = h5::read_string_attribute(file, "rope_pairing", path);
  if (pairing != "rotate-half")
    throw InputError(path + ": rope_pairing '" + pairing + "', the runner implements 'rotate-half'");
  c.name = h5::read_string_attribute(file, "model", path);
  c.activation = h5::read_string_attribute(file, "activation", path);
  if (c.activation != "silu" && c.activation != "gelu-tanh")
    throw InputError(path + ": unknown activation '" + c.activation + "' (known: silu, gelu-tanh)");
  c.num_layers = positive(file, "num_layers", path);
  c.hidden = positive(file, "hidden", path);
  c.ffn = positive(file, "ffn", path);
  c.num_q_heads = positive(file, "num_q_heads", path);
  c.num_kv_heads = positive(file, "num_kv_heads", path);
  c.head_dim = positive(file, "head_dim", path);
  c.vocab_size = positive(file, "vocab_size", path);
  c.context_length = positive(file, "context_length", path);
  c.bos_token_id = h5::read_int_attribute(file, "bos_token_id", path);
  c.add_bos = h5::read_int_attribute(file, "add_bos", path) != 0;
  c.rope_theta = h5::read_double_attribute(file, "rope_theta", path);
  c.rope_theta_local = h5::read_double_attribute(file, "rope_theta_local", path);
  c.rms_eps = h5::read_double_attribute(file, "rms_eps", path);
  c.embedding_scale = h5::read_double_attribute(file, "embedding_scale", path);
  c.sliding_window = h5::read_int_attribute(file, "sliding_window", path);
  c.sliding_window_pattern = h5::read_int_attribute(file, "sliding_window_pattern", path);
  c.qk_norm = h5::read_int_attribute(file, "qk_norm", path) != 0;
  c.post_norms = h5::read_int_attribute(file, "post_norms", path) != 0;
  // Absent in model files older than the qwen2 support, whose models have neither.
  c.attn_bias = h5::has_attribute(file, "attn_bias") && h5::read_int_attribute(file, "attn_bias", path) != 0;
  c.tied_output = !h5::has_attribute(file, "tied_output") || h5::read_int_attribute(file, "tied_output", path) != 0;
  if (h5::has_attribute(file, "tokenizer_id")) c.tokenizer_id = h5::read_string_attribute(file, "tokenizer_id", path);
  check_model_config(c, path);
  return c;
}

Weight read_weight(hid_t tensors, const std::string& path, const std::string& name, std::int64_t rows,
                   std::int64_t cols) {
  const std::string context = path + ": tensor " + name;
  h5::Handle ds = h5::open_dataset(tensors, name, context);
  h5::Handle type(h5::check(H5Dget_type(ds.get()), context), h5::Handle::Kind::datatype);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    throw InputError(context + ": expected a float dtype, found " + h5::describe_type(type.get()));
  const auto shape = h5::dataset_shape(ds.get());
  const std::vector<hsize_t> expected =
      rows == 0 ? std::vector<hsize_t>{hsize_t(cols)} : std::vector<hsize_t>{hsize_t(rows), hsize_t(cols)};
  if (shape != expected)
    throw InputError(context + ": shape " + h5::shape_string(shape) + ", expected " + h5::shape_string(expected));
  Weight w{rows == 0 ? 1 : rows, cols, {}};
  w.values.resize(static_cast<std::size_t>(w.rows * w.cols));
  h5::read_all(ds.get(), H5T_NATIVE_FLOAT, w.values.data(), context);
  for (std::size_t i = 0; i < w.values.size(); ++i)
    if (!std::isfinite(w.values[i])) throw InputError(context + ": element " + std::to_string(i) + " is not finite");
  return w;
}

}  // namespace

void check_model_config(const ModelConfig& c, const std::string& path) {
  if (c.head_dim <= 0 || c.vocab_size <= 0 || c.context_length <= 0)
    throw InputError(path + ": head_dim " + std::to_string(c.head_dim) + ", vocab_size " +
                     std::to_string(c.vocab_size) + " and context_length " + std::to_string(c.context_length) +
                     " must be > 0");
  if (c.num_q_heads % c.num_kv_heads != 0)
    throw InputError(path + ": num_q_heads " + std::to_string(c.num_q_heads) + " is not a multiple of num_kv_heads " +
                     std::to_string(c.num_kv_heads));
  if (c.head_dim % 2 != 0)
    throw InputError(path + ": head_dim " + std::to_string(c.head_dim) + " must be even for RoPE");
  if (c.bos_token_id < 0 || c.bos_token_id >= c.vocab_size)
    throw InputError(path + ": bos_token_id " + std::to_string(c.bos_token_id) + " outside the vocabulary");
  if (!(c.rope_theta > 0) || !(c.rms_eps > 0) || !std::isfinite(c.rope_theta) || !std::isfinite(c.rms_eps))
    throw InputError(path + ": rope_theta and rms_eps must be finite and > 0");
  if (c.sliding_window < 0 || c.sliding_window_pattern < 0 ||
      (c.sliding_window_pattern > 0 && (c.sliding_window == 0 || c.rope_theta_local <= 0)))
    throw InputError(path + ": inconsistent sliding_window / sliding_window_pattern / rope_theta_local");
}

bool ModelConfig::is_local_layer(std::int64_t layer) const {
  return sliding_window_pattern > 0 && layer % sliding_window_pattern != sliding_window_pattern - 1;
}

ModelConfig read_model_config(const std::string& path) {
  if (gguf::has_gguf_magic(path)) return read_gguf_model_config(path);
  h5::Handle file = h5::open_file_readonly(path);
  return read_config(file.get(), path);
}

Model load_model(const std::string& path) {
  if (gguf::has_gguf_magic(path)) return load_gguf_model(path);
  h5::Handle file = h5::open_file_readonly(path);
  Model m;
  m.config = read_config(file.get(), path);
  const ModelConfig& c = m.config;
  h5::Handle tensors = h5::open_group(file.get(), "tensors", path + ": group /tensors");
  const hid_t t = tensors.get();
  m.token_embd = read_weight(t, path, "token_embd", c.vocab_size, c.hidden);
  m.output_norm = read_weight(t, path, "output_norm", 0, c.hidden);
  if (!c.tied_output) m.output = read_weight(t, path, "output", c.vocab_size, c.hidden);
  m.layers.resize(static_cast<std::size_t>(c.num_layers));
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = m.layers[static_cast<std::size_t>(i)];
    l.attn_norm = read_weight(t, path, p + "attn_norm", 0, c.hidden);
    l.attn_q = read_weight(t, path, p + "attn_q", c.q_rows(), c.hidden);
    l.attn_k = read_weight(t, path, p + "attn_k", c.kv_rows(), c.hidden);
    l.attn_v = read_weight(t, path, p + "attn_v", c.kv_rows(), c.hidden);
    l.attn_output = read_weight(t, path, p + "attn_output", c.hidden, c.q_rows());
    l.ffn_norm = read_weight(t, path, p + "ffn_norm", 0, c.hidden);
    l.ffn_gate = read_weight(t, path, p + "ffn_gate", c.ffn, c.hidden);
    l.ffn_up = read_weight(t, path, p + "ffn_up", c.ffn, c.hidden);
    l.ffn_down = read_weight(t, path, p + "ffn_down", c.hidden, c.ffn);
    if (c.qk_norm) {
      l.attn_q_norm = read_weight(t, path, p + "attn_q_norm", 0, c.head_dim);
      l.attn_k_norm = read_weight(t, path, p + "attn_k_norm", 0, c.head_dim);
    }
    if (c.attn_bias) {
      l.attn_q_bias = read_weight(t, path, p + "attn_q.bias", 0, c.q_rows());
      l.attn_k_bias = read_weight(t, path, p + "attn_k.bias", 0, c.kv_rows());
      l.attn_v_bias = read_weight(t, path, p + "attn_v.bias", 0, c.kv_rows());
    }
    if (c.post_norms) {
      l.post_attention_norm = read_weight(t, path, p + "post_attention_norm", 0, c.hidden);
      l.post_ffw_norm = read_weight(t, path, p + "post_ffw_norm", 0, c.hidden);
    }
  }
  return m;
}

}  // namespace dgq::sim
