// The entries of the decode side-by-side run and their interleaved timing.
//
// The cache: one layer of kv_heads x L tokens x head_dim, K and V from bench_layer.hpp's fp16
// values (V the same values as K: the time does not depend on them), stored once per type at
// the largest L of a head_dim; a shorter L is a prefix of every head (ggml: a view with the
// same strides). The quantized bytes are dgq's schemes' (byte for byte ggml's quantizers',
// tests/reference), so ggml and dgq read the same bytes.
//
// ggml, as llama.cpp's CPU decode runs it: ggml_flash_attn_ext(q [D,1,Hq], k, v [D,L,Hkv],
// no mask, scale 1/sqrt(D)) in a graph computed by ggml_graph_compute with its OpenMP threads.
// dgq: DecodeAttention's chunk items and head merges under one OpenMP parallel region.
// memcpy: the same K and V bytes copied (read + write) with the same threads.
//
// DGQ v1 (`dgq`, the article's scheme at its defaults, 8-bit codes with one range per segment)
// has no ggml type: dgq's kernel on its codes is timed beside the others, against ggml's f16 and
// (its peer in bits) q8_0 caches and memcpy of its own bytes (codes + ranges + markers). Its
// segments are those of the longest L; a shorter L reads a prefix of the codes with the
// segments clipped to it (the time does not depend on where the edges fall).
#include "decode_side_by_side.hpp"
#include "decode_stored_cache.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>

#include "../bench_layer.hpp"
#include "dgq/cpu/compressed_layer.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"
#include "ggml-cpu.h"
#include "ggml.h"

