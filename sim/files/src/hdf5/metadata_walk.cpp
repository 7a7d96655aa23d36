#include "hdf5/metadata_walk.hpp"

#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "hdf5/h5_shared.hpp"

namespace dgq::sim::h5 {

namespace {

// Closes an id if it is valid; errors are irrelevant to the walk.
struct Id {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Id() {
    if (id >= 0) close(id);
  }
  bool ok() const { return id >= 0; }
};

struct Walk {
  MetadataWalkLimits limits;
  MetadataWalkCounts counts;
};

// Reads the values of an attribute or dataset whose file type is `type` as dgq's readers would:
// a single variable-length string through dgq's own global-heap reader (which throws on a corrupt
// heap: the parent will meet and report the same), anything else free of variable-length parts in
// its native form. Other variable-length values (sequences, arrays of strings) are never read by
// dgq, and libhdf5 1.10.8's conversion of them loops or copies out of bounds on a corrupt global
// heap: not read here either.
void read_value(hid_t obj, bool is_attribute, hid_t type, hid_t space, Walk& walk) {
  const hssize_t npoints = H5Sget_simple_extent_npoints(space);
  if (npoints <= 0) return;
  if (H5Tis_variable_str(type) > 0) {
    if (npoints != 1) return;
    try {
      read_variable_length_string(obj, is_attribute, "walk");
      ++walk.counts.values_read;
    } catch (const Error&) {  // an ordinary error, reported by the reader that meets it (bad_alloc is not)
    }
    return;
  }
  if (H5Tdetect_class(type, H5T_VLEN) > 0) return;
  Id mem{H5Tget_native_type(type, H5T_DIR_DEFAULT), H5Tclose};
  if (!mem.ok()) return;
  const std::size_t element = H5Tget_size(mem.id);
  if (element == 0 || static_cast<std::size_t>(npoints) > walk.limits.max_value_bytes / element) return;
  std::vector<unsigned char> buffer(static_cast<std::size_t>(npoints) * element);
  const herr_t status = is_attribute ? H5Aread(obj, mem.id, buffer.data())
                                     : H5Dread(obj, mem.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data());
  if (status >= 0) ++walk.counts.values_read;
}

herr_t visit_attribute(hid_t location, const char* name, const H5A_info_t*, void* data) {
  auto& walk = *static_cast<Walk*>(data);
  ++walk.counts.attributes;
  Id attr{H5Aopen(location, name, H5P_DEFAULT), H5Aclose};
  if (!attr.ok()) return 0;
  H5Aget_storage_size(attr.id);
  Id type{H5Aget_type(attr.id), H5Tclose};
  Id space{H5Aget_space(attr.id), H5Sclose};
  if (type.ok() && space.ok()) read_value(attr.id, true, type.id, space.id, walk);
  return 0;
}

// Every attribute name dgq's readers may ask for (generated from the sources at build time:
// cmake/DgqAttributeNames.cmake).
constexpr const char* kNamesDgqReads[] = {
#include "attribute_names_read.inc"
};

void walk_attributes(hid_t obj, Walk& walk) {
  // H5Aexists of an absent name scans every attribute message, as dgq's has_attribute() does
  // (libhdf5 1.10.8 has a use-after-free on that path: docs/robustness.md).
  H5Aexists(obj, "dgq: no attribute has this name");
  hsize_t index = 0;
  H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, &index, visit_attribute, &walk);
  // By name too, as the readers do: libhdf5 may fail to list a corrupt object's attributes
  // (iteration finds none) and still open, and loop or crash on, one asked for by name.
  for (const char* name : kNamesDgqReads)
    if (H5Aexists(obj, name) > 0) visit_attribute(obj, name, nullptr, &walk);
}

void walk_dataset(hid_t dataset, Walk& walk) {
  Id type{H5Dget_type(dataset), H5Tclose};
  Id space{H5Dget_space(dataset), H5Sclose};
  if (space.ok()) {
    const int rank = H5Sget_simple_extent_ndims(space.id);
    if (rank > 0 && rank <= H5S_MAX_RANK) {
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), max_dims(dims.size());
      H5Sget_simple_extent_dims(space.id, dims.data(), max_dims.data());
    }
  }
  Id dcpl{H5Dget_create_plist(dataset), H5Pclose};
  if (dcpl.ok()) {
    const H5D_layout_t layout = H5Pget_layout(dcpl.id);
    if (layout == H5D_CHUNKED) {
      hsize_t chunk[H5S_MAX_RANK];
      H5Pget_chunk(dcpl.id, H5S_MAX_RANK, chunk);
    }
    const int filters = H5Pget_nfilters(dcpl.id);
    for (int i = 0; i < filters && i < 64; ++i) {
      unsigned flags = 0, config = 0;
      std::size_t n_values = 8;
      unsigned values[8];
      char filter_name[64];
      H5Pget_filter2(dcpl.id, static_cast<unsigned>(i), &flags, &n_values, values, sizeof filter_name, filter_name,
                     &config);
    }
    if (layout == H5D_CONTIGUOUS) H5Dget_offset(dataset);
  }
  H5Dget_storage_size(dataset);  // a chunked dataset's chunk index is walked here
  if (type.ok() && space.ok() && H5Tget_class(type.id) == H5T_STRING &&
      H5Sget_simple_extent_npoints(space.id) <= static_cast<hssize_t>(walk.limits.max_string_dataset_elements))
    read_value(dataset, false, type.id, space.id, walk);
}

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto& walk = *static_cast<Walk*>(data);
  ++walk.counts.links;
  if (info->type == H5L_TYPE_SOFT || info->type == H5L_TYPE_EXTERNAL) {
    if (info->u.val_size > 0 && info->u.val_size <= 65536) {
      std::vector<char> value(info->u.val_size);
      H5Lget_val(group, name, value.data(), value.size(), H5P_DEFAULT);
    }
  }
  return walk.counts.links > walk.limits.max_objects ? 1 : 0;
}

herr_t visit_object(hid_t root, const char* name, const H5O_info_t* info, void* data) {
  auto& walk = *static_cast<Walk*>(data);
  if (++walk.counts.objects > walk.limits.max_objects) return 1;
  Id obj{H5Oopen(root, name, H5P_DEFAULT), H5Oclose};
  if (!obj.ok()) return 0;
  walk_attributes(obj.id, walk);
  if (info->type == H5O_TYPE_GROUP) {
    H5G_info_t group_info;
    H5Gget_info(obj.id, &group_info);
    hsize_t index = 0;
    H5Literate(obj.id, H5_INDEX_NAME, H5_ITER_NATIVE, &index, visit_link, &walk);
  } else if (info->type == H5O_TYPE_DATASET) {
    walk_dataset(obj.id, walk);
  }
  return 0;
}

}  // namespace

MetadataWalkCounts walk_metadata(hid_t file, const MetadataWalkLimits& limits) {
  Walk walk{limits, {}};
  H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit_object, &walk, H5O_INFO_ALL);
  return walk.counts;
}

}  // namespace dgq::sim::h5
