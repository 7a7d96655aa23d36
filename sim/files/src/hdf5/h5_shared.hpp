#pragma once
// Helpers that several of the h5 files use (attributes, strings, datasets); not part of h5.hpp's
// API.
#include <hdf5.h>

#include <string>

#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim::h5 {

// Opens attribute `name` of obj; InputError(where + ...) when it is missing or holds more than
// one value.
Handle open_single_attribute(hid_t obj, const std::string& name, const std::string& where);
// Reads one string from an attribute (is_attribute) or a scalar dataset, fixed or variable length.
std::string read_string_object(hid_t obj, bool is_attribute, const std::string& where);
// Reads a single variable-length string from an attribute or a scalar dataset: libhdf5 reads its
// stored heap id, dgq the string from the file's bytes (global_heap.hpp). Throws InputError
// (where + ": corrupt global heap (...)") where libhdf5 1.10.8 would loop or copy out of bounds.
std::string read_variable_length_string(hid_t obj, bool is_attribute, const std::string& where);
// Variable-length UTF-8, the string type dgq writes.
Handle utf8_string_type();
// The number of elements of a dataset's dataspace.
hssize_t element_count(hid_t dataset);

}  // namespace dgq::sim::h5
