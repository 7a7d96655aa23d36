// make_cuda_scheme: the "dgq" Scheme with compress/decompress on the GPU. The parts are laid
// out exactly as the CPU dgq scheme lays them out (reference/src/schemes/dgq_scheme.cpp):
// "codes" (int8 per element), "ranges" (lo, hi fp32 little-endian per entry), and
// "boundaries" (uint32 LE per interior edge, table) or "bitmap" (bitmap); the differential
// tests compare the two schemes' Compressed byte for byte. Spec parsing, spec() and
// planned_bytes() are the CPU scheme's own, so both accept and print the same specs.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <string>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/errors.hpp"

namespace dgq::cuda {
namespace {

static_assert(std::endian::native == std::endian::little, "parts are little-endian; this host stores them as is");

constexpr std::size_t kRangeBytes = 2 * sizeof(float);

template <class T>
void append(std::vector<std::uint8_t>& out, T v) {
  const auto at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

template <class T>
T read(const std::vector<std::uint8_t>& bytes, std::size_t index) {
  T v;
  std::memcpy(&v, bytes.data() + index * sizeof v, sizeof v);
  return v;
}

// The canonical text prints floats in their shortest round-trip form (std::to_chars), so
// from_chars reads back the exact float; std::stof would be locale-dependent and throws
// std::out_of_range on subnormal values such as min_var=1e-40.
float exact_float(const std::string& text) {
  float v = 0.0f;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size())
    throw ParameterError("cannot read the float '" + text + "' back from the dgq spec");
  return v;
}

DgqParams parse_dgq_spec(const Scheme& cpu) {
  // The CPU scheme's canonical spec is "dgq:win=..,group_ratio=..,min_var=..,max_groups=..,
  // granularity=..,markers=..": read the fields back.
  DgqParams p;
  const std::string spec = cpu.spec();
  std::size_t pos = spec.find(':') + 1;
  while (pos > 0 && pos < spec.size()) {
    const std::size_t end = std::min(spec.find(',', pos), spec.size());
    const std::string item = spec.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "win") p.win = std::stoi(value);
    else if (key == "group_ratio") p.group_ratio = exact_float(value);
    else if (key == "min_var") p.min_var = exact_float(value);
    else if (key == "max_groups") p.max_groups = std::stoi(value);
    else if (key == "granularity") p.granularity = parse_granularity(value);
    else if (key == "markers") p.markers = parse_markers(value);
    pos = end + 1;
  }
  p.validate();
  return p;
}

const Part& require_part(const Compressed& c, const char* name) {
  const Part* part = c.find(name);
  if (part == nullptr) throw InputError(c.scheme + ": part '" + name + "' is missing");
  return *part;
}

class CudaDgqScheme final : public Scheme {
 public:
  explicit CudaDgqScheme(std::unique_ptr<Scheme> cpu) : cpu_(std::move(cpu)), params_(parse_dgq_spec(*cpu_)) {}

