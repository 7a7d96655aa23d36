// The entries of the side-by-side run and their interleaved timing.
//
// ggml, as llama.cpp uses it for a quantized KV cache (ggml-cpu/ops.cpp, the f32/f16 -> quantized
// copy): rows of kRow elements (one token's K of 8 KV heads x 128 channels) go through the CPU
// type traits' from_float; an f16 source row is first widened with ggml_cpu_fp16_to_fp32 (F16C)
// into a per-thread buffer. Dequantization is the base type traits' to_float (to fp32), and the
// same followed by ggml_cpu_fp32_to_fp16 for an fp16 output. OpenMP over rows, output buffers
// allocated once (a preallocated cache).
//
// dgq: each Scheme on each KV head (one [tokens][head_dim] unit), OpenMP over heads as in
// dgq-bench; compress returns a fresh Compressed per call (as the Scheme API does), decompress
// writes into a preallocated tensor of the original dtype. "q8_0 (into)" and "dgq (into)" are
// Scheme::compress_into into each head's previous result (the reused output of a cache);
// "dgq (reused out)" is DGQ v1 through dgq_encode_batch_into, which reuses its buffers too.
#include "side_by_side.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "../bench_layer.hpp"
#include "dgq/dgq.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"
#include "ggml-cpu.h"
#include "ggml.h"

