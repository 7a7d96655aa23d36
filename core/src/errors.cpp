#include "dgq/errors.hpp"

namespace dgq {

void rethrow_with_context(const std::exception_ptr& error, const std::string& where) {
  try {
    std::rethrow_exception(error);
  } catch (const ParameterError& e) {
    throw ParameterError(where + e.what());
  } catch (const Error& e) {
    throw InputError(where + e.what());
  }
}

std::string one_line(std::string text) {
  for (char& c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = ' ';
  }
  return text;
}

}  // namespace dgq
