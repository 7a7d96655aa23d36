// Measurements: median wall time of whole-layer operations, OpenMP over heads (each head is
// one unit, like dgq_encode_batch). "dgq (direct)" allocates its output per call,
// "dgq (reused)" encodes into the previous call's buffers (dgq_encode_batch_into). Bytes moved are the minimum an
// implementation must touch: memcpy reads and writes the layer (4 B/element); DGQ compress reads the fp16 input twice
// and writes int8 codes (5 B/element); decompress reads codes and writes fp16 (3 B/element);
// baselines are credited with one read of the input plus their stored bytes.
#include "cpu_bench.hpp"

#include <omp.h>

#include <time.h>
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <stdexcept>

#include "bench_layer.hpp"
#include "dgq/dgq.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"

namespace dgq::bench {
namespace {

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double wall = 0, cpu = 0;
};

// Median wall and CPU time (each taken separately) of `reps` runs after one warm-up run.
Timing median_seconds(int reps, const std::function<void()>& body) {
  body();  // warm-up: page faults, caches
  std::vector<double> wall, cpu;
  for (int r = 0; r < reps; ++r) {
    const double cpu0 = process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    body();
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cpu.push_back(process_cpu_seconds() - cpu0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

Figure figure(std::string what, std::string op, int threads, Timing t, double input_bytes, double moved_bytes) {
  return {std::move(what), std::move(op), threads, t.wall, t.cpu, input_bytes, moved_bytes};
}

}  // namespace

std::vector<Figure> run_cpu(const CpuOptions& o, std::ostream& log) {
  const Tensor3 layer = bench::make_bench_layer(o.heads, o.tokens, o.head_dim);
  const double elements = static_cast<double>(o.heads) * o.tokens * o.head_dim;
  const double input_bytes = 2 * elements;
  std::vector<std::byte> copy(layer.storage.size());
  Tensor3 out(DType::f16, o.heads, o.tokens, o.head_dim);
  std::vector<Figure> figures;

  std::vector<std::string> specs = o.schemes;
  if (specs.empty()) specs = scheme_families();

  for (int threads : o.threads) {
    omp_set_num_threads(threads);
    log << "dgq-bench: " << threads << " thread(s)...\n";
    const std::size_t head_bytes = layer.head_bytes();
    figures.push_back(figure("memcpy", "copy", threads,
                             median_seconds(o.repetitions,
                                            [&] {
#pragma omp parallel for schedule(static)
                                              for (int h = 0; h < o.heads; ++h)
                                                std::memcpy(copy.data() + h * head_bytes,
                                                            layer.storage.data() + h * head_bytes, head_bytes);
                                            }),
                             input_bytes, 2 * input_bytes));

    // DGQ through its own API (what the CUDA kernels are compared with).
    std::vector<ConstTensor> units;
    for (int h = 0; h < o.heads; ++h) units.push_back(layer.head(h));
    const DgqV1Params p;
    std::vector<DgqV1Encoded> enc;
    figures.push_back(figure("dgq (direct)", "compress", threads,
                             median_seconds(o.repetitions, [&] { enc = dgq_encode_batch(units, p); }), input_bytes,
                             5 * elements));
    // The same encode into the previous call's buffers: what a caller that keeps its output
    // (a KV cache compressing layer after layer) pays, without fresh 32 MiB of zero-filled,
    // page-faulting codes per call.
    std::vector<DgqV1Encoded> reused;
    figures.push_back(figure("dgq (reused)", "compress", threads,
                             median_seconds(o.repetitions, [&] { dgq_encode_batch_into(units, p, reused); }),
                             input_bytes, 5 * elements));
    figures.push_back(figure("dgq (direct)", "decompress", threads,
                             median_seconds(o.repetitions,
                                            [&] {
#pragma omp parallel for schedule(dynamic, 1)
                                              for (int h = 0; h < o.heads; ++h) dgq_decode(enc[h], out.head(h));
                                            }),
                             input_bytes, 3 * elements));

    for (const std::string& spec : specs) {
      const auto scheme = make_scheme(spec);
      std::vector<Compressed> c(static_cast<std::size_t>(o.heads));
      const Timing t_c = median_seconds(o.repetitions, [&] {
#pragma omp parallel for schedule(dynamic, 1)
        for (int h = 0; h < o.heads; ++h) c[h] = scheme->compress(layer.head(h), TensorRole::key);
      });
      double stored = 0;
      for (const auto& ch : c) stored += static_cast<double>(ch.total_bytes());
      // Labelled by the spec as given (a family name by default), so that "q4_0" and
      // "q4_0:rot=hadamard" stay apart.
      figures.push_back(figure(spec, "compress", threads, t_c, input_bytes, input_bytes + stored));
      const Timing t_d = median_seconds(o.repetitions, [&] {
#pragma omp parallel for schedule(dynamic, 1)
        for (int h = 0; h < o.heads; ++h) scheme->decompress(c[h], out.head(h));
      });
      figures.push_back(figure(spec, "decompress", threads, t_d, input_bytes, input_bytes + stored));
    }
  }
  return figures;
}

namespace {
double memcpy_moved_rate(const std::vector<Figure>& figures, int threads) {
  for (const auto& f : figures)
    if (f.what == "memcpy" && f.threads == threads) return f.moved_bytes / f.seconds;
  return 0;
}
}  // namespace

void print_table(const std::vector<Figure>& figures, std::ostream& out) {
  int width = 14;  // the scheme column fits the longest label (specs such as "q4_0:rot=hadamard")
  for (const auto& f : figures) width = std::max(width, static_cast<int>(f.what.size()) + 2);
  out << std::left << std::setw(width) << "scheme" << std::setw(12) << "op" << std::right << std::setw(4) << "thr"
      << std::setw(10) << "ms" << std::setw(12) << "GB/s in" << std::setw(12) << "Gelem/s" << std::setw(12)
      << "GB/s moved" << std::setw(12) << "of memcpy" << std::setw(14) << "Gelem/cpu-s"
      << "\n";
  for (const auto& f : figures) {
    const double moved_rate = f.moved_bytes / f.seconds;
    out << std::left << std::setw(width) << f.what << std::setw(12) << f.op << std::right << std::setw(4) << f.threads
        << std::fixed << std::setprecision(2) << std::setw(10) << f.seconds * 1e3 << std::setw(12)
        << f.input_bytes / f.seconds / 1e9 << std::setw(12) << f.input_bytes / 2 / f.seconds / 1e9 << std::setw(12)
        << moved_rate / 1e9 << std::setw(11) << 100.0 * moved_rate / memcpy_moved_rate(figures, f.threads) << "%"
        << std::setw(14) << f.input_bytes / 2 / f.cpu_seconds / 1e9 << "\n";
  }
}

void write_json(const std::vector<Figure>& figures, const std::string& path) {
  const std::string partial = path + ".partial";
  {
    std::ofstream f(partial);
    if (!f) throw std::runtime_error("cannot write " + partial);
    f << "{\n  \"figures\": [\n";
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const auto& x = figures[i];
      f << "    {\"scheme\": \"" << x.what << "\", \"op\": \"" << x.op << "\", \"threads\": " << x.threads
        << ", \"seconds\": " << x.seconds << ", \"cpu_seconds\": " << x.cpu_seconds
        << ", \"input_gb_per_s\": " << x.input_bytes / x.seconds / 1e9
        << ", \"g_elements_per_s\": " << x.input_bytes / 2 / x.seconds / 1e9
        << ", \"moved_gb_per_s\": " << x.moved_bytes / x.seconds / 1e9
        << ", \"fraction_of_memcpy\": " << (x.moved_bytes / x.seconds) / memcpy_moved_rate(figures, x.threads) << "}"
        << (i + 1 < figures.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
    if (!f.flush()) throw std::runtime_error("cannot write " + partial);
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + partial + " to " + path);
}

}  // namespace dgq::bench
