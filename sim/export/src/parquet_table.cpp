#include "parquet_table.hpp"

#include <cassert>
#include <cstring>

namespace dgq::sim::exporting {
namespace {

// parquet.thrift's enum values.
enum PhysicalType : std::int32_t { kInt64 = 2, kDouble = 5, kByteArray = 6 };
constexpr std::int32_t kOptional = 1;       // FieldRepetitionType
constexpr std::int32_t kConvertedUtf8 = 0;  // ConvertedType UTF8
constexpr std::int32_t kPlain = 0;          // Encoding
constexpr std::int32_t kRle = 3;
constexpr std::int32_t kUncompressed = 0;  // CompressionCodec
constexpr std::int32_t kDataPage = 0;      // PageType

// Thrift's compact protocol, the subset the metadata uses: structs of i32, i64, binary, lists
// and nested structs (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md).
class CompactWriter {
 public:
  enum Type : std::uint8_t { kI32 = 5, kI64 = 6, kBinary = 8, kList = 9, kStruct = 12 };

  void i32(int id, std::int32_t v) {
    field(id, kI32);
    varint(zigzag(v));
  }
  void i64(int id, std::int64_t v) {
    field(id, kI64);
    varint(zigzag(v));
  }
  void binary(int id, const std::string& s) {
    field(id, kBinary);
    string(s);
  }
  void begin_struct(int id) {
    field(id, kStruct);
    last_ids_.push_back(0);
  }
  void end_struct() {
    bytes.push_back(0);  // stop
    last_ids_.pop_back();
  }
  // A list field; then the caller writes `size` elements with the element_* calls.
  void begin_list(int id, Type element, std::size_t size) {
    field(id, kList);
    if (size < 15) {
      bytes.push_back(static_cast<std::uint8_t>((size << 4) | element));
    } else {
      bytes.push_back(static_cast<std::uint8_t>(0xF0 | element));
      varint(size);
    }
  }
  void element_i32(std::int32_t v) { varint(zigzag(v)); }
  void element_string(const std::string& s) { string(s); }
  void begin_element_struct() { last_ids_.push_back(0); }
  void end_element_struct() { end_struct(); }

  std::vector<std::uint8_t> bytes;

 private:
  std::vector<int> last_ids_{0};

  static std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
  }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<std::uint8_t>(v));
  }
  void string(const std::string& s) {
    varint(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void field(int id, Type type) {
    const int delta = id - last_ids_.back();
    assert(delta > 0 && delta <= 15);  // the metadata's ids ascend in small steps
    bytes.push_back(static_cast<std::uint8_t>((delta << 4) | type));
    last_ids_.back() = id;
  }
};

PhysicalType physical_type(const std::vector<ExportValue>& values) {
  bool any_double = false, any_integer = false;
  for (const ExportValue& v : values) {
    if (std::holds_alternative<std::string>(v)) return kByteArray;
    any_double |= std::holds_alternative<double>(v);
    any_integer |= std::holds_alternative<std::int64_t>(v);
  }
  if (any_double) return kDouble;
  return any_integer ? kInt64 : kByteArray;
}

template <class T>
void append_raw(std::vector<std::uint8_t>& out, T v) {
  std::uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts only (x86-64, aarch64): Parquet's order
  out.insert(out.end(), b, b + sizeof(T));
}

// The definition levels (1 = a value, 0 = null) in the RLE/bit-packing hybrid with bit width 1,
// as RLE runs only, prefixed by their byte length (data page v1).
std::vector<std::uint8_t> definition_levels(const std::vector<ExportValue>& values) {
  std::vector<std::uint8_t> runs;
  for (std::size_t i = 0; i < values.size();) {
    const bool present = !std::holds_alternative<std::monostate>(values[i]);
    std::size_t j = i;
    while (j < values.size() && !std::holds_alternative<std::monostate>(values[j]) == present) ++j;
    for (std::uint64_t header = (j - i) << 1;; header >>= 7) {  // RLE run: count << 1, LSB 0
      if (header < 0x80) {
        runs.push_back(static_cast<std::uint8_t>(header));
        break;
      }
      runs.push_back(static_cast<std::uint8_t>(header | 0x80));
    }
    runs.push_back(present ? 1 : 0);
    i = j;
  }
  std::vector<std::uint8_t> out;
  append_raw(out, static_cast<std::uint32_t>(runs.size()));
  out.insert(out.end(), runs.begin(), runs.end());
  return out;
}

// The PLAIN values of the non-null cells.
std::vector<std::uint8_t> plain_values(const std::vector<ExportValue>& values, PhysicalType type) {
  std::vector<std::uint8_t> out;
  for (const ExportValue& v : values) {
    if (std::holds_alternative<std::monostate>(v)) continue;
    if (type == kInt64) {
      append_raw(out, std::get<std::int64_t>(v));
    } else if (type == kDouble) {
      const auto* i = std::get_if<std::int64_t>(&v);
      append_raw(out, i != nullptr ? static_cast<double>(*i) : std::get<double>(v));
    } else {
      const auto* s = std::get_if<std::string>(&v);
      const std::string text = s != nullptr ? *s : csv_field(v);  // a number: the CSV's text
      append_raw(out, static_cast<std::uint32_t>(text.size()));
      out.insert(out.end(), text.begin(), text.end());
    }
  }
  return out;
}

struct WrittenChunk {
  PhysicalType type;
  std::int64_t offset, size;
};

}  // namespace

