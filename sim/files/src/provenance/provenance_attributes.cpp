// Writing and reading the provenance attributes of a file root or a run group.
#include "dgq/sim/files/provenance/provenance_attributes.hpp"

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/provenance/build_info.hpp"

namespace dgq::sim {

void write_build_attributes(hid_t object, const std::string& version) {
  const BuildInfo& b = build_info();
  h5::write_string_attribute(object, kAttrDgqVersion, version);
  h5::write_string_attribute(object, kAttrDgqCommit, b.commit);
  h5::write_int_attribute(object, kAttrDgqDirty, b.dirty ? 1 : 0);
}

void write_build_attributes(hid_t object) { write_build_attributes(object, build_info().version_string()); }

void write_provenance_attributes(hid_t object, const std::string& config_hash, const std::string& version) {
  write_build_attributes(object, version);
  h5::write_string_attribute(object, kAttrConfigHash, config_hash);
}

void write_provenance_attributes(hid_t object, const std::string& config_hash) {
  write_provenance_attributes(object, config_hash, build_info().version_string());
}

Provenance read_provenance_attributes(hid_t object, const std::string& context) {
  Provenance p;
  if (h5::has_attribute(object, kAttrDgqVersion))
    p.version = h5::read_string_attribute(object, kAttrDgqVersion, context);
  if (h5::has_attribute(object, kAttrConfigHash))
    p.config_hash = h5::read_string_attribute(object, kAttrConfigHash, context);
  return p;
}

}  // namespace dgq::sim