namespace dgq::ggml_bench {
namespace {

// DGQ v1 at its defaults (`dgq`) and with a range per segment and channel (`dgq-segch`).
// dgq2's ≤ 4-bit frontier configuration (experiments/frontier-dgq2.txt): K 4-bit per channel over
// 128-token groups inside each segment, V 3-bit per token with the Hadamard rotation. KIVI with
// 32-token key groups and no raw tail (the kernel reads no raw rows; the causal cache's form).
// TurboQuant_mse at 3 and 4 bits (per token a norm and Lloyd-Max codes after the rotation Pi).
// vLLM's TurboQuant presets with Lloyd-Max keys (4bit_nc: K4/V4, k3v4_nc, 3bit_nc: K3/V3), read in
// vLLM's own slots (codes, then norm or scale and zero, per token), a slot apart.
constexpr CacheType kCacheTypes[] = {
    {"f16", GGML_TYPE_F16, false},
    {"q8_0", GGML_TYPE_Q8_0, true, StoredFormat::q8_0},
    {"q4_0", GGML_TYPE_Q4_0, true, StoredFormat::q4_0},
    {"iq4_nl", GGML_TYPE_IQ4_NL, true, StoredFormat::iq4_nl},
    {"dgq", GGML_TYPE_COUNT, true, StoredFormat::dgq, "dgq", "q8_0"},
    {"dgq-segch", GGML_TYPE_COUNT, true, StoredFormat::dgq, "dgq:granularity=segment-channel", "q8_0"},
    {"dgq2-k4v3", GGML_TYPE_COUNT, true, StoredFormat::uniform4,
     "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v", "q4_0"},
    {"kivi-4", GGML_TYPE_COUNT, true, StoredFormat::uniform4, "kivi-4:group=32,residual=0", "q4_0"},
    {"kivi-2", GGML_TYPE_COUNT, true, StoredFormat::uniform2, "kivi-2:group=32,residual=0", "q4_0"},
    {"turboquant-3", GGML_TYPE_COUNT, true, StoredFormat::codebook3, "turboquant:bits=3", "q4_0"},
    {"turboquant-4", GGML_TYPE_COUNT, true, StoredFormat::codebook4, "turboquant:bits=4", "q4_0"},
    {"vllm-tq-4bit-nc", GGML_TYPE_COUNT, true, StoredFormat::codebook4, "turboquant_4bit_nc", "q4_0"},
    {"vllm-tq-k3v4-nc", GGML_TYPE_COUNT, true, StoredFormat::codebook3, "turboquant_k3v4_nc", "q4_0"},
    {"vllm-tq-3bit-nc", GGML_TYPE_COUNT, true, StoredFormat::codebook3, "turboquant_3bit_nc", "q4_0"},
};

struct Entry {
  std::string impl, type;
  double cache_bytes = 0;
  double bits = 0;   // stored bits per cached value (codes and what they need beside them)
  std::string peer;  // the ggml type this entry's type is compared with
  std::function<void()> run;
  const float* output = nullptr;  // [query_heads][head_dim] after run, for the cross-check
  bool timed = true;              // false: run in the warm-up round only, for the cross-check
};

struct Shape {
  int kv_heads, group, head_dim;
  std::int64_t tokens;
  int threads;
  int query_heads() const { return kv_heads * group; }
};

// ggml's graph for one decode step of one type; owns its context and work buffer.
struct GgmlStep {
  ggml_context* ctx = nullptr;
  ggml_cgraph* graph = nullptr;
  ggml_cplan plan{};
  std::vector<std::uint8_t> work;
  std::vector<float> out;
  ~GgmlStep() { ggml_free(ctx); }
};

// k, v: [kv_heads][max_tokens] rows of t.type.
std::shared_ptr<GgmlStep> make_ggml_step(const CacheType& t, const std::uint8_t* k_bytes, const std::uint8_t* v_bytes,
                                         std::int64_t max_tokens, const Shape& sh, float* q) {
  auto step = std::make_shared<GgmlStep>();
  ggml_init_params params{16 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true};
  step->ctx = ggml_init(params);
  if (step->ctx == nullptr) throw std::runtime_error("ggml_init failed");
  ggml_context* ctx = step->ctx;
  ggml_tensor* tq = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, sh.head_dim, 1, sh.query_heads());
  tq->data = q;
  ggml_tensor* k = ggml_new_tensor_3d(ctx, t.type, sh.head_dim, max_tokens, sh.kv_heads);
  ggml_tensor* v = ggml_new_tensor_3d(ctx, t.type, sh.head_dim, max_tokens, sh.kv_heads);
  k->data = const_cast<std::uint8_t*>(k_bytes);  // ggml reads them only
  v->data = const_cast<std::uint8_t*>(v_bytes);
  ggml_tensor* kl = ggml_view_3d(ctx, k, sh.head_dim, sh.tokens, sh.kv_heads, k->nb[1], k->nb[2], 0);
  ggml_tensor* vl = ggml_view_3d(ctx, v, sh.head_dim, sh.tokens, sh.kv_heads, v->nb[1], v->nb[2], 0);
  ggml_tensor* fa =
      ggml_flash_attn_ext(ctx, tq, kl, vl, nullptr, 1.0f / std::sqrt(static_cast<float>(sh.head_dim)), 0.0f, 0.0f);
  step->out.resize(ggml_nelements(fa));
  fa->data = step->out.data();
  step->graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(step->graph, fa);
  step->plan = ggml_graph_plan(step->graph, sh.threads, nullptr);
  step->work.resize(step->plan.work_size);
  step->plan.work_data = step->work.data();
  return step;
}

// dgq's decode step: chunk items, then head merges, in one OpenMP parallel region.
// k_ranges, v_ranges: the clipped segment ranges of a type with ranges, kept alive with the step.
using SharedRanges = std::shared_ptr<std::vector<cpu::SpanRanges>>;
Entry dgq_entry(const std::string& type, const cpu::StoredKv& kv, const Shape& sh, double bytes, double bits,
                const std::string& peer, const float* q, SharedRanges k_ranges = nullptr,
                SharedRanges v_ranges = nullptr) {
  auto step = std::make_shared<cpu::DecodeAttention>(
      kv, cpu::DecodeAttentionShape{sh.kv_heads, sh.group, sh.head_dim, sh.tokens},
      1.0f / std::sqrt(static_cast<float>(sh.head_dim)));
  const int heads = sh.query_heads();
  return {"dgq",
          type,
          bytes,
          bits,
          peer,
          [step, q, heads, k_ranges, v_ranges] {
            step->set_query(q);
            const std::int64_t items = step->chunk_items();
#pragma omp parallel
            {
#pragma omp for schedule(static)
              for (std::int64_t i = 0; i < items; ++i) step->run_chunk(i);
#pragma omp for schedule(static)
              for (int h = 0; h < heads; ++h) step->merge_head(h);
            }
          },
          step->output()};
}

// The destination of the memcpy entries, grown to the largest K + V and kept (touched by the
// warm-up round, so no entry pays its page faults).
std::vector<std::uint8_t>& copy_target() {
  static std::vector<std::uint8_t> bytes;
  return bytes;
}

// The stored bytes of a role at `tokens` tokens for all heads: the codes, and the extra bytes
// (ranges, markers) in proportion to the spans a clipped head keeps (per-token ranges grow with
// L, a few segments' do not).
double role_bytes(const StoredRole& r, const Shape& sh, const std::vector<cpu::SpanRanges>* clipped_ranges) {
  double bytes = static_cast<double>(sh.tokens) * static_cast<double>(r.row_bytes) * sh.kv_heads;
  for (int h = 0; h < sh.kv_heads && r.extra_head_bytes > 0; ++h) {
    const double all = static_cast<double>(r.ranges[static_cast<std::size_t>(h)].edges.size() - 1);
    const double kept =
        clipped_ranges ? static_cast<double>((*clipped_ranges)[static_cast<std::size_t>(h)].edges.size() - 1) : all;
    bytes += static_cast<double>(r.extra_head_bytes) * kept / all;
  }
  return bytes;
}

std::vector<Entry> make_entries(const Shape& sh, const std::vector<StoredLayer>& layers, float* q) {
  std::vector<Entry> entries;
  std::vector<std::uint8_t>& target = copy_target();
  for (const StoredLayer& s : layers) target.resize(std::max(target.size(), s.k.bytes.size() + s.v.bytes.size()));
  const double values = 2.0 * static_cast<double>(sh.tokens) * sh.head_dim * sh.kv_heads;
  for (std::size_t i = 0; i < std::size(kCacheTypes); ++i) {
    const CacheType& t = kCacheTypes[i];
    const StoredLayer& s = layers[i];
    // Ranges clipped to this L (types with ranges), kept alive with the dgq entry.
    auto k_ranges = std::make_shared<std::vector<cpu::SpanRanges>>();
    auto v_ranges = std::make_shared<std::vector<cpu::SpanRanges>>();
    for (const auto& r : s.k.ranges) k_ranges->push_back(clipped(r, sh.tokens));
    for (const auto& r : s.v.ranges) v_ranges->push_back(clipped(r, sh.tokens));
    const double k_bytes = role_bytes(s.k, sh, k_ranges.get()), v_bytes = role_bytes(s.v, sh, v_ranges.get());
    const double bytes = k_bytes + v_bytes;
    const std::string peer = t.ggml() ? t.name : t.peer;
    const double bits = bytes * 8 / values;
    // memcpy: per head, its K codes and its share of K's extra bytes, then V's, read from the
    // role buffers (whose slack covers the last head's extra bytes).
    const auto k_piece = static_cast<std::size_t>(k_bytes / sh.kv_heads),
               v_piece = static_cast<std::size_t>(v_bytes / sh.kv_heads);
    std::uint8_t* dst = target.data();
    entries.push_back({"memcpy", t.name, bytes, bits, peer, [&s, dst, k_piece, v_piece, kv_heads = sh.kv_heads] {
#pragma omp parallel for schedule(static)
                         for (int piece = 0; piece < 2 * kv_heads; ++piece) {
                           const bool key = piece % 2 == 0;
                           const std::size_t n = key ? k_piece : v_piece;
                           std::memcpy(
                               dst + static_cast<std::size_t>(piece / 2) * (k_piece + v_piece) + (key ? 0 : k_piece),
                               s.head(key ? s.k : s.v, piece / 2), n);
                         }
                       }});
    if (t.ggml()) {
      auto g = make_ggml_step(t, s.k.bytes.data(), s.v.bytes.data(), s.max_tokens, sh, q);
      entries.push_back(
          {"ggml", t.name, bytes, bits, peer, [g] { ggml_graph_compute(g->graph, &g->plan); }, g->out.data()});
    }
    if (!t.dgq) continue;
    cpu::StoredKv kv;
    kv.format = s.k.format;
    if (s.v.format != s.k.format) kv.v_format = s.v.format;
    for (int h = 0; h < sh.kv_heads; ++h) {
      kv.k.push_back(s.head(s.k, h));
      kv.v.push_back(s.head(s.v, h));
    }
    if (!t.ggml()) {
      // The cross-check's reference: ggml's attention over the decompressed values in an fp32
      // cache (its f16 cache accumulates V in fp16, off by percents at 64K tokens).
      if (sh.tokens <= s.k.check_tokens) {
        const CacheType f32{"f32", GGML_TYPE_F32, false};
        const std::vector<float>& v_decoded = s.v.decoded.empty() ? s.k.decoded : s.v.decoded;
        auto g = make_ggml_step(f32, reinterpret_cast<const std::uint8_t*>(s.k.decoded.data()),
                                reinterpret_cast<const std::uint8_t*>(v_decoded.data()), s.k.check_tokens, sh, q);
        Entry check{"ggml-check", t.name, bytes, bits, peer, [g] { ggml_graph_compute(g->graph, &g->plan); },
                    g->out.data()};
        check.timed = false;
        entries.push_back(std::move(check));
      }
      kv.k_rotated = s.k.rotated;
      kv.v_rotated = s.v.rotated;
      kv.query_rotation = s.k.rotation;
      kv.output_rotation = s.v.rotation;
      if (s.k.slotted) kv.k_row_stride = static_cast<std::int64_t>(s.k.row_bytes);
      if (s.v.slotted) kv.v_row_stride = static_cast<std::int64_t>(s.v.row_bytes);
      for (const auto& r : *k_ranges) kv.k_ranges.push_back(&r);
      for (const auto& r : *v_ranges) kv.v_ranges.push_back(&r);
      entries.push_back(dgq_entry(t.name, kv, sh, bytes, bits, peer, q, k_ranges, v_ranges));
      continue;
    }
    entries.push_back(dgq_entry(t.name, kv, sh, bytes, bits, peer, q));
    // rot=hadamard on top (4.5-bit types): the query rotated with K's blocks before the step,
    // the output rotated back with V's after it. Same bytes read (the time does not depend on
    // the values), so only the rotations' cost is added; not cross-checked against ggml.
    if (t.type == GGML_TYPE_F16 || t.type == GGML_TYPE_Q8_0 || sh.head_dim % 64 != 0) continue;
    kv.k_rotated = kv.v_rotated = true;
    entries.push_back(dgq_entry(std::string(t.name) + "+rot", kv, sh, bytes, bits, peer, q));
  }
  return entries;
}

// dgq's output against ggml's for the same type (same bytes, different arithmetic: ggml
// rounds q to q8_0 for a quantized K and accumulates V in f16 for an f16 one): a layout or
// head-mapping error would show as a difference of the order of the outputs themselves.
// The types ggml lacks (DGQ v1, dgq2, KIVI) against ggml's attention over their decompressed
// values (fp32 cache).
void cross_check(const std::vector<Entry>& entries, const Shape& sh, std::ostream& log) {
  const std::size_t n = static_cast<std::size_t>(sh.query_heads()) * sh.head_dim;
  for (const Entry& d : entries) {
    if (d.impl != "dgq") continue;
    for (const Entry& g : entries) {
      if (g.impl != (d.peer == d.type ? "ggml" : "ggml-check") || g.type != d.type) continue;
      double diff = 0, scale = 0;
      for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, static_cast<double>(std::fabs(d.output[i] - g.output[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(g.output[i])));
      }
      log << "  check " << d.type << " D=" << sh.head_dim << " L=" << sh.tokens << ": max |dgq - ggml| " << diff
          << " (max |ggml| " << scale << ")\n";
      if (!(diff <= 0.05 * scale))
        throw std::runtime_error("dgq's decode attention disagrees with ggml's on " + d.type);
    }
  }
}

std::vector<std::int64_t> lengths_for(const DecodeOptions& o, int head_dim) {
  std::vector<std::int64_t> l = o.lengths;
  if (head_dim == 128) l.insert(l.end(), o.llama_lengths.begin(), o.llama_lengths.end());
  std::sort(l.begin(), l.end());
  l.erase(std::unique(l.begin(), l.end()), l.end());
  return l;
}

}  // namespace