void write_parquet(const std::vector<ParquetColumn>& columns, std::ostream& out) {
  const std::size_t rows = columns.empty() ? 0 : columns.front().values.size();
  std::int64_t position = 4;
  out.write("PAR1", 4);
  std::vector<WrittenChunk> chunks;
  for (const ParquetColumn& column : columns) {
    assert(column.values.size() == rows);
    const PhysicalType type = physical_type(column.values);
    std::vector<std::uint8_t> page = definition_levels(column.values);
    const std::vector<std::uint8_t> values = plain_values(column.values, type);
    page.insert(page.end(), values.begin(), values.end());
    CompactWriter header;  // PageHeader
    header.i32(1, kDataPage);
    header.i32(2, static_cast<std::int32_t>(page.size()));
    header.i32(3, static_cast<std::int32_t>(page.size()));
    header.begin_struct(5);  // DataPageHeader
    header.i32(1, static_cast<std::int32_t>(rows));
    header.i32(2, kPlain);
    header.i32(3, kRle);
    header.i32(4, kRle);
    header.end_struct();
    header.bytes.push_back(0);  // the PageHeader's stop
    out.write(reinterpret_cast<const char*>(header.bytes.data()), std::streamsize(header.bytes.size()));
    out.write(reinterpret_cast<const char*>(page.data()), std::streamsize(page.size()));
    const auto size = static_cast<std::int64_t>(header.bytes.size() + page.size());
    chunks.push_back({type, position, size});
    position += size;
  }

  CompactWriter meta;  // FileMetaData
  meta.i32(1, 1);
  meta.begin_list(2, CompactWriter::kStruct, columns.size() + 1);
  meta.begin_element_struct();  // the root: a group of the columns
  meta.binary(4, "schema");
  meta.i32(5, static_cast<std::int32_t>(columns.size()));
  meta.end_element_struct();
  for (std::size_t c = 0; c < columns.size(); ++c) {
    meta.begin_element_struct();
    meta.i32(1, chunks[c].type);
    meta.i32(3, kOptional);
    meta.binary(4, columns[c].name);
    if (chunks[c].type == kByteArray) meta.i32(6, kConvertedUtf8);
    meta.end_element_struct();
  }
  meta.i64(3, static_cast<std::int64_t>(rows));
  meta.begin_list(4, CompactWriter::kStruct, 1);
  meta.begin_element_struct();  // RowGroup
  meta.begin_list(1, CompactWriter::kStruct, columns.size());
  std::int64_t total = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    meta.begin_element_struct();  // ColumnChunk
    meta.i64(2, chunks[c].offset);
    meta.begin_struct(3);  // ColumnMetaData
    meta.i32(1, chunks[c].type);
    meta.begin_list(2, CompactWriter::kI32, 2);
    meta.element_i32(kPlain);
    meta.element_i32(kRle);
    meta.begin_list(3, CompactWriter::kBinary, 1);
    meta.element_string(columns[c].name);
    meta.i32(4, kUncompressed);
    meta.i64(5, static_cast<std::int64_t>(rows));
    meta.i64(6, chunks[c].size);
    meta.i64(7, chunks[c].size);
    meta.i64(9, chunks[c].offset);
    meta.end_struct();
    meta.end_element_struct();
    total += chunks[c].size;
  }
  meta.i64(2, total);
  meta.i64(3, static_cast<std::int64_t>(rows));
  meta.end_element_struct();
  meta.binary(6, "dgq export");
  meta.bytes.push_back(0);  // the FileMetaData's stop
  out.write(reinterpret_cast<const char*>(meta.bytes.data()), std::streamsize(meta.bytes.size()));
  std::uint8_t length[4];
  const auto meta_size = static_cast<std::uint32_t>(meta.bytes.size());
  std::memcpy(length, &meta_size, 4);
  out.write(reinterpret_cast<const char*>(length), 4);
  out.write("PAR1", 4);
}

}  // namespace dgq::sim::exporting