namespace dgq::ggml_bench {
namespace {

constexpr std::int64_t kRow = 1024;

struct Entry {
  std::string impl, scheme, op, dtype;
  double moved_bytes = 0;
  std::function<void()> run;
};

struct GgmlType {
  const char* name;
  ggml_type type;
};
constexpr GgmlType kGgmlTypes[] = {{"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0}, {"q4_1", GGML_TYPE_Q4_1},
                                   {"q5_0", GGML_TYPE_Q5_0}, {"q5_1", GGML_TYPE_Q5_1}, {"iq4_nl", GGML_TYPE_IQ4_NL}};

// Every buffer the entries share; built once, outputs touched by the warm-up round.
struct Buffers {
  Tensor3 f16, f32, out16, out32, copy16;
  std::vector<std::uint8_t> quantized;  // ggml's output, sized for the largest type
};

void add_ggml(const GgmlType& t, Buffers& b, std::int64_t elements, std::vector<Entry>& entries) {
  const auto* cpu = ggml_get_type_traits_cpu(t.type);
  const auto* base = ggml_get_type_traits(t.type);
  if (cpu->from_float == nullptr || base->to_float == nullptr)
    throw std::runtime_error(std::string("ggml has no CPU quantizer for ") + t.name);
  const std::size_t row_bytes = ggml_row_size(t.type, kRow);
  const std::int64_t rows = elements / kRow;
  const double stored = static_cast<double>(row_bytes) * static_cast<double>(rows);
  const double n = static_cast<double>(elements);
  auto* q = b.quantized.data();
  const float* x32 = reinterpret_cast<const float*>(b.f32.storage.data());
  const auto* x16 = reinterpret_cast<const ggml_fp16_t*>(b.f16.storage.data());
  float* y32 = reinterpret_cast<float*>(b.out32.storage.data());
  auto* y16 = reinterpret_cast<ggml_fp16_t*>(b.out16.storage.data());
  const auto from_float = cpu->from_float;
  const auto to_float = base->to_float;

  entries.push_back({"ggml", t.name, "compress", "f32", 4 * n + stored, [=] {
#pragma omp parallel for schedule(static)
                       for (std::int64_t r = 0; r < rows; ++r) from_float(x32 + r * kRow, q + r * row_bytes, kRow);
                     }});
  entries.push_back({"ggml", t.name, "compress", "f16", 2 * n + stored, [=] {
#pragma omp parallel
                       {
                         float row[kRow];
#pragma omp for schedule(static)
                         for (std::int64_t r = 0; r < rows; ++r) {
                           ggml_cpu_fp16_to_fp32(x16 + r * kRow, row, kRow);
                           from_float(row, q + r * row_bytes, kRow);
                         }
                       }
                     }});
  entries.push_back({"ggml", t.name, "decompress", "f32", stored + 4 * n, [=] {
#pragma omp parallel for schedule(static)
                       for (std::int64_t r = 0; r < rows; ++r) to_float(q + r * row_bytes, y32 + r * kRow, kRow);
                     }});
  entries.push_back({"ggml", t.name, "decompress", "f16", stored + 2 * n, [=] {
#pragma omp parallel
                       {
                         float row[kRow];
#pragma omp for schedule(static)
                         for (std::int64_t r = 0; r < rows; ++r) {
                           to_float(q + r * row_bytes, row, kRow);
                           ggml_cpu_fp32_to_fp16(row, y16 + r * kRow, kRow);
                         }
                       }
                     }});
}

// A dgq Scheme compressing `in` (f16 or f32) head by head and decompressing into `out`.
void add_dgq(const std::string& spec, const Tensor3& in, Tensor3& out, std::vector<Entry>& entries) {
  auto scheme = std::shared_ptr<Scheme>(make_scheme(spec));
  const int heads = static_cast<int>(in.heads);
  auto c = std::make_shared<std::vector<Compressed>>(static_cast<std::size_t>(heads));
  const double n = static_cast<double>(in.heads * in.tokens * in.channels);
  const double in_bytes = n * static_cast<double>(dtype_size(in.dtype));
  const double stored =
      static_cast<double>(scheme->planned_bytes(in.tokens, in.channels, in.dtype, TensorRole::key)) * heads;
  const std::string dtype(dtype_name(in.dtype));
  const Tensor3* x = &in;
  entries.push_back({"dgq", spec, "compress", dtype, in_bytes + stored, [=] {
#pragma omp parallel for schedule(dynamic, 1)
                       for (int h = 0; h < heads; ++h) (*c)[h] = scheme->compress(x->head(h), TensorRole::key);
                     }});
  Tensor3* y = &out;
  entries.push_back({"dgq", spec, "decompress", dtype, stored + in_bytes, [=] {
#pragma omp parallel for schedule(dynamic, 1)
                       for (int h = 0; h < heads; ++h) scheme->decompress((*c)[h], y->head(h));
                     }});
}

std::vector<Entry> make_entries(const Options& o, Buffers& b) {
  const std::int64_t elements = static_cast<std::int64_t>(o.heads) * o.tokens * o.head_dim;
  std::vector<Entry> entries;
  const double n = static_cast<double>(elements);
  entries.push_back({"memcpy", "memcpy", "copy", "f16", 4 * n, [&b] {
                       const std::size_t bytes = b.f16.storage.size(), half = bytes / 2;
#pragma omp parallel for schedule(static)
                       for (int part = 0; part < 2; ++part)
                         std::memcpy(b.copy16.storage.data() + part * half, b.f16.storage.data() + part * half,
                                     part == 0 ? half : bytes - half);
                     }});
  auto wanted = [&o](const std::string& s) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), s) != o.only.end();
  };
  for (const auto& t : kGgmlTypes) {
    if (std::string(t.name) == "q8_0" || wanted(t.name)) add_ggml(t, b, elements, entries);
    if (!wanted(t.name)) continue;
    add_dgq(t.name, b.f32, b.out32, entries);
    add_dgq(t.name, b.f16, b.out16, entries);
  }
  // dgq's other families, from the registry: each alone (ggml has no counterpart to time beside it).
  for (const std::string& family : scheme_families())
    if (!is_ggml_type(family) && wanted(family)) add_dgq(family, b.f16, b.out16, entries);
  // Scheme::compress_into with each head's previous result: the reused output of a cache.
  for (const char* spec : {"q8_0", "dgq"}) {
    if (!wanted(spec)) continue;
    auto scheme = std::shared_ptr<Scheme>(make_scheme(spec));
    auto kept = std::make_shared<std::vector<Compressed>>(static_cast<std::size_t>(o.heads));
    const double stored =
        static_cast<double>(scheme->planned_bytes(o.tokens, o.head_dim, DType::f16, TensorRole::key)) * o.heads;
    const Tensor3* x = &b.f16;
    const int heads = o.heads;
    entries.push_back({"dgq", std::string(spec) + " (into)", "compress", "f16", 2 * n + stored, [=] {
#pragma omp parallel for schedule(dynamic, 1)
                         for (int h = 0; h < heads; ++h) scheme->compress_into(x->head(h), TensorRole::key, (*kept)[h]);
                       }});
  }
  if (!wanted("dgq")) return entries;
  std::vector<ConstTensor> units;
  for (int h = 0; h < o.heads; ++h) units.push_back(b.f16.head(h));
  auto reused = std::make_shared<std::vector<DgqV1Encoded>>();
  const double stored = static_cast<double>(elements);  // one int8 code per element (+ small tables)
  entries.push_back({"dgq", "dgq (reused out)", "compress", "f16", 2 * n + stored,
                     [units, reused] { dgq_encode_batch_into(units, DgqV1Params{}, *reused); }});
  return entries;
}

}  // namespace

