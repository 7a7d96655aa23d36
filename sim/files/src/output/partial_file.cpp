#include "dgq/sim/files/output/partial_file.hpp"

#include <filesystem>
#include <fstream>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"
#include "dgq/sim/files/output/output_target.hpp"
#include "output/runs_held.hpp"

namespace dgq::sim {

namespace fs = std::filesystem;

StagedOutput stage_output(const std::string& output, RunsInTarget runs) {
  const OutputTarget target = resolve_output(output);
  if (target.kind == OutputTarget::Kind::stream)
    throw InputError(output +
                     ": not a regular file (a device, pipe or socket); this output is written whole to a "
                     "file and renamed into place: name a file");
  if (runs == RunsInTarget::refuse && target.exists) refuse_to_replace_runs(target.path, "this output");
  return {target.path, target.path + ".partial"};
}

PartialFile::~PartialFile() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove(staged_.partial, ignored);
}

void PartialFile::commit() {
  fs::rename(staged_.partial, staged_.target);
  committed_ = true;
  h5::remember_written_here(staged_.target);
}

void check_text_output(const std::string& path) {
  const OutputTarget target = resolve_output(path);
  if (target.kind == OutputTarget::Kind::file && target.exists) refuse_to_replace_runs(target.path, "this output");
}

void write_text_file(const std::string& path, const std::string& text, bool executable) {
  if (resolve_output(path).kind == OutputTarget::Kind::stream) return write_to_stream(path, text);
  PartialFile guard(stage_output(path));
  {
    std::ofstream out(guard.partial(), std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Error("cannot write '" + guard.partial() + "'");
  }
  if (executable)
    fs::permissions(guard.partial(), fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  guard.commit();
}

}  // namespace dgq::sim
