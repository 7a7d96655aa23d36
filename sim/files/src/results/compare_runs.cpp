// Deep comparison of two run groups (attributes, group structure, dataset shapes, types and
// values), used by `dgq merge` to accept identical duplicates and reject conflicting ones.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/typed_arrays.hpp"
#include "dgq/sim/files/results/merge.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "results/run_groups.hpp"

namespace dgq::sim {

namespace {

using h5::Handle;

// An id from H5Oopen (group or dataset), closed with H5Oclose.
struct ObjectId {
  hid_t id;
  explicit ObjectId(hid_t i) : id(i) {}
  ~ObjectId() { H5Oclose(id); }
  ObjectId(const ObjectId&) = delete;
  ObjectId& operator=(const ObjectId&) = delete;
};

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

std::vector<std::string> attribute_names(hid_t obj, const std::string& where) {
  std::vector<std::string> names;
  hsize_t index = 0;
  h5::check_status(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &index, collect_attribute, &names), where);
  return names;
}

std::string values_differ(hid_t type_a, hid_t type_b, hssize_t points_a, hssize_t points_b, const auto& read) {
  if (points_a != points_b) return "different sizes";
  const bool string_a = H5Tget_class(type_a) == H5T_STRING, string_b = H5Tget_class(type_b) == H5T_STRING;
  if (string_a != string_b || (!string_a && H5Tequal(type_a, type_b) <= 0)) return "different types";
  if (string_a) return "";  // strings are compared by the caller
  // Variable-length sequences would need H5Dvlen_reclaim after every read; dgq writes none.
  if (H5Tdetect_class(type_a, H5T_VLEN) != 0) return "unsupported variable-length type";
  if (points_a <= 0) return "";  // nothing to read (and memcmp must not see a null pointer)
  Handle native(h5::check(H5Tget_native_type(type_a, H5T_DIR_ASCEND), "native type"), Handle::Kind::datatype);
  const std::size_t bytes = H5Tget_size(native.get()) * static_cast<std::size_t>(points_a);
  std::vector<unsigned char> a(bytes), b(bytes);
  read(native.get(), a.data(), b.data());
  return bytes == 0 || std::memcmp(a.data(), b.data(), bytes) == 0 ? "" : "different values";
}

// A scalar attribute's value for a message ("128", "'q8_0'", "0.5"); "" for anything else.
std::string scalar_attribute_text(hid_t obj, hid_t attribute, hid_t type, const std::string& name,
                                  const std::string& where) {
  Handle space(h5::check(H5Aget_space(attribute), where), Handle::Kind::dataspace);
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return "";
  switch (H5Tget_class(type)) {
    case H5T_STRING: return "'" + one_line(h5::read_string_attribute(obj, name, where)) + "'";
    case H5T_INTEGER: return std::to_string(h5::read_int_attribute(obj, name, where));
    case H5T_FLOAT: {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", h5::read_double_attribute(obj, name, where));
      return text;
    }
    default: return "";
  }
}

std::string diff_attribute(hid_t a, hid_t b, const std::string& name, const std::string& where) {
  Handle aa(h5::check(H5Aopen(a, name.c_str(), H5P_DEFAULT), where), Handle::Kind::attribute);
  Handle ab(h5::check(H5Aopen(b, name.c_str(), H5P_DEFAULT), where), Handle::Kind::attribute);
  Handle ta(h5::check(H5Aget_type(aa.get()), where), Handle::Kind::datatype);
  Handle tb(h5::check(H5Aget_type(ab.get()), where), Handle::Kind::datatype);
  Handle sa(h5::check(H5Aget_space(aa.get()), where), Handle::Kind::dataspace);
  Handle sb(h5::check(H5Aget_space(ab.get()), where), Handle::Kind::dataspace);
  std::string why = values_differ(ta.get(), tb.get(), H5Sget_simple_extent_npoints(sa.get()),
                                  H5Sget_simple_extent_npoints(sb.get()), [&](hid_t mem, void* x, void* y) {
                                    h5::check_status(H5Aread(aa.get(), mem, x), where);
                                    h5::check_status(H5Aread(ab.get(), mem, y), where);
                                  });
  if (why.empty() && H5Tget_class(ta.get()) == H5T_STRING &&
      h5::read_string_attribute(a, name, where) != h5::read_string_attribute(b, name, where)) {
    why = "different values";
  }
  if (why == "different values") {
    const std::string text_a = scalar_attribute_text(a, aa.get(), ta.get(), name, where);
    const std::string text_b = scalar_attribute_text(b, ab.get(), tb.get(), name, where);
    if (!text_a.empty() && !text_b.empty()) why += " (" + text_a + " vs " + text_b + ")";
  }
  return why.empty() ? "" : where + ": attribute " + name + ": " + why;
}

std::string diff_dataset(hid_t a, hid_t b, const std::string& where) {
  const auto shape_a = h5::dataset_shape(a), shape_b = h5::dataset_shape(b);
  if (shape_a != shape_b) return where + ": shapes " + h5::shape_string(shape_a) + " vs " + h5::shape_string(shape_b);
  Handle ta(h5::check(H5Dget_type(a), where), Handle::Kind::datatype);
  Handle tb(h5::check(H5Dget_type(b), where), Handle::Kind::datatype);
  // Both shapes must be backed by stored bytes before a buffer is sized by them.
  const auto points = static_cast<hssize_t>(h5::check_stored_extent(a, where));
  h5::check_stored_extent(b, where);
  const std::string why = values_differ(ta.get(), tb.get(), points, points, [&](hid_t mem, void* x, void* y) {
    if (points == 0) return;
    h5::read_all(a, mem, x, where);
    h5::read_all(b, mem, y, where);
  });
  return why.empty() ? "" : where + ": " + why;
}

std::string diff_objects(hid_t a, hid_t b, const std::string& where, const std::set<std::string>& skip = {});

// The names but those in `skip`.
std::vector<std::string> names_without(std::vector<std::string> names, const std::set<std::string>& skip) {
  std::erase_if(names, [&](const std::string& n) { return skip.count(n) > 0; });
  return names;
}

// "different members (only in the first: a, b; only in the second: c)".
std::string names_difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const auto only = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    std::string list;
    for (const auto& n : x)
      if (std::find(y.begin(), y.end(), n) == y.end()) list += (list.empty() ? "" : ", ") + one_line(n);
    return list;
  };
  const std::string only_a = only(a, b), only_b = only(b, a);
  std::string text;
  if (!only_a.empty()) text += "only in the first: " + only_a;
  if (!only_b.empty()) text += (text.empty() ? "" : "; ") + std::string("only in the second: ") + only_b;
  return text.empty() ? "" : " (" + text + ")";
}