bool is_ggml_type(std::string_view family) {
  return std::any_of(std::begin(kGgmlTypes), std::end(kGgmlTypes), [&](const GgmlType& t) { return family == t.name; });
}

std::vector<std::string> ggml_type_names() {
  std::vector<std::string> names;
  for (const GgmlType& t : kGgmlTypes) names.emplace_back(t.name);
  return names;
}

std::vector<Result> run_side_by_side(const Options& o, std::ostream& log) {
  const std::int64_t elements = static_cast<std::int64_t>(o.heads) * o.tokens * o.head_dim;
  if (elements % kRow != 0) throw std::invalid_argument("heads*tokens*head_dim must be a multiple of 1024");
  ggml_cpu_init();
  Buffers b;
  b.f16 = bench::make_bench_layer(o.heads, o.tokens, o.head_dim);
  b.f32 = Tensor3(DType::f32, o.heads, o.tokens, o.head_dim);
  const auto* h = reinterpret_cast<const std::uint16_t*>(b.f16.storage.data());
  auto* f = reinterpret_cast<float*>(b.f32.storage.data());
  for (std::int64_t i = 0; i < elements; ++i) f[i] = rules::half_to_float(h[i]);  // exact widening
  b.out16 = Tensor3(DType::f16, o.heads, o.tokens, o.head_dim);
  b.out32 = Tensor3(DType::f32, o.heads, o.tokens, o.head_dim);
  b.copy16 = Tensor3(DType::f16, o.heads, o.tokens, o.head_dim);
  b.quantized.assign(static_cast<std::size_t>(elements / kRow) * ggml_row_size(GGML_TYPE_Q8_0, kRow), 0);

  const auto entries = make_entries(o, b);
  std::vector<Result> results;
  for (int threads : o.threads) {
    omp_set_num_threads(threads);
    log << "dgq-ggml-bench: " << threads << " thread(s), " << entries.size() << " entries x " << o.rounds
        << " rounds (+1 warm-up)\n";
    std::vector<std::vector<double>> seconds(entries.size());
    for (int round = -1; round < o.rounds; ++round) {
      for (std::size_t e = 0; e < entries.size(); ++e) {
        // A decompress entry reads what its compress entry (the one before it) wrote in this
        // round, so every round runs the entries in order.
        const auto start = std::chrono::steady_clock::now();
        entries[e].run();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (round >= 0) seconds[e].push_back(s);
      }
    }
    for (std::size_t e = 0; e < entries.size(); ++e) {
      auto& s = seconds[e];
      std::sort(s.begin(), s.end());
      const auto& x = entries[e];
      results.push_back(
          {x.impl, x.scheme, x.op, x.dtype, threads, s[s.size() / 2], static_cast<double>(elements), x.moved_bytes});
    }
  }
  return results;
}

}  // namespace dgq::ggml_bench
