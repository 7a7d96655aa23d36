// The C++ side of tools/bench-python.py: Scheme::compress and decompress timed in a C++ loop,
// on the same array and in the same process as the Python calls, so that the difference is what
// the bindings cost (argument conversion, the result object, the GIL) and nothing else.
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "array_views.hpp"
#include "bindings.hpp"
#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {

using Clock = std::chrono::steady_clock;

template <class Work>
std::vector<double> seconds_per_call(int repeats, Work&& work) {
  if (repeats < 1) throw ParameterError("repeats must be at least 1, got " + std::to_string(repeats));
  std::vector<double> seconds;
  seconds.reserve(static_cast<std::size_t>(repeats));
  nb::gil_scoped_release release;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    work();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return seconds;
}

}  // namespace

void bind_bench(nb::module_& m) {
  m.def(
      "_cpp_compress_seconds",
      [](std::string_view spec, const InputArray& x, int repeats) {
        const auto scheme = make_scheme(spec);
        const ConstTensor view = tensor_view(x, std::nullopt, "compress");
        Compressed out;
        return seconds_per_call(repeats, [&] { out = scheme->compress(view, TensorRole::key); });
      },
      nb::arg("spec"), nb::arg("array"), nb::arg("repeats"),
      "Seconds of each of `repeats` C++ calls of make_scheme(spec)->compress(array, key) (tools/bench-python.py).");
  m.def(
      "_cpp_decompress_seconds",
      [](std::string_view spec, const InputArray& x, int repeats) {
        const auto scheme = make_scheme(spec);
        const ConstTensor view = tensor_view(x, std::nullopt, "compress");
        const Compressed c = scheme->compress(view, TensorRole::key);
        std::vector<std::byte> out(view.bytes());
        const MutTensor target{out.data(), view.dtype, view.tokens, view.channels};
        return seconds_per_call(repeats, [&] { scheme->decompress(c, target); });
      },
      nb::arg("spec"), nb::arg("array"), nb::arg("repeats"),
      "Seconds of each of `repeats` C++ decompress calls of array compressed as keys (tools/bench-python.py).");
}

}  // namespace dgq::python
