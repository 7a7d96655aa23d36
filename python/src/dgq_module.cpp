// dgq._dgq: the C++ library seen from Python (docs/python.md). Thin on purpose: every rule is the
// library's (dgq_cpu, the CLI's own backend); the bindings only convert numpy arrays to dgq's
// tensor views and back, and dgq's exceptions to Python's. python/dgq/__init__.py is the API.
#include "bindings.hpp"

NB_MODULE(_dgq, m) {
  m.doc() = "dgq's schemes from the C++ library (use the package dgq, not this module)";
  dgq::python::bind_errors(m);
  dgq::python::bind_registry(m);
  dgq::python::bind_schemes(m);
  dgq::python::bind_causal_cache(m);
  dgq::python::bind_bench(m);
  dgq::python::bind_decode_attention(m);
}
