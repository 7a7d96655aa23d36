#pragma once
// Catch2's runner, compiled once (catch_session.cpp) for every test binary: its implementation is
// the single most expensive file of the build (about 40 s), so the two entry points, the
// ordinary one (catch_main.cpp) and the GPU suite's (tests/gpu/gpu_main.cpp), share it.
namespace dgq::test {
// Prints "<banner>: seed N (override with DGQ_TEST_SEED)" to stderr and runs Catch2's session.
int run_catch_session(int argc, char* argv[], const char* banner);
}  // namespace dgq::test
