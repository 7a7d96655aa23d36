#pragma once
// The dgq family's keys, read from a parsed spec by make_scheme's factory and by
// dgq_params_from_spec alike (dgq/dgq_parts.hpp), so both accept and reject the same specs.
#include "dgq/dgq.hpp"
#include "schemes/spec_args.hpp"

namespace dgq::schemes {

// Takes win, group_ratio, min_var, max_groups, granularity and markers (defaults: DgqParams{})
// and validates them; throws ParameterError naming the key. Leaves unknown keys for finish().
DgqParams take_dgq_params(SpecArgs& args);

}  // namespace dgq::schemes