  std::string spec() const override { return cpu_->spec(); }
  std::string family() const override { return cpu_->family(); }
  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    return cpu_->planned_bytes(tokens, channels, dtype, role);
  }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    const DgqEncoded enc = encode_batch({x}, params_).front();
    Compressed c;
    c.scheme = spec();
    c.tokens = x.tokens;
    c.channels = x.channels;
    c.dtype = x.dtype;
    c.role = role;
    c.parts.push_back({"codes", std::vector<std::uint8_t>(enc.codes.begin(), enc.codes.end())});
    std::vector<std::uint8_t> ranges;
    ranges.reserve(enc.lo.size() * kRangeBytes);
    for (std::size_t i = 0; i < enc.lo.size(); ++i) {
      append(ranges, enc.lo[i]);
      append(ranges, enc.hi[i]);
    }
    c.parts.push_back({"ranges", std::move(ranges)});
    if (params_.markers == Markers::table) {
      std::vector<std::uint8_t> boundaries;
      for (const std::uint32_t b : enc.boundaries) append(boundaries, b);
      c.parts.push_back({"boundaries", std::move(boundaries)});
    } else if (params_.markers == Markers::bitmap) {
      c.parts.push_back({"bitmap", enc.bitmap});
    }
    c.segment_edges = segment_edges(enc);
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    if (c.scheme != spec()) throw InputError("compressed with '" + c.scheme + "', not '" + spec() + "'");
    DgqEncoded enc;
    enc.tokens = c.tokens;
    enc.channels = c.channels;
    enc.dtype = c.dtype;
    enc.params = params_;
    const Part& codes = require_part(c, "codes");
    enc.codes.assign(codes.bytes.begin(), codes.bytes.end());
    const Part& ranges = require_part(c, "ranges");
    const std::size_t per_segment = kRangeBytes * static_cast<std::size_t>(
        params_.granularity == Granularity::segment_channel ? c.channels : 1);
    if (ranges.bytes.size() % per_segment != 0)
      throw InputError(c.scheme + ": part 'ranges' has " + std::to_string(ranges.bytes.size()) +
                       " bytes, not a multiple of " + std::to_string(per_segment));
    enc.segments = static_cast<int>(ranges.bytes.size() / per_segment);
    for (std::size_t i = 0; i < ranges.bytes.size() / kRangeBytes; ++i) {
      enc.lo.push_back(read<float>(ranges.bytes, 2 * i));
      enc.hi.push_back(read<float>(ranges.bytes, 2 * i + 1));
    }
    if (params_.markers == Markers::table) {
      const Part& b = require_part(c, "boundaries");
      if (b.bytes.size() % sizeof(std::uint32_t) != 0)
        throw InputError(c.scheme + ": part 'boundaries' has " + std::to_string(b.bytes.size()) +
                         " bytes, not a multiple of 4");
      for (std::size_t i = 0; i < b.bytes.size() / sizeof(std::uint32_t); ++i)
        enc.boundaries.push_back(read<std::uint32_t>(b.bytes, i));
    } else if (params_.markers == Markers::bitmap) {
      enc.bitmap = require_part(c, "bitmap").bytes;
    }
    decode_batch({enc}, {out});  // checks every size and marker against the header
  }

 private:
  // Diagnostics: [0, edges..., L] from what the GPU stored (segment_edges of the Compressed).
  static std::vector<std::uint32_t> segment_edges(const DgqEncoded& enc) {
    std::vector<std::uint32_t> edges{0};
    if (enc.tokens == 0) return edges;
    if (enc.params.markers == Markers::table) {
      edges.insert(edges.end(), enc.boundaries.begin(), enc.boundaries.end());
    } else {
      for (std::int64_t t = 1; t < enc.tokens; ++t) {
        const bool edge = enc.params.markers == Markers::bitmap
                              ? ((enc.bitmap[t / 8] >> (t % 8)) & 1u) != ((enc.bitmap[(t - 1) / 8] >> ((t - 1) % 8)) & 1u)
                              : (enc.codes[static_cast<std::size_t>(t * enc.channels)] == 127 ||
                                 enc.codes[static_cast<std::size_t>(t * enc.channels)] == -128);
        if (edge) edges.push_back(static_cast<std::uint32_t>(t));
      }
    }
    edges.push_back(static_cast<std::uint32_t>(enc.tokens));
    return edges;
  }

  std::unique_ptr<Scheme> cpu_;
  DgqParams params_;
};

}  // namespace

std::unique_ptr<Scheme> make_cuda_scheme(std::string_view spec) {
  std::unique_ptr<Scheme> cpu = make_scheme(spec);  // parses and validates like the CPU path
  if (cpu->family() != "dgq")
    throw ParameterError("scheme '" + std::string(spec) + "' has no CUDA implementation: only dgq specs run on the GPU");
  return std::make_unique<CudaDgqScheme>(std::move(cpu));
}

}  // namespace dgq::cuda
