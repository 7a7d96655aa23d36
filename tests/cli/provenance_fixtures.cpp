// Results files that another dgq build (or one before provenance) would have left, made by
// relabelling runs of this build, for the CLI's resume and merge refusals.
#include "provenance_fixtures.hpp"

#include <filesystem>
#include <fstream>

#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/sweep.hpp"

namespace dgq::test {

namespace h5 = dgq::sim::h5;
namespace fs = std::filesystem;

namespace {

void sweep(const std::string& config, const std::string& output, const std::string& shard) {
  fs::remove(output);
  sim::SweepOptions o;
  o.output = output;
  o.shard = sim::parse_shard(shard);
  sim::run_sweep(sim::parse_sweep_config(config), o);
}

// Replaces (or, value == nullptr, deletes) an attribute of /runs/<run>.
void relabel(const std::string& path, const std::string& run, const char* attribute, const char* value) {
  h5::Handle file(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path), h5::Handle::Kind::file);
  h5::Handle group = h5::open_group(file.get(), "/runs/" + run, path);
  if (h5::has_attribute(group.get(), attribute))
    h5::check_status(H5Adelete(group.get(), attribute), path + ": delete " + attribute);
  if (value != nullptr) h5::write_string_attribute(group.get(), attribute, value);
}

void copy(const std::string& from, const std::string& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

}  // namespace

void write_provenance_fixtures(const std::string& dir) {
  const std::string prov = dir + "/prov";
  fs::remove_all(prov);
  fs::create_directories(prov);
  const std::string runs = "schemes = [\"fp16\", \"q8_0\"]\ntraces = [\"../good.h5\"]\n";
  std::ofstream(prov + "/sweep.toml") << runs;
  std::ofstream(prov + "/layer0.toml") << runs << "[replay]\nlayers = [0]\n";
  sweep(prov + "/sweep.toml", prov + "/sweep.h5", "0/1");
  copy(prov + "/sweep.h5", prov + "/other-version.h5");
  relabel(prov + "/other-version.h5", "q8_0@good", "dgq_version", "not-this-build");
  copy(prov + "/other-version.h5", prov + "/allowed.h5");
  copy(prov + "/sweep.h5", prov + "/other-config.h5");
  copy(prov + "/sweep.h5", prov + "/no-provenance.h5");
  for (const char* run : {"fp16@good", "q8_0@good"})
    for (const char* attribute : {"dgq_version", "dgq_commit", "dgq_dirty", "config_hash"})
      relabel(prov + "/no-provenance.h5", run, attribute, nullptr);
  sweep(prov + "/sweep.toml", prov + "/shard0.h5", "0/2");
  sweep(prov + "/sweep.toml", prov + "/shard1-other.h5", "1/2");
  relabel(prov + "/shard1-other.h5", "q8_0@good", "dgq_version", "not-this-build");
}

}  // namespace dgq::test
