// `dgq eval --model M.h5 --text T.h5 --ctx N --scheme a --scheme b ... -o OUT.h5`: run a language model
// with its KV cache through each scheme; perplexity and KL divergence against the base cache
// (docs/eval.md). Resumable: rerun the same command after an interruption. `--task passkey`: the
// needle-in-a-haystack task instead (eval_passkey.hpp).
#include <omp.h>

#include <chrono>
#include <iostream>
#include <limits>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "dgq/errors.hpp"
#include "dgq/sim/eval/eval.hpp"
#include "dgq/sim/model/forward_profile.hpp"
#include "dgq/sim/model/gemm_library.hpp"
#include "dgq/sim/model/gemm_rate.hpp"
#include "eval_passkey.hpp"
#include "number_options.hpp"
#include "progress_options.hpp"

namespace dgq::cli {
namespace {

struct EvalArgs {
  sim::EvalOptions options;
  SchemeListArgs schemes;
  std::string query_rounding = "off";
  std::string task = "perplexity";
  std::string cache;  // empty: the task's default (perplexity: prefill; passkey: causal)
  std::string keys = "post-rope";
  std::string raw_dtype = "fp16";
  std::string text_file;  // --text-file: plain text for the GGUF's tokenizer
  std::string gemm;       // empty: the build's default (sim::default_gemm_library)
  bool row_exact = false;
  bool profile = false;
  ProgressArgs progress;
  int threads = 0;
};

sim::GemmLibrary gemm_library_of(const EvalArgs& a) {
  return a.gemm.empty() ? sim::default_gemm_library() : sim::parse_gemm_library(a.gemm, "--gemm");
}

// --task passkey (eval_passkey.hpp): the options both tasks share, into the passkey run's.
void run_passkey_task(EvalArgs& a, const CLI::App& cmd) {
  refuse_perplexity_options(cmd);
  if (!a.text_file.empty())
    throw ParameterError("--text-file: not used by --task passkey (its prompts come from a task file: --text)");
  sim::PasskeyOptions p;
  p.model_path = a.options.model_path;
  p.task_path = a.options.text_path;
  p.output_path = a.options.output_path;
  p.json_path = a.options.json_path;
  p.schemes = scheme_list(a.schemes, "--scheme");
  p.query_rounding = sim::parse_query_rounding(a.query_rounding);
  p.cache = sim::parse_cache_mode(a.cache.empty() ? "causal" : a.cache);
  p.keys = sim::parse_key_position(a.keys);
  p.raw_dtype = sim::parse_raw_dtype(a.raw_dtype);
  p.ubatch = a.options.ubatch;
  p.arithmetic = a.row_exact ? sim::Arithmetic::row_exact : sim::Arithmetic::blocked;
  p.gemm_library = gemm_library_of(a);
  p.force = a.options.force;
  p.progress = progress_mode(a.progress);
  run_passkey_command(p);
}

// --profile: the forward passes' time and operations by part, beside the GEMM rate measured
// after the run (so that the measurement does not warm or load the machine for the run).
void print_profile(double run_seconds) {
  const double gemm_gflops = sim::measured_fp32_gemm_gflops();
  std::cout << sim::format_forward_profile(sim::forward_profile(), gemm_gflops,
                                           sim::gemm_library_name(sim::gemm_library_in_use()), omp_get_max_threads(),
                                           run_seconds);
}

void run_task(EvalArgs& a, const CLI::App& cmd);

void run_eval_command(EvalArgs& a, const CLI::App& cmd) {
  if (a.threads > 0) omp_set_num_threads(a.threads);
  sim::reset_forward_profile();
  const auto start = std::chrono::steady_clock::now();
  run_task(a, cmd);
  if (a.profile) print_profile(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void run_task(EvalArgs& a, const CLI::App& cmd) {
  if (a.options.text_path.empty() && a.text_file.empty())
    throw ParameterError(
        "give the text: --text TOKENS.h5 (a token file, or with --task passkey a task file) or "
        "--text-file TEXT.txt (tokenized with the GGUF's tokenizer)");
  if (a.task == "passkey") return run_passkey_task(a, cmd);
  if (a.task != "perplexity") throw ParameterError("--task '" + a.task + "': expected perplexity or passkey");
  if (cmd.count("--ctx") == 0) throw CLI::RequiredError("--ctx");  // as when it was required() for every task
  if (!a.text_file.empty()) {
    a.options.text_path = a.text_file;
    a.options.text_is_plain = true;
  }
  a.options.schemes = scheme_list(a.schemes, "--scheme");
  a.options.query_rounding = sim::parse_query_rounding(a.query_rounding);
  a.options.cache = sim::parse_cache_mode(a.cache.empty() ? "prefill" : a.cache);
  a.options.keys = sim::parse_key_position(a.keys);
  a.options.raw_dtype = sim::parse_raw_dtype(a.raw_dtype);
  a.options.arithmetic = a.row_exact ? sim::Arithmetic::row_exact : sim::Arithmetic::blocked;
  a.options.gemm_library = gemm_library_of(a);
  a.options.progress = progress_mode(a.progress);
  const sim::EvalResult result = sim::run_eval(a.options);
  std::cout << format_eval_table(result);
  std::cout << "eval -> " << a.options.output_path << (a.options.json_path.empty() ? "" : " and " + a.options.json_path)
            << "\n";
}

}  // namespace

void register_eval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  sim::EvalOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "eval", "Run a language model with its KV cache through each scheme: PPL and KL divergence vs the base cache");
  cmd->add_option("--model", o.model_path, "Model file (docs/model-format.md; tools/make-models.sh)")->required();
  cmd->add_option("--task", args->task,
                  "perplexity (default: PPL and KLD over chunks of a token file) | passkey (needle-in-a-haystack "
                  "retrieval: --text is a task file of tools/make-passkey.py; docs/eval.md, The passkey task)");
  CLI::Option* text =
      cmd->add_option("--text", o.text_path,
                      "Token file (docs/eval.md; tools/make-eval-texts.py); with --task passkey a passkey task file");
  cmd->add_option("--text-file", args->text_file,
                  "Plain UTF-8 text, tokenized with the --model GGUF's own tokenizer (instead of --text; --task "
                  "perplexity)")
      ->excludes(text);
  cmd->add_option("--ctx", o.ctx, "Chunk length n_ctx (llama.cpp's -c); required by --task perplexity")
      ->check(whole_number(sim::kMinEvalCtx, std::numeric_limits<std::int64_t>::max()));  // the model bounds it above
  add_scheme_list_options(*cmd, args->schemes, scheme_option_help("Scheme spec, repeatable; fp32 = exact cache"));
  cmd->add_option("-o,--output", o.output_path,
                  "Results file (HDF5, docs/eval.md): a new file (an existing one is refused, see --force)")
      ->required();
  cmd->add_flag("--force", o.force,
                "Replace an existing results file (its runs are lost; to keep them, write to a new file and join "
                "the two with dgq merge)");
  cmd->add_option("--json", o.json_path, "Also write a JSON summary here");
  cmd->add_option("--base", o.base, "The reference cache of the KL divergence (default fp16)");
  cmd->add_option("--base-logits", o.base_logits_path,
                  "Base logits file: reused when it exists (same model, text, ctx, base), else written");
  cmd->add_option("--chunks", o.max_chunks, "Score only the first N chunks (0 = all)")
      ->check(whole_number(0, std::numeric_limits<std::int64_t>::max(), "0 = every whole chunk"));
  cmd->add_option(
      "--query-rounding", args->query_rounding,
      "off (default) | q8_0: round queries as ggml's CPU path does (q8_0 for quantized caches, fp16 for fp16)");
  cmd->add_option("--cache", args->cache,
                  "prefill (default of --task perplexity: each scheme sees the whole chunk at once) | causal (default "
                  "of --task passkey): written token by token, each family by its causal rule (docs/spec.md, Causal "
                  "caches)");
  cmd->add_option(
      "--keys", args->keys,
      "post-rope (default: the cache holds the keys after RoPE, as llama.cpp and vLLM) | pre-rope (KVQuant: "
      "the cache holds them before RoPE, attention reads them rotated after the cache; docs/eval.md, "
      "Pre-RoPE keys)");
  cmd->add_option("--raw-dtype", args->raw_dtype,
                  "fp16 (default, as llama.cpp, vLLM and transformers hold them) | bf16 | fp32 (the runner's dtype): "
                  "the dtype in which a cache holds the rows it keeps raw (KIVI's "
                  "residual, DGQ's open segment, KVarN's sink and open tile, sink=N), stored, counted and attended "
                  "to in it (docs/eval.md, Raw rows; docs/spec.md rule C9)");
  cmd->add_option(
         "--ubatch", o.ubatch,
         "Causal cache: 0 (default) = one pass at prefill cost, each query reading the cache as it was when its "
         "token was appended; N = the literal decoder in micro-batches of N tokens (1 = token by token)")
      ->check(whole_number(0, std::numeric_limits<std::int64_t>::max(), "0 = one pass"));
  add_progress_options(*cmd, args->progress);
  cmd->add_flag("--row-exact", args->row_exact,
                "Fixed-order arithmetic per row, independent of batching (slow): with it --ubatch 1 and the one-pass "
                "causal cache give identical logits");
  cmd->add_option("--gemm", args->gemm,
                  "onednn (default where the build found oneDNN) | eigen: the library of the blocked arithmetic's "
                  "matrix products (projections, output head, attention's tiles); eigen reproduces runs before "
                  "oneDNN (docs/eval.md, Matrix products)");
  cmd->add_flag("--profile", args->profile,
                "After the run, print the forward passes' seconds and GFLOP by part (weight GEMMs, attention, logits, "
                "cache) beside the fp32 GEMM rate measured on this machine");
  cmd->add_flag("--save-logits", o.save_logits, "Store every scheme's scored logits in the results (small runs only)");
  add_threads_option(*cmd, args->threads);
  cmd->add_flag("--allow-mixed-versions", o.allow_mixed_versions,
                "Reuse finished chunks and base logits written by another dgq build; the results are labelled with "
                "every contributing version (dgq_version A+B)");
  cmd->callback([args, cmd] { run_eval_command(*args, *cmd); });
}

}  // namespace dgq::cli
