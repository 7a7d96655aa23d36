#pragma once
// Provenance (docs/results-format.md, "Provenance"): every file dgq writes that carries results
// records the dgq build that wrote it (dgq/sim/files/provenance/build_info.hpp) and a hash of the configuration
// that determined its numbers. Resume, merge and the notebooks compare them, so that results
// of different code or configuration are never mixed unless --allow-mixed-versions says so.
#include <optional>
#include <string>
#include <string_view>

namespace dgq::sim {

// What a file or run records when it predates provenance (no attribute).
inline constexpr const char* kNotRecorded = "unknown";
// The command-line flag that allows a mix, named in every refusal.
inline constexpr const char* kAllowMixedFlag = "--allow-mixed-versions";

// FNV-1a 64 of the canonical configuration text, as 16 lower-case hex digits. The texts
// (which parameters, in which order) are listed in docs/results-format.md.
std::string config_hash(std::string_view canonical_text);

// The dgq version and configuration hash of one run or file.
struct Provenance {
  std::string version = kNotRecorded;      // BuildInfo::version_string() of the writer
  std::string config_hash = kNotRecorded;  // config_hash() of its configuration
  bool operator==(const Provenance&) const = default;
};
// This build's provenance for a configuration hash.
Provenance this_build(std::string config_hash);

// "FILE: WHAT was written by dgq A (config HA), this is dgq B (config HB); rerun into a new
// output or pass --allow-mixed-versions" (what: "run NAME", "chunk 3", ...).
std::string mixed_provenance_message(const std::string& file, const std::string& what, const Provenance& recorded,
                                     const Provenance& expected);
// Throws InputError(mixed_provenance_message(...)) when recorded != expected, unless allow_mixed.
void require_provenance(const std::string& file, const std::string& what, const Provenance& recorded,
                        const Provenance& expected, bool allow_mixed);

// A file's root provenance attributes, for `dgq inspect`; each is empty when not recorded.
struct FileProvenance {
  std::string format;  // the root `format` attribute ("" if none): what kind of dgq file it is
  std::optional<std::string> version, commit, config_hash;
  std::optional<bool> dirty;
};
FileProvenance read_file_provenance(const std::string& path);

}  // namespace dgq::sim