std::string diff_children(hid_t a, hid_t b, const std::string& where, VisitedObjects& seen_a, VisitedObjects& seen_b,
                          const std::set<std::string>& skip = {}) {
  const auto names_a = names_without(child_names(a, where), skip), names_b = names_without(child_names(b, where), skip);
  if (names_a != names_b) return where + ": different members" + names_difference(names_a, names_b);
  for (const std::string& name : names_a) {
    const std::string child = where + "/" + name;
    require_hard_link(a, name, child);
    require_hard_link(b, name, child);
    const ObjectId oa(h5::check(H5Oopen(a, name.c_str(), H5P_DEFAULT), child));
    const ObjectId ob(h5::check(H5Oopen(b, name.c_str(), H5P_DEFAULT), child));
    // A run is a tree: an object reached twice (a hard-link cycle or a shared object) is corrupt.
    seen_a.enter(oa.id, child);
    seen_b.enter(ob.id, child);
    const H5I_type_t kind_a = H5Iget_type(oa.id), kind_b = H5Iget_type(ob.id);
    if (kind_a != kind_b) return child + ": different kinds of object";
    std::string why = diff_objects(oa.id, ob.id, child);
    if (why.empty() && kind_a == H5I_DATASET) why = diff_dataset(oa.id, ob.id, child);
    if (why.empty() && kind_a == H5I_GROUP) why = diff_children(oa.id, ob.id, child, seen_a, seen_b);
    if (!why.empty()) return why;
  }
  return "";
}

// Attributes of one object (but those in `skip`).
std::string diff_objects(hid_t a, hid_t b, const std::string& where, const std::set<std::string>& skip) {
  const auto names_a = names_without(attribute_names(a, where), skip),
             names_b = names_without(attribute_names(b, where), skip);
  if (names_a != names_b) return where + ": different attributes" + names_difference(names_a, names_b);
  for (const std::string& name : names_a) {
    if (std::string why = diff_attribute(a, b, name, where); !why.empty()) return why;
  }
  return "";
}

}  // namespace

std::string diff_run_groups(hid_t a, hid_t b, const std::string& where, const DiffSkip& skip) {
  if (std::string why = diff_objects(a, b, where, skip.attributes); !why.empty()) return why;
  VisitedObjects seen_a, seen_b;
  seen_a.enter(a, where);
  seen_b.enter(b, where);
  return diff_children(a, b, where, seen_a, seen_b, skip.members);
}

std::string compare_runs(const std::string& path_a, const std::string& path_b, const std::string& name) {
  Handle fa = h5::open_file_readonly(path_a), fb = h5::open_file_readonly(path_b);
  const std::string group = "runs/" + name;
  const bool in_a = h5::link_exists(fa.get(), group), in_b = h5::link_exists(fb.get(), group);
  if (!in_a || !in_b) return "/" + group + ": missing in " + (in_a ? path_b : path_a);
  Handle ga = h5::open_group(fa.get(), group, path_a), gb = h5::open_group(fb.get(), group, path_b);
  return diff_run_groups(ga.get(), gb.get(), "/" + group);
}

}  // namespace dgq::sim
