#include "output/runs_held.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim {

namespace {

// Only a regular file is opened (a FIFO would block), and only one that starts as HDF5 files do
// (dgq's own have no user block): a text file is not handed to libhdf5.
bool starts_as_hdf5(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) return false;
  std::ifstream in(path, std::ios::binary);
  char signature[8] = {};
  return in.read(signature, sizeof signature) && std::memcmp(signature, "\x89HDF\r\n\x1a\n", 8) == 0;
}

}  // namespace

HeldRuns runs_held(const std::string& path) {
  static const char* const kFormats[] = {"dgq-results", "dgq-eval", "dgq-passkey-results"};
  if (!starts_as_hdf5(path)) return {};
  try {
    h5::Handle file = h5::open_file_readonly(path);
    if (!h5::has_attribute(file.get(), "format")) return {};
    const std::string format = h5::read_string_attribute(file.get(), "format", path);
    if (std::find(std::begin(kFormats), std::end(kFormats), format) == std::end(kFormats)) return {};
    if (!h5::link_exists(file.get(), "runs")) return {format, 0};
    h5::Handle runs = h5::open_group(file.get(), "runs", path + ": /runs");
    H5G_info_t info{};
    h5::check_status(H5Gget_info(runs.get(), &info), path + ": /runs");
    return {format, static_cast<std::size_t>(info.nlinks)};
  } catch (const Error&) {
    return {};  // a file dgq cannot read holds no run it could keep
  }
}

void refuse_to_replace_runs(const std::string& path, const std::string& what) {
  const HeldRuns held = runs_held(path);
  if (held.runs == 0) return;
  throw InputError(path + ": holds " + std::to_string(held.runs) + " run(s) (a " + held.format + " file); " + what +
                   " would replace them: remove the file or choose another output");
}

}  // namespace dgq::sim
