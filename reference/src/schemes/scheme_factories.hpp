#pragma once
// One factory per family; each reads its parameters from the parsed spec (see registry.cpp).
#include <memory>

#include "dgq/scheme.hpp"
#include "schemes/spec_args.hpp"

namespace dgq::schemes {

std::unique_ptr<Scheme> make_fp16_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_int8_token_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_int8_group64_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_int4_group64_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_fp8_e4m3_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_q8_0_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_kivi4_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_kivi2_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_dgq_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_q4_0_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_q4_1_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_q5_0_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_q5_1_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_iq4_nl_scheme(SpecArgs& args);
std::unique_ptr<Scheme> make_turboquant_scheme(SpecArgs& args);

}  // namespace dgq::schemes