std::vector<DecodeResult> run_decode_side_by_side(const DecodeOptions& o, std::ostream& log) {
  ggml_cpu_init();
  std::vector<DecodeResult> results;
  for (int head_dim : o.head_dims) {
    const auto lengths = lengths_for(o, head_dim);
    const std::int64_t max_tokens = lengths.back();
    log << "dgq-ggml-bench decode: head_dim " << head_dim << ", storing " << max_tokens << " tokens x " << o.kv_heads
        << " KV heads per type\n";
    std::vector<StoredLayer> layers;
    {
      const Tensor3 kv = bench::make_bench_layer(o.kv_heads, max_tokens, head_dim);
      for (const CacheType& t : kCacheTypes) layers.push_back(store_layer(t, kv, head_dim));
    }
    std::vector<float> q(static_cast<std::size_t>(o.kv_heads) * o.group * head_dim);
    std::uint64_t state = 0x9e37;
    for (float& x : q) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<float>(state >> 40) * 0x1p-23f - 1.0f;
    }
    for (int threads : o.threads) {
      omp_set_num_threads(threads);
      for (std::int64_t tokens : lengths) {
        const Shape sh{o.kv_heads, o.group, head_dim, tokens, threads};
        const auto entries = make_entries(sh, layers, q.data());
        log << "dgq-ggml-bench decode: D=" << head_dim << " L=" << tokens << ", " << threads << " thread(s), "
            << entries.size() << " entries x " << o.rounds << " rounds (+1 warm-up)\n";
        std::vector<std::vector<double>> seconds(entries.size());
        for (int round = -1; round < o.rounds; ++round) {
          for (std::size_t e = 0; e < entries.size(); ++e) {
            if (round >= 0 && !entries[e].timed) continue;
            const auto start = std::chrono::steady_clock::now();
            entries[e].run();
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (round >= 0) seconds[e].push_back(s);
          }
          if (round == -1) cross_check(entries, sh, log);
        }
        for (std::size_t e = 0; e < entries.size(); ++e) {
          if (!entries[e].timed) continue;
          auto& s = seconds[e];
          std::sort(s.begin(), s.end());
          results.push_back({entries[e].impl, entries[e].type, head_dim, tokens, threads, s[s.size() / 2],
                             entries[e].cache_bytes, entries[e].bits, entries[e].peer});
        }
      }
    }
  }
  return results;
}

}  // namespace dgq::ggml_bench
