#pragma once
// One interface for DGQ and every baseline, so that the simulator, the CLI and the
// benchmarks compare schemes through the same calls.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq {

enum class TensorRole : std::uint8_t { key, value };
std::string_view role_name(TensorRole r);  // "k", "v"

// A named byte blob a scheme stores (e.g. "codes", "ranges", "boundaries"). Multi-byte
// values are little-endian.
struct Part {
  std::string name;
  std::vector<std::uint8_t> bytes;
  bool operator==(const Part&) const = default;
};

// What a segmenting scheme (DGQ v1; dgq2 for the roles it segments) reports about the
// segments it chose: the edges [0, e1, ..., tokens].
struct SegmentDiagnostics {
  std::vector<std::uint32_t> edges;
  bool operator==(const SegmentDiagnostics&) const = default;
};

// Facts a family may report beside its bytes, for inspection and the replay's tables: never
// stored as parts, never counted in total_bytes(). Each is typed and optional (std::nullopt:
// the family has no such fact), so that a family-specific diagnostic is a new member here
// rather than a field every Compressed carries and most leave empty.
struct CompressionDiagnostics {
  std::optional<SegmentDiagnostics> segments;
  bool operator==(const CompressionDiagnostics&) const = default;
};

struct Compressed {
  std::string scheme;  // canonical spec of the scheme that made it (Scheme::spec())
  std::int64_t tokens = 0, channels = 0;
  DType dtype = DType::f16;
  TensorRole role = TensorRole::key;
  std::vector<Part> parts;
  CompressionDiagnostics diagnostics;

  std::uint64_t total_bytes() const;
  std::uint64_t part_bytes(std::string_view name) const;  // 0 if absent
  const Part* find(std::string_view name) const;
  // diagnostics.segments' edges, or an empty list when the scheme reported none.
  const std::vector<std::uint32_t>& segment_edges() const;
};

// A Compressed with the metadata of x (shape, dtype, role) and the scheme's spec filled in and
// no parts yet: the common start of every Scheme::compress, CPU or GPU.
Compressed start_compressed(std::string spec, ConstTensor x, TensorRole role);

struct CausalSchedule;  // dgq/causal.hpp

class Scheme {
 public:
  virtual ~Scheme() = default;
  // Canonical spec string, parseable by make_scheme (e.g. "dgq:win=16,group_ratio=0.75,...").
  virtual std::string spec() const = 0;
  // Short family name: "dgq", "fp16", "q8_0", ...
  virtual std::string family() const = 0;
  // Throws InputError on NaN/Inf (naming token and channel).
  virtual Compressed compress(ConstTensor x, TensorRole role) const = 0;
  // The same result written into out, whose part buffers a scheme may reuse: a caller that
  // compresses tensors of one shape again and again (a KV cache, layer after layer) then
  // allocates and page-faults nothing, as ggml writes into its preallocated cache. out's old
  // contents do not matter; after an exception out is unspecified. The default is compress.
  virtual void compress_into(ConstTensor x, TensorRole role, Compressed& out) const { out = compress(x, role); }
  // out has the compressed shape; out.dtype is the original dtype.
  virtual void decompress(const Compressed& c, MutTensor out) const = 0;
  // Bytes stored for a tensor of this shape, data-independent. Schemes whose size depends
  // on the data (DGQ's segment count) report their upper bound and say so in docs.
  virtual std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype,
                                      TensorRole role) const = 0;

  // ---- The causal cache (dgq/causal.hpp, docs/spec.md "Causal caches") ----
  // When each token of x becomes final in a cache that receives x's tokens one at a time, and
  // what the final prefix costs, decided from tokens 0..T only for every T. The default is a
  // per-token format's rule: final on append. Throws ParameterError for a scheme that has no
  // causal form (fp8-e4m3's one scale per tensor), InputError as compress for bad input.
  virtual CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const;
  // The scheme that stores the final prefix (dgq/causal.hpp); nullptr: this scheme itself.
  // Throws causal_schedule's ParameterError for a scheme that has no causal form, so that a
  // CausalCache of it is refused when it is built.
  virtual std::unique_ptr<Scheme> causal_form() const { return nullptr; }
  // Whether a cache of this scheme may keep a row of `role` raw, uncoded: in the causal raw
  // tail (some token waits before it is final: KIVI's residual and open key group, DGQ's open
  // segment, KVarN's open tile, a prefix scale's first tokens) or stored as it came (sink=N,
  // KVarN's sink block, KIVI's residual in compress). Such a role's rows are held in the cache's
  // raw dtype (docs/spec.md rule C9); a role that codes every row on append (rules C1, C8)
  // returns false. Checked against the schedule and planned_bytes for every registered family
  // (tests/reference/test_causal_conformance.cpp).
  virtual bool keeps_raw_rows(TensorRole /*role*/) const { return false; }
};

// Parse "family[:key=value,...]" for the CPU implementation of a registered family
// (dgq/registry.hpp; `dgq schemes` lists them). Every family also takes the registered modifiers
// (today `rot=hadamard`: llama.cpp's rotation around it, docs/spec.md). Throws ParameterError
// with the offending key.
std::unique_ptr<Scheme> make_scheme(std::string_view spec);
// The registered CPU families, in listing order (dgq/registry.hpp).
std::vector<std::string> scheme_families();

}  // namespace dgq
