#pragma once
#include <exception>
#include <stdexcept>
#include <string>

namespace dgq {

// User-facing errors: bad input data or parameters. The message names what and where
// (file, dataset, index); callers at the boundary (CLI, file readers) add context.
// Internal invariants use assert(), not these.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A parameter is out of its documented range (e.g. group_ratio=0).
class ParameterError : public Error {
 public:
  using Error::Error;
};

// Input data violates the contract (NaN/Inf, wrong shape, unsupported dtype, ...).
class InputError : public Error {
 public:
  using Error::Error;
};

// Rethrows `error` with `where` put before its message, keeping its kind: a ParameterError stays
// one, any other dgq::Error becomes an InputError, anything else propagates unchanged. For
// boundaries that run units in parallel, keep the first failure, and add its file, dataset and
// head afterwards.
[[noreturn]] void rethrow_with_context(const std::exception_ptr& error, const std::string& where);

// `text` on one line, whatever it quotes: every ASCII control character becomes a space. Error
// messages go through it wherever they quote what dgq does not control (libhdf5's messages, a
// file's attribute values and object names, a child's report): the CLI promises one line per
// error, and line-splitting tools also break at vertical tab, form feed and the file/group/
// record separators (found by tools/mutation-campaign.py).
std::string one_line(std::string text);

}  // namespace dgq
