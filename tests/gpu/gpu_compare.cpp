#include "gpu_compare.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"

#ifndef DGQ_BINARY_DIR
#define DGQ_BINARY_DIR "."
#endif

namespace dgq::gpu_test {
namespace {

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::string hex_float(float f) {
  std::ostringstream s;
  s << f << " (0x" << std::hex << bits(f) << ")";
  return s.str();
}

template <class T>
std::string compare_sizes(const char* what, const std::vector<T>& ref, const std::vector<T>& gpu) {
  if (ref.size() == gpu.size()) return {};
  std::ostringstream s;
  s << what << ": reference has " << ref.size() << " entries, CUDA " << gpu.size();
  return s.str();
}

std::string compare_ranges(const char* what, const std::vector<float>& ref, const std::vector<float>& gpu,
                           std::int64_t range_channels) {
  if (auto d = compare_sizes(what, ref, gpu); !d.empty()) return d;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (bits(ref[i]) == bits(gpu[i])) continue;
    std::ostringstream s;
    s << what << " of segment " << i / range_channels;
    if (range_channels > 1) s << ", channel " << i % range_channels;
    s << ": reference " << hex_float(ref[i]) << ", CUDA " << hex_float(gpu[i]);
    return s.str();
  }
  return {};
}

std::string compare_codes(const DgqV1Encoded& ref, const DgqV1Encoded& gpu) {
  if (auto d = compare_sizes("codes", ref.codes, gpu.codes); !d.empty()) return d;
  for (std::size_t i = 0; i < ref.codes.size(); ++i) {
    if (ref.codes[i] == gpu.codes[i]) continue;
    std::ostringstream s;
    s << "code at token " << i / ref.channels << ", channel " << i % ref.channels << ": reference " << int(ref.codes[i])
      << ", CUDA " << int(gpu.codes[i]);
    return s.str();
  }
  return {};
}

std::string compare_bytes(const std::string& what, const std::vector<std::byte>& ref, const std::vector<std::byte>& gpu,
                          std::int64_t channels, std::size_t element_size) {
  if (ref.size() != gpu.size()) return what + ": sizes differ";
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i] == gpu[i]) continue;
    const std::size_t element = i / element_size;
    std::ostringstream s;
    s << what << " differs at token " << element / channels << ", channel " << element % channels << " (byte " << i
      << "): reference 0x" << std::hex << int(ref[i]) << ", CUDA 0x" << int(gpu[i]);
    return s.str();
  }
  return {};
}

// What one side produced: the encodings, or the error it threw.
struct Outcome {
  std::vector<DgqV1Encoded> encoded;
  std::string error;
};

// Through dgq_encode_batch, whose error names the lowest failing unit ("unit i: ..."), the
// contract cuda::encode_batch's errors are compared against word for word.
Outcome encode_reference(const std::vector<HostUnit>& units, const DgqV1Params& p) {
  Outcome o;
  std::vector<ConstTensor> views;
  for (const auto& u : units) views.push_back(u.view());
  try {
    o.encoded = dgq_encode_batch(views, p);
  } catch (const InputError& e) {
    o.error = e.what();
  }
  return o;
}

Outcome encode_cuda(const std::vector<HostUnit>& units, const DgqV1Params& p) {
  Outcome o;
  std::vector<ConstTensor> views;
  for (const auto& u : units) views.push_back(u.view());
  try {
    o.encoded = cuda::encode_batch(views, p);
  } catch (const InputError& e) {
    o.error = e.what();
  }
  return o;
}

std::string compare_decoded(const std::vector<HostUnit>& units, const std::vector<DgqV1Encoded>& ref,
                            const std::vector<DgqV1Encoded>& gpu) {
  std::vector<HostUnit> ref_out, gpu_out;
  std::vector<MutTensor> gpu_views;
  for (const auto& u : units) {
    ref_out.push_back(u);
    gpu_out.push_back(u);
  }
  for (std::size_t i = 0; i < units.size(); ++i) {
    std::fill(ref_out[i].bytes.begin(), ref_out[i].bytes.end(), std::byte{0x5a});  // guard pattern
    std::fill(gpu_out[i].bytes.begin(), gpu_out[i].bytes.end(), std::byte{0xa5});
    dgq_decode(ref[i], ref_out[i].view());
    gpu_views.push_back(gpu_out[i].view());
  }
  cuda::decode_batch(gpu, gpu_views);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::string d = compare_bytes("unit " + std::to_string(i) + ": decoded output", ref_out[i].bytes,
                                        gpu_out[i].bytes, units[i].channels, dtype_size(units[i].dtype));
    if (!d.empty()) return d;
  }
  return {};
}

