#pragma once
// Touches every piece of an HDF5 file's metadata that dgq's readers may touch: every object
// reachable by hard links (groups, datasets, committed datatypes), every link of every group,
// every attribute (type, dataspace and value, read as dgq reads it: a variable-length string
// through dgq's own global-heap reader, global_heap.hpp, never through libhdf5's), every
// dataset's datatype, dataspace, creation properties and stored size (which walks a chunked
// dataset's chunk index), and the value of small string datasets.
//
// It exists to be run in a throw-away child process (isolated_metadata_check.hpp): libhdf5
// 1.10.8 crashes, overflows buffers or loops on some corrupt metadata (docs/robustness.md), and
// a crash here must cost a child, not dgq. HDF5 errors are ignored on purpose: an ordinary
// error is reported later, with its precise context, by the reader that meets it.
#include <hdf5.h>

#include <cstddef>

namespace dgq::sim::h5 {

struct MetadataWalkLimits {
  std::size_t max_objects = std::size_t{1} << 20;       // same bound as a results run group
  std::size_t max_value_bytes = std::size_t{64} << 20;  // attributes / string datasets read whole
  std::size_t max_string_dataset_elements = 4096;       // larger string datasets: metadata only
};

struct MetadataWalkCounts {
  std::size_t objects = 0;
  std::size_t links = 0;
  std::size_t attributes = 0;
  std::size_t values_read = 0;
};

// Walks the file (an open file id); never throws on HDF5 errors.
MetadataWalkCounts walk_metadata(hid_t file, const MetadataWalkLimits& limits = {});

}  // namespace dgq::sim::h5
