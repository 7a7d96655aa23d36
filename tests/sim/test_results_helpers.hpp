#pragma once
// Damage done to results files from outside dgq, for the results and sweep tests.
#include <hdf5.h>

#include <string>

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

}  // namespace dgq::test
