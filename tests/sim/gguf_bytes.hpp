#pragma once
// GGUF files built byte by byte for the tests (tests/sim/test_gguf_file.cpp,
// test_memory_inputs.cpp): little-endian scalars, GGUF strings, padding to the alignment.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace dgq::test {

class GgufBytes {
 public:
  GgufBytes& u32(std::uint32_t v) { return raw(&v, 4); }
  GgufBytes& u64(std::uint64_t v) { return raw(&v, 8); }
  GgufBytes& f32(float v) { return raw(&v, 4); }
  GgufBytes& str(const std::string& s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  GgufBytes& raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    data.insert(data.end(), b, b + n);
    return *this;
  }
  GgufBytes& pad_to(std::size_t alignment) {
    while (data.size() % alignment != 0) data.push_back(0);
    return *this;
  }
  std::vector<std::uint8_t> data;
};

// The GGUF v3 header: magic, version, tensor count, metadata key count.
inline GgufBytes gguf_header(std::uint64_t tensors, std::uint64_t keys) {
  GgufBytes b;
  b.raw("GGUF", 4).u32(3).u64(tensors).u64(keys);
  return b;
}

// Writes the bytes to a temporary file named after `name`; returns its path.
inline std::string write_gguf_file(const std::string& name, const std::vector<std::uint8_t>& data) {
  const auto path = std::filesystem::temp_directory_path() / ("dgq-test-gguf-" + name + ".gguf");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  return path.string();
}

}  // namespace dgq::test
