#pragma once
// `dgq export --format parquet`: the table as one Parquet file (Apache Parquet format 2.x,
// https://parquet.apache.org/docs/file-format/): one row group, one uncompressed PLAIN data page
// (v1) per column, the metadata in Thrift's compact protocol. That is the smallest subset every
// reader takes (pyarrow, and so pandas.read_parquet; tests/python/test_dgq_export.py reads it
// back and compares it with the CSV export).
//
// No Parquet library is among the packages dgq builds with (Debian 12 has no Arrow), so the
// writer is this file; it writes only what it needs:
// - a column's type is the widest of its values: INT64 when all are integers, DOUBLE when some
//   are floats (integers widened), else BYTE_ARRAY annotated UTF8 (numbers as the CSV writes
//   them); a column with no value at all is UTF8;
// - every column is OPTIONAL: a value a row does not record is a null (definition level 0),
//   the levels run-length encoded (bit width 1);
// - NaN and infinities are stored as they are (Parquet's DOUBLE is IEEE binary64).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "dgq/sim/export/export.hpp"

namespace dgq::sim::exporting {

struct ParquetColumn {
  std::string name;
  std::vector<ExportValue> values;  // one per row; std::monostate is a null
};

// Writes the columns (all of one row count) as a Parquet file to `out`.
void write_parquet(const std::vector<ParquetColumn>& columns, std::ostream& out);

}  // namespace dgq::sim::exporting
