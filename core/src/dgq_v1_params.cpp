// DgqV1Params: names, parsing, validation and the canonical text form (docs/spec.md, "Parameters").
#include <charconv>
#include <cmath>
#include <string>

#include "dgq/dgq_v1_params.hpp"
#include "dgq/errors.hpp"

namespace dgq {
namespace {

// Shortest text that reads back to the same float, so to_string() round-trips exactly.
std::string shortest(float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

[[noreturn]] void reject(const std::string& name, const std::string& value, const char* allowed) {
  throw ParameterError("parameter " + name + "=" + value + " is out of range: expected " + allowed);
}

}  // namespace

std::string_view granularity_name(Granularity g) { return g == Granularity::segment ? "segment" : "segment-channel"; }

std::string_view markers_name(Markers m) {
  switch (m) {
    case Markers::table: return "table";
    case Markers::bitmap: return "bitmap";
    case Markers::inband: return "inband";
  }
  return "?";
}

Granularity parse_granularity(std::string_view s) {
  if (s == "segment") return Granularity::segment;
  if (s == "segment-channel") return Granularity::segment_channel;
  throw ParameterError("parameter granularity='" + std::string(s) +
                       "' is unknown: expected segment or segment-channel");
}

Markers parse_markers(std::string_view s) {
  if (s == "table") return Markers::table;
  if (s == "bitmap") return Markers::bitmap;
  if (s == "inband") return Markers::inband;
  throw ParameterError("parameter markers='" + std::string(s) + "' is unknown: expected table, bitmap or inband");
}

std::string_view boundaries_name(Boundaries b) { return b == Boundaries::adaptive ? "adaptive" : "online"; }

Boundaries parse_boundaries(std::string_view s) {
  if (s == "adaptive") return Boundaries::adaptive;
  if (s == "online") return Boundaries::online;
  throw ParameterError("parameter boundaries='" + std::string(s) + "' is unknown: expected adaptive or online");
}

void DgqV1Params::validate() const {
  if (win < 1 || win > 65536) reject("win", std::to_string(win), "an integer in [1, 65536]");
  // Written as !(in range) so that NaN fails too.
  if (!(group_ratio > 0.0f && group_ratio <= 1.0f)) reject("group_ratio", shortest(group_ratio), "a number in (0, 1]");
  if (!(min_var >= 0.0f && std::isfinite(min_var))) reject("min_var", shortest(min_var), "a finite number >= 0");
  if (max_groups < 1 || max_groups > 8) reject("max_groups", std::to_string(max_groups), "an integer in [1, 8]");
  if (granularity != Granularity::segment && granularity != Granularity::segment_channel)
    reject("granularity", std::to_string(static_cast<int>(granularity)), "segment or segment-channel");
  if (markers != Markers::table && markers != Markers::bitmap && markers != Markers::inband)
    reject("markers", std::to_string(static_cast<int>(markers)), "table, bitmap or inband");
  if (boundaries != Boundaries::adaptive && boundaries != Boundaries::online)
    reject("boundaries", std::to_string(static_cast<int>(boundaries)), "adaptive or online");
}

std::string DgqV1Params::to_string() const {
  return "win=" + std::to_string(win) + ",group_ratio=" + shortest(group_ratio) + ",min_var=" + shortest(min_var) +
         ",max_groups=" + std::to_string(max_groups) + ",granularity=" + std::string(granularity_name(granularity)) +
         ",markers=" + std::string(markers_name(markers)) +
         (boundaries == Boundaries::adaptive ? "" : ",boundaries=" + std::string(boundaries_name(boundaries)));
}

}  // namespace dgq
