#pragma once
// The values cmake/DgqBuildInfo.cmake generates into the build folder (build_info_data.cpp):
// kept out of every other source so that a new commit recompiles one tiny file.
namespace dgq::sim::generated {
extern const char* const kBuildCommit;
extern const bool kBuildDirty;
extern const char* const kBuildDiffHash;
}  // namespace dgq::sim::generated
