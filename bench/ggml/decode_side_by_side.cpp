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

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>

#include "../bench_layer.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"
#include "ggml-cpu.h"
#include "ggml.h"

namespace dgq::ggml_bench {
namespace {

struct CacheType {
  const char* name;
  ggml_type type;
  bool dgq;  // dgq's decode attention reads this type
  cpu::KvBlockFormat format;
  bool ggml = true;  // ggml has this type (not DGQ v1)
};
constexpr CacheType kCacheTypes[] = {{"f16", GGML_TYPE_F16, false, cpu::KvBlockFormat::q8_0},
                                     {"q8_0", GGML_TYPE_Q8_0, true, cpu::KvBlockFormat::q8_0},
                                     {"q4_0", GGML_TYPE_Q4_0, true, cpu::KvBlockFormat::q4_0},
                                     {"iq4_nl", GGML_TYPE_IQ4_NL, true, cpu::KvBlockFormat::iq4_nl},
                                     {"dgq", GGML_TYPE_I8, true, cpu::KvBlockFormat::dgq, false}};

// One type's K and V: [kv_heads][max_tokens][row_bytes]; for dgq also each head's segment
// ranges (the same for K and V, which hold the same values) and their stored bytes per head.
struct StoredLayer {
  std::vector<std::uint8_t> k, v;
  std::size_t row_bytes = 0;
  std::int64_t max_tokens = 0;
  std::vector<cpu::DgqSegmentRanges> ranges;
  std::size_t extra_head_bytes = 0;
  std::vector<std::uint8_t> decoded;  // dgq only: Scheme::decompress's values as fp32, for the cross-check
  const std::uint8_t* head(const std::vector<std::uint8_t>& role, int h) const {
    return role.data() + static_cast<std::size_t>(h) * static_cast<std::size_t>(max_tokens) * row_bytes;
  }
};

// DGQ v1's codes of every head in one buffer, and each head's ranges.
std::vector<std::uint8_t> store_dgq_role(const Tensor3& x, std::size_t row_bytes, StoredLayer& s) {
  const auto scheme = make_scheme("dgq");
  const auto heads = static_cast<int>(x.heads);
  const std::size_t head_bytes = row_bytes * static_cast<std::size_t>(x.tokens);
  std::vector<std::uint8_t> bytes(head_bytes * static_cast<std::size_t>(heads));
  s.ranges.resize(static_cast<std::size_t>(heads));
  s.decoded.resize(x.storage.size() * 2);  // fp32 from fp16
  for (int h = 0; h < heads; ++h) {
    const Compressed c = scheme->compress(x.head(h), TensorRole::key);
    const std::uint8_t* codes = nullptr;
    s.ranges[static_cast<std::size_t>(h)] = cpu::dgq_segment_ranges(c, &codes);
    std::memcpy(bytes.data() + static_cast<std::size_t>(h) * head_bytes, codes, head_bytes);
    s.extra_head_bytes = std::max<std::size_t>(s.extra_head_bytes, c.total_bytes() - head_bytes);
    std::vector<std::uint16_t> half(x.head_bytes() / 2);
    scheme->decompress(c, MutTensor{half.data(), DType::f16, x.tokens, x.channels});
    const std::vector<float> values = to_float(ConstTensor{half.data(), DType::f16, x.tokens, x.channels});
    std::memcpy(s.decoded.data() + static_cast<std::size_t>(h) * x.head_bytes() * 2, values.data(), x.head_bytes() * 2);
  }
  return bytes;
}

// Head h's ranges clipped to the first `tokens` tokens.
cpu::DgqSegmentRanges clipped(const cpu::DgqSegmentRanges& r, std::int64_t tokens) {
  cpu::DgqSegmentRanges out = r;
  out.edges.clear();
  out.lo.clear();
  out.scale.clear();
  for (std::size_t i = 0; i + 1 < r.edges.size() && r.edges[i] < tokens; ++i) {
    out.edges.push_back(r.edges[i]);
    out.lo.push_back(r.lo[i]);
    out.scale.push_back(r.scale[i]);
  }
  out.edges.push_back(static_cast<std::uint32_t>(tokens));
  return out;
}

std::vector<std::uint8_t> store_role(const CacheType& t, const Tensor3& x, std::size_t row_bytes) {
  if (t.type == GGML_TYPE_F16) {
    std::vector<std::uint8_t> bytes(x.storage.size());
    std::memcpy(bytes.data(), x.storage.data(), bytes.size());
    return bytes;
  }
  const auto scheme = make_scheme(t.name);
  const auto heads = static_cast<int>(x.heads);
  const std::size_t head_bytes = row_bytes * static_cast<std::size_t>(x.tokens);
  std::vector<std::uint8_t> bytes(head_bytes * static_cast<std::size_t>(heads));
#pragma omp parallel for schedule(dynamic, 1)
  for (int h = 0; h < heads; ++h) {
    const Compressed c = scheme->compress(x.head(h), TensorRole::key);
    const Part* blocks = c.find("blocks");
    if (blocks == nullptr || blocks->bytes.size() != head_bytes) throw std::runtime_error(std::string("unexpected parts of ") + t.name);
    std::memcpy(bytes.data() + static_cast<std::size_t>(h) * head_bytes, blocks->bytes.data(), head_bytes);
  }
  return bytes;
}

StoredLayer store_layer(const CacheType& t, const Tensor3& kv, int head_dim) {
  StoredLayer s;
  s.row_bytes = ggml_row_size(t.type, head_dim);
  s.max_tokens = kv.tokens;
  s.k = t.ggml ? store_role(t, kv, s.row_bytes) : store_dgq_role(kv, s.row_bytes, s);
  s.v = s.k;  // V holds the same values (see the top of this file)
  return s;
}

struct Entry {
  std::string impl, type;
  double cache_bytes = 0;
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
  ggml_tensor* fa = ggml_flash_attn_ext(ctx, tq, kl, vl, nullptr, 1.0f / std::sqrt(static_cast<float>(sh.head_dim)), 0.0f, 0.0f);
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
// ranges: a dgq entry's clipped segment ranges, kept alive with the step.
Entry dgq_entry(const std::string& type, const cpu::StoredKv& kv, const Shape& sh, double bytes, const float* q,
                std::shared_ptr<std::vector<cpu::DgqSegmentRanges>> ranges = nullptr) {
  auto step = std::make_shared<cpu::DecodeAttention>(kv, cpu::DecodeAttentionShape{sh.kv_heads, sh.group, sh.head_dim, sh.tokens},
                                                     1.0f / std::sqrt(static_cast<float>(sh.head_dim)));
  const int heads = sh.query_heads();
  return {"dgq", type, bytes, [step, q, heads, ranges] {
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

std::vector<Entry> make_entries(const Shape& sh, const std::vector<StoredLayer>& layers, float* q) {
  std::vector<Entry> entries;
  const double tokens = static_cast<double>(sh.tokens);
  std::vector<std::uint8_t>& target = copy_target();
  for (const StoredLayer& s : layers) target.resize(std::max(target.size(), s.k.size() + s.v.size()));
  for (std::size_t i = 0; i < std::size(kCacheTypes); ++i) {
    const CacheType& t = kCacheTypes[i];
    const StoredLayer& s = layers[i];
    const double bytes = 2.0 * sh.kv_heads * (tokens * static_cast<double>(s.row_bytes) + static_cast<double>(s.extra_head_bytes));
    const std::size_t head_bytes = static_cast<std::size_t>(sh.tokens) * s.row_bytes;
    std::uint8_t* dst = target.data();
    entries.push_back({"memcpy", t.name, bytes, [&s, dst, head_bytes, kv_heads = sh.kv_heads] {
#pragma omp parallel for schedule(static)
                         for (int piece = 0; piece < 2 * kv_heads; ++piece)
                           std::memcpy(dst + static_cast<std::size_t>(piece) * head_bytes,
                                       s.head(piece % 2 == 0 ? s.k : s.v, piece / 2), head_bytes);
                       }});
    if (t.ggml) {
      auto g = make_ggml_step(t, s.k.data(), s.v.data(), s.max_tokens, sh, q);
      entries.push_back({"ggml", t.name, bytes, [g] { ggml_graph_compute(g->graph, &g->plan); }, g->out.data()});
    }
    if (!t.dgq) continue;
    cpu::StoredKv kv;
    kv.format = t.format;
    for (int h = 0; h < sh.kv_heads; ++h) {
      kv.k.push_back(s.head(s.k, h));
      kv.v.push_back(s.head(s.v, h));
    }
    if (t.format == cpu::KvBlockFormat::dgq) {
      // The cross-check's reference: ggml's attention over DGQ's decompressed values in an fp32
      // cache (its f16 cache accumulates V in fp16, off by percents at 64K tokens).
      const CacheType f32{"f32", GGML_TYPE_F32, false, cpu::KvBlockFormat::q8_0};
      auto g = make_ggml_step(f32, s.decoded.data(), s.decoded.data(), s.max_tokens, sh, q);
      Entry check{"ggml-check", t.name, bytes, [g] { ggml_graph_compute(g->graph, &g->plan); }, g->out.data()};
      check.timed = false;
      entries.push_back(std::move(check));
      auto ranges = std::make_shared<std::vector<cpu::DgqSegmentRanges>>();
      for (const auto& r : s.ranges) ranges->push_back(clipped(r, sh.tokens));
      for (const auto& r : *ranges) kv.k_ranges.push_back(&r);
      kv.v_ranges = kv.k_ranges;
      entries.push_back(dgq_entry(t.name, kv, sh, bytes, q, ranges));
      continue;
    }
    entries.push_back(dgq_entry(t.name, kv, sh, bytes, q));
    // rot=hadamard on top (4.5-bit types): the query rotated with K's blocks before the step,
    // the output rotated back with V's after it. Same bytes read (the time does not depend on
    // the values), so only the rotations' cost is added; not cross-checked against ggml.
    if (t.type == GGML_TYPE_F16 || t.type == GGML_TYPE_Q8_0 || sh.head_dim % 64 != 0) continue;
    kv.k_rotated = kv.v_rotated = true;
    entries.push_back(dgq_entry(std::string(t.name) + "+rot", kv, sh, bytes, q));
  }
  return entries;
}

// dgq's output against ggml's for the same type (same bytes, different arithmetic: ggml
// rounds q to q8_0 for a quantized K and accumulates V in f16 for an f16 one): a layout or
// head-mapping error would show as a difference of the order of the outputs themselves.
// DGQ v1, which ggml lacks, against ggml's attention over its decompressed values (fp32 cache).
void cross_check(const std::vector<Entry>& entries, const Shape& sh, std::ostream& log) {
  const std::size_t n = static_cast<std::size_t>(sh.query_heads()) * sh.head_dim;
  for (const Entry& d : entries) {
    if (d.impl != "dgq") continue;
    for (const Entry& g : entries) {
      if (g.impl != (d.type == "dgq" ? "ggml-check" : "ggml") || g.type != d.type) continue;
      double diff = 0, scale = 0;
      for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, static_cast<double>(std::fabs(d.output[i] - g.output[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(g.output[i])));
      }
      log << "  check " << d.type << " D=" << sh.head_dim << " L=" << sh.tokens << ": max |dgq - ggml| " << diff
          << " (max |ggml| " << scale << ")\n";
      if (!(diff <= 0.05 * scale)) throw std::runtime_error("dgq's decode attention disagrees with ggml's on " + d.type);
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
          results.push_back({entries[e].impl, entries[e].type, head_dim, tokens, threads, s[s.size() / 2], entries[e].cache_bytes});
        }
      }
    }
  }
  return results;
}

}  // namespace dgq::ggml_bench
