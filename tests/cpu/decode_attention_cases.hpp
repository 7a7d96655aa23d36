#pragma once
// The harness of the decode attention tests (test_decode_attention_*.cpp): a case (format,
// rotation, shape, values, spec), the stored cache it builds for every KV head through the
// scheme (decode_attention_cases.cpp), and check_case, which holds the kernel's output
// (decode_attention_checks.cpp):
//  - bit for bit against a scalar twin written here, which runs the order the kernel documents
//    (dgq/attention_rules.hpp) on the cache decoded by the reference's block decoders, and
//    rotates the query and the output with the reference's Hadamard rotation;
//  - within a stated bound against plain softmax attention in double over Scheme::decompress's
//    output (the original basis, also for rot=hadamard), which shares no code with the kernel;
//  - the same bytes from 1, 2 and 3 threads and from the AVX2 and the scalar path.
// In a namespace of its own, with the test cases inside it, so that the unity build's batches
// see no second definition of these names.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgq/attention_rules.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/scheme.hpp"
#include "dgq/stored_format.hpp"
#include "owned_tensor.hpp"

namespace decode_test {

using dgq::StoredFormat;
using dgq::cpu::DecodeAttentionShape;
using dgq::cpu::DecodePath;
namespace ar = dgq::attention_rules;

// regimes: random rows whose spread jumps by 8x at a third and at two thirds of the tokens,
// so that DGQ finds several segments.
enum class Values { random, constant_rows, large, regimes };

struct DecodeCase {
  StoredFormat format;
  bool rotated;
  DecodeAttentionShape shape;
  Values values = Values::random;
  std::string dgq_markers = "table";        // format dgq: its markers parameter
  std::string dgq_granularity = "segment";  // and its granularity
  std::string uniform_spec = "";            // a dgq2 or KIVI spec: the uniform formats (format ignored)
};

std::string spec_of(const DecodeCase& c);

// One role's cache for every KV head: the scheme's stored blocks, those blocks decoded in the
// stored basis (by the reference's decoders), and Scheme::decompress's output.
struct RoleCache {
  std::vector<dgq::Compressed> stored;
  std::vector<std::vector<float>> decoded, decompressed;
  std::vector<dgq::cpu::SpanRanges> ranges;  // formats with ranges (dgq, uniform*)
  std::vector<const std::uint8_t*> rows;     // what the kernel reads: blocks, or codes
  std::vector<const std::uint8_t*> raw;      // dgq2's and KIVI's raw rows (packed_codes_head)
  std::int64_t raw_tokens = 0;
  std::int64_t row_stride = 0;               // vLLM's presets: bytes from a token's codes to the next's
  StoredFormat format = StoredFormat::q8_0;  // the uniform heads' (from packed_codes_head)
  bool rotated = false;
  // Relative error per value of `decompressed` against the exact inverse rotation of `decoded`:
  // a rotated dgq2 role decompresses to fp16 after rotating back (rule V0), the kernel rotates
  // the fp32 output instead, so half an fp16 ulp (2^-11 relative) enters the plain bound.
  double output_rounding = 0;
  // TurboQuant: the kernel's rotation (the head's, fast kernels) and the twin's (the reference's
  // turboquant::Rotation drawn here from the spec's seed): forward for K, inverse for V.
  std::function<void(float*)> rotation, twin_rotation;
};

struct Problem {
  DecodeCase c;
  RoleCache k, v;
  std::vector<float> q;
  float scale;
  dgq::cpu::StoredKv stored;
};

// Plain attention in double on Scheme::decompress's output, and its bound per element.
struct Reference {
  std::vector<double> out;
  double bound = 0;  // per element
};

// Rows of one KV head as the case asks (values), from seed.
dgq::test::OwnedTensor head_values(const DecodeCase& c, std::uint64_t seed);
Problem make_problem(const DecodeCase& c, std::uint64_t seed);
std::vector<float> run_kernel(const Problem& p, int threads, DecodePath path = DecodePath::best);
std::vector<float> twin_attention(const Problem& p);
Reference plain_attention(const Problem& p);
std::string describe(const DecodeCase& c, std::uint64_t seed);
bool same_bytes(const std::vector<float>& a, const std::vector<float>& b);
// Every check of one case: twin bits, plain bound, thread counts, the two paths.
void check_case(const DecodeCase& c, std::uint64_t seed);

inline constexpr StoredFormat kFormats[] = {StoredFormat::q8_0, StoredFormat::q4_0, StoredFormat::iq4_nl};

}  // namespace decode_test
