// dgq-llama-fixture: llama.cpp's side of the fixture that pins `dgq eval` to llama.cpp
// (tools/make-llama-fixture.sh, docs/eval.md "Pinned to llama.cpp"). Built against libllama of the
// pinned llama-cpp-python sdist by bench/ggml/CMakeLists.txt; not part of the project's build.
//
//   dgq-llama-fixture f32 IN.gguf OUT.gguf
//       requantize every tensor to F32 (llama_model_quantize, ftype ALL_F32, allow_requantize,
//       pure): the weights the exporter dequantizes into the dgq model file, in llama.cpp's format.
//   dgq-llama-fixture logits MODEL.gguf TOKENS.txt N_CTX [THREADS]
//       TOKENS.txt: whitespace-separated token ids (no BOS added). Cut into floor(n / N_CTX)
//       chunks; each chunk's first token is replaced by BOS when the vocabulary adds BOS; each
//       chunk is one decode from position 0 with a fresh cache (F32 K and V, flash attention off),
//       and the logits at positions N_CTX/2 .. N_CTX-2 are scored against the next token, as
//       llama-perplexity does. One line per scored token on stdout:
//         chunk pos target target_logprob id_1 logprob_1 ... id_8 logprob_8
//       (log-softmax in double; top 8 by logit, ties by smaller id; %.9g).
//   dgq-llama-fixture tokenize MODEL.gguf TEXT.txt
//       the token ids of the file's bytes (add_special = false, parse_special = false: as the
//       dgq token files, which carry no BOS), space-separated on one line.
#include "llama.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kTop = 8;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "dgq-llama-fixture: %s\n", message.c_str());
  std::exit(1);
}

void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level >= GGML_LOG_LEVEL_WARN) std::fputs(text, stderr);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

llama_model* load_model(const std::string& path, bool vocab_only = false) {
  llama_model_params params = llama_model_default_params();
  params.n_gpu_layers = 0;
  params.vocab_only = vocab_only;
  llama_model* model = llama_model_load_from_file(path.c_str(), params);
  if (model == nullptr) die("cannot load " + path);
  return model;
}

int cmd_f32(const std::string& in, const std::string& out) {
  llama_model_quantize_params params = llama_model_quantize_default_params();
  params.nthread = 2;
  params.ftype = LLAMA_FTYPE_ALL_F32;
  params.allow_requantize = true;
  params.quantize_output_tensor = true;
  params.pure = true;
  if (llama_model_quantize(in.c_str(), out.c_str(), &params) != 0) die("llama_model_quantize failed");
  return 0;
}

int cmd_tokenize(const std::string& model_path, const std::string& text_path) {
  llama_model* model = load_model(model_path, true);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const std::string text = read_file(text_path);
  std::vector<llama_token> tokens(text.size() + 16);
  int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                         static_cast<int32_t>(tokens.size()), false, false);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), false, false);
    if (n < 0) die("llama_tokenize failed");
  }
  for (int i = 0; i < n; ++i) std::printf(i == 0 ? "%d" : " %d", tokens[static_cast<size_t>(i)]);
  std::printf("\n");
  llama_model_free(model);
  return 0;
}

