#pragma once
// numpy arrays as dgq's tensor views (dgq/tensor.hpp) and back, without copying: an input is
// read where numpy holds it, an output is decoded straight into the array returned.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"

namespace dgq::python {

// Any CPU array: the dtype, rank and layout are checked here, with dgq's messages, rather than
// by nanobind's overload resolution (whose TypeError would not say what dgq accepts).
using InputArray = nanobind::ndarray<nanobind::ro, nanobind::device::cpu>;
using OutputArray = nanobind::ndarray<nanobind::numpy>;

// A 2-D C-contiguous array of tokens x channels as a view. dtype: dgq's name ("f16", "bf16",
// "f32") or none, then the array's own (float16 or float32); bf16 is given as its bits, a uint16
// array with dtype "bf16". Throws InputError naming what was passed and what is accepted;
// `what` starts the message ("compress").
ConstTensor tensor_view(const InputArray& a, std::optional<std::string_view> dtype, std::string_view what);

// An ml_dtypes bfloat16 array (numpy has no bf16 of its own, and ml_dtypes' is no buffer type
// nanobind reads) as the uint16 view of its bits, for the caller to pass on with dtype "bf16".
// Anything else that is not an array dgq reads: InputError saying what is accepted; a dtype
// other than "bf16" given with a bfloat16 array: InputError.
nanobind::object bf16_bits_of(nanobind::handle array, std::optional<std::string_view> dtype, std::string_view what);

// out, a writable 2-D C-contiguous CPU array of tokens x channels in dtype (bf16: uint16), as a
// view to decode into; throws InputError saying what out must be otherwise. `what` starts the
// message ("decompress").
MutTensor output_view(const nanobind::handle& out, DType dtype, std::int64_t tokens, std::int64_t channels,
                      std::string_view what);

// "k" (keys) or "v" (values), else ParameterError saying so: the role argument of every binding.
TensorRole parse_role(std::string_view role);

// A new numpy array of tokens x channels in dtype (bf16 as uint16), and its view in `view`.
OutputArray new_matrix(DType dtype, std::int64_t tokens, std::int64_t channels, MutTensor& view);

}  // namespace dgq::python
