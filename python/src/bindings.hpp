#pragma once
// The parts of the module dgq._dgq (python/src/dgq_module.cpp), one concept per file.
#include <nanobind/nanobind.h>

namespace dgq::python {

// dgq.Error (a ValueError), dgq.ParameterError and dgq.InputError, raised for the C++ exceptions
// of the same names with the same message (errors.cpp).
void bind_errors(nanobind::module_& m);
// dgq._dgq.families() and modifiers(): the registry's lists (registry_bindings.cpp).
void bind_registry(nanobind::module_& m);
// dgq.Scheme and dgq.Compressed (scheme_bindings.cpp).
void bind_schemes(nanobind::module_& m);
// dgq.CausalCache, the literal causal cache (causal_cache_bindings.cpp).
void bind_causal_cache(nanobind::module_& m);
// C++ timing loops for tools/bench-python.py (bench_bindings.cpp).
void bind_bench(nanobind::module_& m);
// dgq._dgq.decode_attention: the CPU decode kernel on compressed heads (decode_attention_bindings.cpp).
void bind_decode_attention(nanobind::module_& m);

}  // namespace dgq::python
