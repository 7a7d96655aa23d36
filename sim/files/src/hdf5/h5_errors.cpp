// HDF5's errors turned into dgq's: its own printing silenced, its innermost message kept for
// one clear InputError line (h5.hpp).
#include "dgq/sim/files/hdf5/h5.hpp"

#include <mutex>

#include "dgq/errors.hpp"

namespace dgq::sim::h5 {

namespace {
// libhdf5 1.10.8's exit handler closes files still open and crashes in H5F__close_cb on a file
// whose flush failed (disk full). dgq closes every file it writes itself (close_file(), the
// Handle destructors), so the handler is switched off before the library starts.
[[maybe_unused]] const bool no_hdf5_exit_handler = [] {
  H5dont_atexit();
  return true;
}();
}  // namespace

void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {
// H5E_WALK_UPWARD visits the innermost (most specific) error first.
herr_t keep_innermost(unsigned n, const H5E_error2_t* err, void* client) {
  auto* message = static_cast<std::string*>(client);
  if (n == 0 && err->desc) *message = err->desc;
  return 0;
}
}  // namespace

std::string take_error_message() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &message);
  H5Eclear2(H5E_DEFAULT);
  return message;
}

void fail(const std::string& context) {
  std::string detail = take_error_message();
  for (char& c : detail)
    if (c == '\n' || c == '\r') c = ' ';
  throw InputError(detail.empty() ? context : context + " (HDF5: " + detail + ")");
}

hid_t check(hid_t id, const std::string& context) {
  if (id < 0) fail(context);
  return id;
}

void check_status(herr_t status, const std::string& context) {
  if (status < 0) fail(context);
}

}  // namespace dgq::sim::h5
