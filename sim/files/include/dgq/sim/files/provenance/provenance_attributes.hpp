#pragma once
// The provenance attributes (docs/results-format.md, "Provenance") on a file's root or a run
// group: dgq_version, dgq_commit, dgq_dirty (the build that wrote it) and config_hash.
#include <hdf5.h>

#include <string>

#include "dgq/sim/files/provenance/provenance.hpp"

namespace dgq::sim {

inline constexpr const char* kAttrDgqVersion = "dgq_version";
inline constexpr const char* kAttrDgqCommit = "dgq_commit";
inline constexpr const char* kAttrDgqDirty = "dgq_dirty";
inline constexpr const char* kAttrConfigHash = "config_hash";

// dgq_version, dgq_commit and dgq_dirty of this build. `version` replaces dgq_version when a
// result was made from pieces of several builds (an eval resumed with --allow-mixed-versions).
void write_build_attributes(hid_t object, const std::string& version);
void write_build_attributes(hid_t object);
// The build attributes and config_hash (with `version` as dgq_version when given).
void write_provenance_attributes(hid_t object, const std::string& config_hash);
void write_provenance_attributes(hid_t object, const std::string& config_hash, const std::string& version);

// dgq_version and config_hash as recorded; kNotRecorded for each one absent.
Provenance read_provenance_attributes(hid_t object, const std::string& context);

}  // namespace dgq::sim