int cmd_logits(const std::string& model_path, const std::string& tokens_path, int n_ctx, int threads) {
  if (n_ctx < 4 || n_ctx % 2 != 0) die("N_CTX must be even and >= 4");
  std::vector<llama_token> all;
  {
    std::istringstream in(read_file(tokens_path));
    long long id = 0;
    while (in >> id) all.push_back(static_cast<llama_token>(id));
  }
  const size_t chunks = all.size() / static_cast<size_t>(n_ctx);
  if (chunks == 0) die("fewer tokens than N_CTX");

  llama_model* model = load_model(model_path);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  const bool add_bos = llama_vocab_get_add_bos(vocab);

  llama_context_params cparams = llama_context_default_params();
  cparams.n_ctx = static_cast<uint32_t>(n_ctx);
  cparams.n_batch = static_cast<uint32_t>(n_ctx);
  cparams.n_ubatch = static_cast<uint32_t>(n_ctx);
  cparams.n_seq_max = 1;
  cparams.n_threads = threads;
  cparams.n_threads_batch = threads;
  cparams.type_k = GGML_TYPE_F32;
  cparams.type_v = GGML_TYPE_F32;
  cparams.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cparams.swa_full = true;
  cparams.no_perf = true;
  llama_context* ctx = llama_init_from_model(model, cparams);
  if (ctx == nullptr) die("cannot create the context");

  std::fprintf(stderr, "dgq-llama-fixture: %zu chunks of %d, vocab %d, add_bos %d, threads %d\n", chunks, n_ctx,
               n_vocab, add_bos ? 1 : 0, threads);
  llama_batch batch = llama_batch_init(n_ctx, 0, 1);
  const int first = n_ctx / 2;
  std::vector<double> logprob(static_cast<size_t>(n_vocab));
  std::vector<int> order(static_cast<size_t>(n_vocab));
  for (size_t c = 0; c < chunks; ++c) {
    std::vector<llama_token> chunk(all.begin() + static_cast<long>(c * n_ctx),
                                   all.begin() + static_cast<long>((c + 1) * n_ctx));
    if (add_bos) chunk[0] = llama_vocab_bos(vocab);
    llama_memory_clear(llama_get_memory(ctx), true);
    batch.n_tokens = n_ctx;
    for (int i = 0; i < n_ctx; ++i) {
      batch.token[i] = chunk[static_cast<size_t>(i)];
      batch.pos[i] = i;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = 1;
    }
    if (llama_decode(ctx, batch) != 0) die("llama_decode failed");
    for (int pos = first; pos <= n_ctx - 2; ++pos) {
      const float* z = llama_get_logits_ith(ctx, pos);
      if (z == nullptr) die("no logits");
      double max = z[0];
      for (int v = 1; v < n_vocab; ++v) max = std::max(max, static_cast<double>(z[v]));
      double sum = 0.0;
      for (int v = 0; v < n_vocab; ++v) sum += std::exp(static_cast<double>(z[v]) - max);
      const double log_sum = max + std::log(sum);
      for (int v = 0; v < n_vocab; ++v) logprob[static_cast<size_t>(v)] = static_cast<double>(z[v]) - log_sum;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + kTop, order.end(),
                        [&](int a, int b) { return z[a] != z[b] ? z[a] > z[b] : a < b; });
      const int target = chunk[static_cast<size_t>(pos + 1)];
      std::printf("%zu %d %d %.9g", c, pos, target, logprob[static_cast<size_t>(target)]);
      for (int k = 0; k < kTop; ++k)
        std::printf(" %d %.9g", order[static_cast<size_t>(k)],
                    logprob[static_cast<size_t>(order[static_cast<size_t>(k)])]);
      std::printf("\n");
    }
  }
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: dgq-llama-fixture f32 IN.gguf OUT.gguf | logits MODEL.gguf TOKENS.txt N_CTX [THREADS] | "
      "tokenize MODEL.gguf TEXT.txt";
  if (argc < 2) die(usage);
  llama_log_set(quiet_log, nullptr);
  llama_backend_init();
  const std::string cmd = argv[1];
  int rc = 0;
  if (cmd == "f32" && argc == 4) {
    rc = cmd_f32(argv[2], argv[3]);
  } else if (cmd == "logits" && (argc == 5 || argc == 6)) {
    rc = cmd_logits(argv[2], argv[3], std::atoi(argv[4]), argc == 6 ? std::atoi(argv[5]) : 2);
  } else if (cmd == "tokenize" && argc == 4) {
    rc = cmd_tokenize(argv[2], argv[3]);
  } else {
    die(usage);
  }
  llama_backend_free();
  return rc;
}
