// dgq-bench --device cuda: compress/decompress of a Llama-3-8B-shaped layer on the GPU.
// Times are CUDA-event medians of single calls after warm-up; GB/s counts the bytes the
// kernels must move (compress: two reads of the fp16 tensor + one int8 write + ranges;
// decompress: one int8 read + one fp16 write), next to a device-to-device copy measured in the
// same run (bytes read + written).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "dgq/cuda/bench.hpp"
#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::cuda {
namespace {

struct Row {
  std::int64_t tokens = 0;
  double compress_us = 0, compress_gbps = 0, decompress_us = 0, decompress_gbps = 0, copy_gbps = 0;
  int segments_unit0 = 0;
};

class Timer {
 public:
  Timer() {
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  // Median milliseconds of `reps` calls, after `warmup` untimed ones.
  double median_ms(int warmup, int reps, const std::function<void()>& call) {
    for (int i = 0; i < warmup; ++i) call();
    check_cuda(cudaDeviceSynchronize(), "warm-up");
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
      check_cuda(cudaEventRecord(start_), "cudaEventRecord");
      call();
      check_cuda(cudaEventRecord(stop_), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float elapsed = 0;
      check_cuda(cudaEventElapsedTime(&elapsed, start_, stop_), "cudaEventElapsedTime");
      ms.push_back(elapsed);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

// Normal-ish fp16 noise with a variance step every 4096 tokens, so segmentation has work to do;
// a 1M-element tile is generated on the host and repeated on the device.
void fill_input(DeviceBuffer& x, std::int64_t elements) {
  constexpr std::int64_t kTile = 1 << 20;
  std::vector<std::uint16_t> tile(static_cast<std::size_t>(std::min(kTile, elements)));
  std::uint64_t state = 12345;
  for (std::size_t i = 0; i < tile.size(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float u = static_cast<float>((state >> 40) & 0xffffff) / 16777216.0f - 0.5f;
    const float scale = ((i / (4096 * 128)) % 2) ? 4.0f : 1.0f;
    tile[i] = rules::float_to_half(u * 3.0f * scale);
  }
  for (std::int64_t done = 0; done < elements; done += static_cast<std::int64_t>(tile.size())) {
    const std::int64_t n = std::min<std::int64_t>(static_cast<std::int64_t>(tile.size()), elements - done);
    check_cuda(
        cudaMemcpy(x.as<std::uint16_t>() + done, tile.data(), static_cast<std::size_t>(n) * 2, cudaMemcpyHostToDevice),
        "cudaMemcpy(bench input)");
  }
}

Row measure(std::int64_t tokens, const BenchOptions& o, Timer& timer) {
  const DeviceShape shape{o.kv_heads, tokens, o.head_dim, DType::f16};
  const std::int64_t n = shape.elements();
  const auto bytes = static_cast<std::size_t>(n) * 2;
  DeviceBuffer x, copy, out;
  x.reserve(bytes);
  copy.reserve(bytes);
  out.reserve(bytes);
  fill_input(x, n);
  DeviceEncoded enc;
  const DgqV1Params p;
  const int warmup = 3;

  Row r;
  r.tokens = tokens;
  const double copy_ms = timer.median_ms(warmup, o.repetitions, [&] {
    check_cuda(cudaMemcpyAsync(copy.get(), x.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  });
  r.copy_gbps = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e6);

  const double compress_ms = timer.median_ms(warmup, o.repetitions, [&] { encode_device(x.get(), shape, p, enc); });
  check_encode_status(enc);
  const double ranges = static_cast<double>(shape.units * kMaxSegments * 2 * sizeof(float));
  r.compress_us = compress_ms * 1e3;
  r.compress_gbps = (2.0 * static_cast<double>(bytes) + static_cast<double>(n) + ranges) / (compress_ms * 1e6);

  const double decompress_ms = timer.median_ms(warmup, o.repetitions, [&] { decode_device(enc, out.get()); });
  check_decode_status(enc);
  r.decompress_us = decompress_ms * 1e3;
  r.decompress_gbps = (static_cast<double>(n) + static_cast<double>(bytes)) / (decompress_ms * 1e6);
  check_cuda(cudaMemcpy(&r.segments_unit0, enc.segments.get(), sizeof(int), cudaMemcpyDeviceToHost),
             "cudaMemcpy(segments)");
  return r;
}

void print_table(const std::string& device, const BenchOptions& o, const std::vector<Row>& rows, std::ostream& out) {
  out << "DGQ v1 on " << device << ": " << o.kv_heads << " KV heads x " << o.head_dim
      << " dims, fp16, default params; median of " << o.repetitions << " calls (CUDA events)\n";
  out << "| tokens | compress us | compress GB/s | decompress us | decompress GB/s | d2d copy GB/s | compress/copy | "
         "decompress/copy |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  out << std::fixed;
  for (const Row& r : rows) {
    out << "| " << r.tokens << " | " << std::setprecision(1) << r.compress_us << " | " << r.compress_gbps << " | "
        << r.decompress_us << " | " << r.decompress_gbps << " | " << r.copy_gbps << " | " << std::setprecision(2)
        << r.compress_gbps / r.copy_gbps << " | " << r.decompress_gbps / r.copy_gbps << " |\n";
  }
}

void write_json(const std::string& path, const std::string& device, const BenchOptions& o,
                const std::vector<Row>& rows) {
  const std::string partial = path + ".partial";
  {
    std::ofstream f(partial);
    f << "{\n  \"device\": \"" << device << "\",\n  \"kv_heads\": " << o.kv_heads << ",\n  \"head_dim\": " << o.head_dim
      << ",\n  \"dtype\": \"f16\",\n  \"repetitions\": " << o.repetitions << ",\n  \"results\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "    {\"tokens\": " << r.tokens << ", \"compress_us\": " << r.compress_us
        << ", \"compress_gbps\": " << r.compress_gbps << ", \"decompress_us\": " << r.decompress_us
        << ", \"decompress_gbps\": " << r.decompress_gbps << ", \"copy_gbps\": " << r.copy_gbps
        << ", \"compress_fraction\": " << r.compress_gbps / r.copy_gbps
        << ", \"decompress_fraction\": " << r.decompress_gbps / r.copy_gbps
        << ", \"segments_unit0\": " << r.segments_unit0 << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
    if (!f) throw Error("cannot write " + partial);
  }
  std::filesystem::rename(partial, path);
}

}  // namespace

int run_benchmarks(const BenchOptions& requested, std::ostream& out) {
  constexpr int kNoDevice = 77;
  // The protocol: medians of at least 20 timed calls. dgq-bench's --reps default (7)
  // is the CPU benchmark's, so fewer are raised here rather than silently honoured.
  constexpr int kMinRepetitions = 20;
  BenchOptions options = requested;
  options.repetitions = std::max(options.repetitions, kMinRepetitions);
  std::string why;
  if (!device_available(&why)) {
    out << "no CUDA device: " << why << "\n";
    return kNoDevice;
  }
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const std::string device = prop.name;
  Timer timer;
  std::vector<Row> rows;
  for (const std::int64_t tokens : options.tokens) rows.push_back(measure(tokens, options, timer));
  print_table(device, options, rows, out);
  if (!options.json_path.empty()) write_json(options.json_path, device, options, rows);
  return 0;
}

}  // namespace dgq::cuda
