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

}  // namespace dgq
