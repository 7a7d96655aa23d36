#include "output/partial_file.hpp"

#include <filesystem>
#include <fstream>

#include "dgq/errors.hpp"
#include "hdf5/isolated_metadata_check.hpp"

namespace dgq::sim {

namespace fs = std::filesystem;

PartialFile::~PartialFile() {
  if (partial_.empty()) return;
  std::error_code ignored;
  fs::remove(partial_, ignored);
}

void PartialFile::commit_to(const std::string& final_path) {
  fs::rename(partial_, final_path);
  partial_.clear();
  h5::remember_written_here(final_path);
}

void write_text_file(const std::string& path, const std::string& text, bool executable) {
  PartialFile guard(path + ".partial");
  {
    std::ofstream out(guard.partial(), std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Error("cannot write '" + guard.partial() + "'");
  }
  if (executable) fs::permissions(guard.partial(), fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  guard.commit_to(path);
}

}  // namespace dgq::sim
