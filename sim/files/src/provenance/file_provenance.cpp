// read_file_provenance(): the root provenance attributes of any dgq file, for `dgq inspect`.
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"

namespace dgq::sim {

FileProvenance read_file_provenance(const std::string& path) {
  h5::Handle file = h5::open_file_readonly(path);
  const hid_t root = file.get();
  FileProvenance p;
  const auto text = [&](const char* name) -> std::optional<std::string> {
    if (!h5::has_attribute(root, name)) return std::nullopt;
    return h5::read_string_attribute(root, name, path);
  };
  p.format = text("format").value_or("");
  p.version = text(kAttrDgqVersion);
  p.commit = text(kAttrDgqCommit);
  p.config_hash = text(kAttrConfigHash);
  if (h5::has_attribute(root, kAttrDgqDirty)) p.dirty = h5::read_int_attribute(root, kAttrDgqDirty, path) != 0;
  return p;
}

}  // namespace dgq::sim
