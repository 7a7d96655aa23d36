#pragma once
// Damage done to results files from outside dgq, for the results and sweep tests.
#include <hdf5.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace dgq::test {

// Creates /runs/<name> with no `complete` attribute, as a killed writer of another tool might.
inline void plant_incomplete_run(const std::string& path, const std::string& name) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t g = H5Gcreate2(f, ("/runs/" + name).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(g >= 0);
  H5Gclose(g);
  H5Fclose(f);
}

// Rewrites (or, with value == nullptr, deletes) a string attribute of /runs/<name>, as a run
// written by another dgq build (or before dgq recorded provenance) would have it.
inline void set_run_attribute(const std::string& path, const std::string& name, const std::string& attribute,
                              const char* value) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t g = H5Gopen2(f, ("/runs/" + name).c_str(), H5P_DEFAULT);
  REQUIRE(g >= 0);
  if (H5Aexists(g, attribute.c_str()) > 0) REQUIRE(H5Adelete(g, attribute.c_str()) >= 0);
  if (value != nullptr) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(g, attribute.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(a >= 0);
    REQUIRE(H5Awrite(a, type, &value) >= 0);
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
  }
  H5Gclose(g);
  H5Fclose(f);
}

// A run as written before dgq recorded provenance: no dgq_commit, dgq_dirty, config_hash, and
// the old dgq_version "0.1.0".
inline void make_run_predate_provenance(const std::string& path, const std::string& name) {
  for (const char* attribute : {"dgq_commit", "dgq_dirty", "config_hash"})
    set_run_attribute(path, name, attribute, nullptr);
  set_run_attribute(path, name, "dgq_version", "0.1.0");
}

}  // namespace dgq::test
