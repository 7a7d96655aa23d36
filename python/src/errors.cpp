// dgq's user-facing exceptions as Python exceptions (dgq/errors.hpp): the message is the C++
// one, unchanged, so a notebook sees what the CLI prints after "dgq: error: ". Error is a
// ValueError: every dgq error is about a value the caller passed (a spec, an array).
#include <Python.h>

#include <exception>
#include <string>

#include "bindings.hpp"
#include "dgq/errors.hpp"

namespace nb = nanobind;

namespace dgq::python {
namespace {
// Owned by the module (added to it below) for the life of the interpreter.
PyObject* error_type = nullptr;
PyObject* parameter_error_type = nullptr;
PyObject* input_error_type = nullptr;

PyObject* new_type(nb::module_& m, const char* name, PyObject* base, const char* doc) {
  const std::string qualified = std::string("dgq.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (type == nullptr) throw nb::python_error();
  m.attr(name) = nb::borrow(type);
  return type;
}
}  // namespace

void bind_errors(nb::module_& m) {
  error_type = new_type(m, "Error", PyExc_ValueError, "A dgq error: bad input data or parameters (dgq::Error).");
  parameter_error_type = new_type(m, "ParameterError", error_type,
                                  "A spec or argument out of its documented range (dgq::ParameterError).");
  input_error_type = new_type(m, "InputError", error_type,
                              "Input data violates the contract: NaN/Inf, shape, dtype (dgq::InputError).");
  // One translator, most derived first: nanobind tries translators in reverse order of
  // registration, so separate ones would depend on that order.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ParameterError& e) {
      PyErr_SetString(parameter_error_type, e.what());
    } catch (const InputError& e) {
      PyErr_SetString(input_error_type, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error_type, e.what());
    }
  });
}

}  // namespace dgq::python
