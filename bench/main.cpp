// dgq-bench: CPU (default) or CUDA throughput of DGQ and the baselines on one KV layer.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "cpu_bench.hpp"
#include "dgq/errors.hpp"

#ifdef DGQ_WITH_CUDA
#include "dgq/cuda/bench.hpp"
#endif

int main(int argc, char** argv) {
  CLI::App app{"dgq-bench: compress/decompress throughput of DGQ and every baseline, with memcpy as the ceiling"};
  dgq::bench::CpuOptions cpu;
  std::string device = "cpu", json;
  app.add_option("--device", device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  CLI::Option* tokens_option =
      app.add_option("--tokens", cpu.tokens, "tokens per head (cuda: one size instead of 4K, 32K, 128K)")
          ->check(CLI::Range(1, 1 << 24));
  app.add_option("--heads", cpu.heads, "KV heads in the layer")->check(CLI::Range(1, 256));
  app.add_option("--head-dim", cpu.head_dim, "channels per head")->check(CLI::Range(1, 4096));
  app.add_option("--reps", cpu.repetitions, "timed runs per figure (median reported)")->check(CLI::Range(1, 1000));
  CLI::Option* threads_option =
      app.add_option("--threads", cpu.threads, "OpenMP thread counts to measure (cpu only)")->delimiter(',');
  CLI::Option* scheme_option =
      app.add_option("--scheme", cpu.schemes, "scheme specs to measure (default: every family; cpu only)");
  app.add_option("--json", json, "also write the figures as JSON to this path");
  CLI11_PARSE(app, argc, argv);

  try {
    if (device == "cuda") {
      // The CUDA benchmark measures DGQ v1 alone, on the device: an option it cannot honour is
      // refused rather than silently dropped.
      for (const CLI::Option* cpu_only : {threads_option, scheme_option}) {
        if (cpu_only->count() > 0) throw dgq::ParameterError(cpu_only->get_name() + " applies to --device cpu only");
      }
#ifdef DGQ_WITH_CUDA
      dgq::cuda::BenchOptions o;
      if (tokens_option->count() > 0) o.tokens = {cpu.tokens};
      o.kv_heads = cpu.heads;
      o.head_dim = cpu.head_dim;
      o.repetitions = cpu.repetitions;
      o.json_path = json;
      return dgq::cuda::run_benchmarks(o, std::cout);
#else
      std::cout << "dgq-bench: built without CUDA\n";
      return 77;
#endif
    }
    const auto figures = dgq::bench::run_cpu(cpu, std::cerr);
    std::cout << "layer: " << cpu.heads << " heads x " << cpu.tokens << " tokens x " << cpu.head_dim
              << " channels, fp16 (" << 2.0 * cpu.heads * cpu.tokens * cpu.head_dim / (1 << 20) << " MiB)\n";
    dgq::bench::print_table(figures, std::cout);
    if (!json.empty()) dgq::bench::write_json(figures, json);
  } catch (const std::exception& e) {
    std::cerr << "dgq-bench: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
