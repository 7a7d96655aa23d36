// Opening, creating and closing HDF5 files (h5.hpp, "Files"), and in-memory file images for
// the fuzz targets.
#include "dgq/sim/files/hdf5/h5.hpp"

#include <filesystem>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/isolated_metadata_check.hpp"

namespace dgq::sim::h5 {

namespace {
// A strong close degree makes H5Fclose close every object still open in the file, so the
// bytes are on disk when the writer renames X.partial to X.
Handle strong_close_fapl() {
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "file access properties"), Handle::Kind::plist);
  check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "file access properties");
  return fapl;
}
}  // namespace

namespace {
struct FileImage {
  std::string name;
  const void* data = nullptr;
  std::size_t size = 0;
};
thread_local FileImage* current_image = nullptr;

// Opens the registered in-memory image through the core driver (no backing store); < 0 on failure.
hid_t open_image_id(const FileImage& image) {
  Handle fapl = strong_close_fapl();
  check_status(H5Pset_fapl_core(fapl.get(), 1 << 16, false), "file access properties");
  check_status(H5Pset_file_image(fapl.get(), const_cast<void*>(image.data), image.size), "file image");
  return H5Fopen(image.name.c_str(), H5F_ACC_RDONLY, fapl.get());
}

Handle open_image_readonly(const FileImage& image) {
  const std::string not_hdf5 = image.name + ": not an HDF5 file or truncated";
  if (image.size == 0) throw InputError(not_hdf5);
  check_metadata_isolated(
      image.name, [&image] { return open_image_id(image); }, false);
  const hid_t id = open_image_id(image);
  if (id < 0) {
    const std::string detail = take_error_message();
    throw InputError(detail.empty() ? not_hdf5 : not_hdf5 + " (HDF5: " + detail + ")");
  }
  return Handle(id, Handle::Kind::file);
}
}  // namespace

ScopedFileImage::ScopedFileImage(std::string name, const void* data, std::size_t size) {
  current_image = new FileImage{std::move(name), data, size};
}
ScopedFileImage::~ScopedFileImage() {
  delete current_image;
  current_image = nullptr;
}

Handle open_file_readonly(const std::string& path) {
  silence_hdf5_errors();
  if (current_image && current_image->name == path) return open_image_readonly(*current_image);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a file");
  const std::string not_hdf5 = path + ": not an HDF5 file or truncated";
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    take_error_message();
    throw InputError(not_hdf5);
  }
  const auto open_id = [&path] { return H5Fopen(path.c_str(), H5F_ACC_RDONLY, strong_close_fapl().get()); };
  check_metadata_isolated(path, open_id, true);
  const hid_t id = open_id();
  if (id < 0) {
    const std::string detail = take_error_message();
    throw InputError(detail.empty() ? not_hdf5 : not_hdf5 + " (HDF5: " + detail + ")");
  }
  return Handle(id, Handle::Kind::file);
}

Handle create_file(const std::string& path) {
  silence_hdf5_errors();
  Handle fapl = strong_close_fapl();
  return Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), path + ": cannot create file"),
                Handle::Kind::file);
}

Handle open_own_copy_readwrite(const std::string& copy, const std::string& original) {
  silence_hdf5_errors();
  if (!is_written_here(original))
    throw Error(original + ": not a file this process wrote; it cannot be appended to unchecked");
  Handle fapl = strong_close_fapl();
  return Handle(check(H5Fopen(copy.c_str(), H5F_ACC_RDWR, fapl.get()), copy + ": cannot open for writing"),
                Handle::Kind::file);
}

void close_file(Handle& file, const std::string& context) {
  if (!file.valid()) return;
  const hid_t id = file.get();
  if (H5Fflush(id, H5F_SCOPE_LOCAL) < 0 || !file.close()) {
    const std::string detail = one_line(take_error_message());
    // Keep a failed file open: closing it again (at exit) crashes libhdf5 1.10.8.
    file.release();
    throw InputError(context + ": closing the file failed" + (detail.empty() ? "" : " (HDF5: " + detail + ")") +
                     " (disk full?)");
  }
}

}  // namespace dgq::sim::h5
