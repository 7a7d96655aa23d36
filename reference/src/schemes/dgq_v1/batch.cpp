// dgq_encode_batch: units are independent, so OpenMP over units gives the same bytes for any
// thread count (each unit is encoded by one thread, start to end).
#include <exception>
#include <string>

#include "dgq/dgq.hpp"
#include "dgq/errors.hpp"

namespace dgq {

std::vector<DgqV1Encoded> dgq_encode_batch(const std::vector<ConstTensor>& units, const DgqV1Params& p) {
  std::vector<DgqV1Encoded> out;
  dgq_encode_batch_into(units, p, out);
  return out;
}

void dgq_encode_batch_into(const std::vector<ConstTensor>& units, const DgqV1Params& p,
                           std::vector<DgqV1Encoded>& out) {
  p.validate();
  out.resize(units.size());
  // Exceptions must not cross the OpenMP region: keep the first failure (lowest unit index)
  // and rethrow it with the unit named.
  std::vector<std::string> errors(units.size());
  std::vector<char> is_input_error(units.size(), 0);
  const long long n = static_cast<long long>(units.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (long long i = 0; i < n; ++i) {
    try {
      dgq_encode_into(units[i], p, out[i]);
    } catch (const InputError& e) {
      errors[i] = e.what();
      is_input_error[i] = 1;
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (errors[i].empty()) continue;
    const std::string msg = "unit " + std::to_string(i) + ": " + errors[i];
    if (is_input_error[i]) throw InputError(msg);
    throw Error(msg);
  }
}

}  // namespace dgq
