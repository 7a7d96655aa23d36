#pragma once
// What decode attention accepts of a stored head's spec (parse_spec, dgq/registry.hpp): the
// scheme modifiers change what the parts hold, so each one is either read or refused by name,
// never ignored. rot=hadamard is read (the kernel moves the rotation to the query and the
// output); any other (sink: the first tokens kept apart) is refused.
#include <stdexcept>
#include <string>

#include "dgq/registry.hpp"

namespace dgq::cpu {

inline void refuse_modifiers_but_rotation(const ParsedSpec& spec, const std::string& scheme) {
  for (const std::string& key : spec.applied_modifiers()) {
    if (key != "rot")
      throw std::invalid_argument("decode_attention: '" + scheme + "' has the modifier " + key +
                                  "=, which the kernel does not read");
  }
}

}  // namespace dgq::cpu
