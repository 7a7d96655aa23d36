// Entry point shared by every Catch2 test binary but the GPU suite (tests/gpu/gpu_main.cpp).
#include "catch_session.hpp"

int main(int argc, char* argv[]) { return dgq::test::run_catch_session(argc, argv, "dgq tests"); }
