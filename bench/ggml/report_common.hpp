#pragma once
// What both reports of the ggml harness (report.cpp: compress side by side; decode_report.cpp:
// decode attention) print the same way: a figure in a cell, and the machine and load of the run.
#include <string>

namespace dgq::ggml_bench {

std::string fmt(double v, int digits = 2);  // fixed, `digits` decimals; "" for 0 (a missing figure)
std::string machine();                      // "<CPU model name>, N CPUs"
std::string load_average();                 // "/proc/loadavg"'s 1, 5 and 15 min averages

}  // namespace dgq::ggml_bench
