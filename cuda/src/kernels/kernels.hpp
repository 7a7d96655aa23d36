#pragma once
// Launchers of the DGQ kernels (one concept per .cu file). All are asynchronous on `stream`
// and check the launch; docs/cuda.md gives the bytes each one moves.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "dgq/cuda/dgq_cuda.hpp"
#include "dgq/dgq_v1_params.hpp"

namespace dgq::cuda::detail {

inline constexpr unsigned long long kNoIndex = ~0ull;  // "no fault" in the status words

// Status words of an encode (unsigned long long, initialised to all-ones = "none"):
//   [0] first faulty token in flat order, as 2*flat_index + kind: a non-finite input element
//       (flat index unit*L*D + t*D + d), or a finite row whose variance overflows (d = 0);
//       the reference scans tokens in order and stops at the first, so the minimum matches it,
//   [1] (unit*kMaxSegments + segment)*C + c of the first range whose hi - lo overflows.
inline constexpr int kStatusTokenFault = 0;
inline constexpr unsigned long long kFaultNonFinite = 0;
inline constexpr unsigned long long kFaultVarianceOverflow = 1;
inline constexpr int kStatusRangeOverflow = 1;
inline constexpr int kStatusWords = 2;

// Per-token statistics, one warp per token (rule 1 plus min/max): var[t] = max(var_t, min_var).
void launch_token_stats(const void* x, const DeviceShape& shape, float min_var, float* var, float* tmin, float* tmax,
                        unsigned long long* status, cudaStream_t stream);

// Per-block mean of var (rule 2, sequential sum) and block min/max, one thread per block.
void launch_block_stats(const float* var, const float* tmin, const float* tmax, const DeviceShape& shape, int win,
                        float* bmean, float* bmin, float* bmax, cudaStream_t stream);

// Rules 3-5 per unit (one thread block per unit): edges[u][0..segments] and segments[u];
// with granularity=segment also the ranges (rule 6) and inv (rule 7).
void launch_select_segments(const float* bmean, const float* bmin, const float* bmax, const DeviceShape& shape,
                            const DgqV1Params& p, std::uint32_t* edges, int* segments, float* lo, float* hi, float* inv,
                            unsigned long long* status, cudaStream_t stream);

// granularity=segment-channel: per segment and channel min/max from the tensor (rule 6).
void launch_channel_ranges(const void* x, const DeviceShape& shape, const std::uint32_t* edges, const int* segments,
                           float* lo, float* hi, float* inv, unsigned long long* status, cudaStream_t stream);

// Rule 7 codes with in-band markers (rule 8) when asked; 16-byte loads and stores.
void launch_quantize(const void* x, const DeviceShape& shape, const std::uint32_t* edges, const int* segments,
                     const float* lo, const float* inv, std::int64_t range_channels, bool inband, std::int8_t* codes,
                     cudaStream_t stream);

// Rule 8 bitmap: bit t%8 of byte t/8 = segment(t) mod 2.
void launch_bitmap(const DeviceShape& shape, const std::uint32_t* edges, const int* segments, std::uint8_t* bitmap,
                   cudaStream_t stream);

// Decoder side: edges from the stored parts. counts/status in decode_status:
//   [u] = marker count per unit (int), then one unsigned long long error word (first bad unit).
void launch_recover_edges(Markers markers, const DeviceShape& shape, const std::int8_t* codes,
                          const std::uint8_t* bitmap, const std::uint32_t* stored_edges, const int* segments,
                          std::uint32_t* edges, int* counts, unsigned long long* error, cudaStream_t stream);

// scale[u][s][c] = (hi - lo)/253 (rule 7).
void launch_decode_scales(const float* lo, const float* hi, std::int64_t units, std::int64_t range_channels,
                          float* scale, cudaStream_t stream);

// Rule 7 dequantize (in-band markers unmarked first), rounded to the dtype; 16-byte loads.
void launch_dequantize(const std::int8_t* codes, const DeviceShape& shape, const std::uint32_t* edges,
                       const int* segments, const float* lo, const float* scale, std::int64_t range_channels,
                       bool inband, void* out, cudaStream_t stream);

}  // namespace dgq::cuda::detail