std::string compare_all(const std::vector<HostUnit>& units, const DgqV1Params& p) {
  const Outcome ref = encode_reference(units, p);
  const Outcome gpu = encode_cuda(units, p);
  if (!ref.error.empty() || !gpu.error.empty()) {
    if (ref.error == gpu.error) return {};  // both rejected the batch in the same words
    return "reference error: '" + ref.error + "', CUDA error: '" + gpu.error + "'";
  }
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::string d = first_difference(ref.encoded[i], gpu.encoded[i]);
    if (!d.empty()) return "unit " + std::to_string(i) + ": " + d;
  }
  return compare_decoded(units, ref.encoded, gpu.encoded);
}

}  // namespace

std::string first_difference(const DgqV1Encoded& ref, const DgqV1Encoded& gpu) {
  std::ostringstream s;
  if (ref.tokens != gpu.tokens || ref.channels != gpu.channels || ref.dtype != gpu.dtype) {
    s << "shape: reference [" << ref.tokens << " x " << ref.channels << "], CUDA [" << gpu.tokens << " x "
      << gpu.channels << "]";
    return s.str();
  }
  if (!(ref.params == gpu.params)) return "params: " + ref.params.to_string() + " vs " + gpu.params.to_string();
  if (ref.segments != gpu.segments) {
    s << "segments: reference " << ref.segments << ", CUDA " << gpu.segments;
    return s.str();
  }
  if (auto d = compare_sizes("boundaries", ref.boundaries, gpu.boundaries); !d.empty()) return d;
  for (std::size_t i = 0; i < ref.boundaries.size(); ++i) {
    if (ref.boundaries[i] != gpu.boundaries[i]) {
      s << "boundary " << i << ": reference token " << ref.boundaries[i] << ", CUDA token " << gpu.boundaries[i];
      return s.str();
    }
  }
  if (auto d = compare_sizes("bitmap", ref.bitmap, gpu.bitmap); !d.empty()) return d;
  for (std::size_t i = 0; i < ref.bitmap.size(); ++i) {
    if (ref.bitmap[i] != gpu.bitmap[i]) {
      s << "bitmap byte " << i << " (tokens " << 8 * i << ".." << 8 * i + 7 << "): reference 0x" << std::hex
        << int(ref.bitmap[i]) << ", CUDA 0x" << int(gpu.bitmap[i]);
      return s.str();
    }
  }
  const std::int64_t C = ref.params.granularity == Granularity::segment_channel ? ref.channels : 1;
  if (auto d = compare_ranges("lo", ref.lo, gpu.lo, C); !d.empty()) return d;
  if (auto d = compare_ranges("hi", ref.hi, gpu.hi, C); !d.empty()) return d;
  return compare_codes(ref, gpu);  // in-band markers live in the codes
}

std::string write_reproducer(const std::string& case_name, const std::vector<HostUnit>& units, const DgqV1Params& p,
                             const std::string& difference) {
  std::string safe = case_name;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  const std::string base = std::string(DGQ_BINARY_DIR) + "/gpu-mismatch-" + safe;
  std::ofstream bin(base + ".bin", std::ios::binary);
  for (const auto& u : units)
    bin.write(reinterpret_cast<const char*>(u.bytes.data()), static_cast<std::streamsize>(u.bytes.size()));
  std::ofstream txt(base + ".txt");
  txt << "case: " << case_name << "\nparams: " << p.to_string() << "\nunits: " << units.size() << "\n";
  for (std::size_t i = 0; i < units.size(); ++i) {
    txt << "unit " << i << ": " << dtype_name(units[i].dtype) << " [" << units[i].tokens << " x " << units[i].channels
        << "], " << units[i].bytes.size() << " bytes, row-major, back to back in " << base << ".bin\n";
  }
  txt << "difference: " << difference << "\n";
  return base + ".txt";
}

std::string differential_mismatch(const std::string& case_name, const std::vector<HostUnit>& units,
                                  const DgqV1Params& p) {
  std::vector<std::vector<std::byte>> before;
  for (const auto& u : units) before.push_back(u.bytes);
  std::string difference = compare_all(units, p);
  for (std::size_t i = 0; i < units.size() && difference.empty(); ++i) {
    if (units[i].bytes != before[i]) difference = "unit " + std::to_string(i) + ": input modified by an encode";
  }
  if (difference.empty()) return {};
  const std::string file = write_reproducer(case_name, units, p, difference);
  return case_name + " [" + p.to_string() + "]: " + difference + " (" + kExactBytes + "; reproducer: " + file + ")";
}

}  // namespace dgq::gpu_test
