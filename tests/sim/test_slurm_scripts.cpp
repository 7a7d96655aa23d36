// `dgq slurm`'s text and file state without a cluster: --array ranges, quoting, the two sbatch
// scripts, sbatch's answer, and which shards of a submission are complete. The scripts run
// against a real Slurm in tests/cluster (label cluster).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "dgq/errors.hpp"
#include "dgq/sim/files/results/results_file.hpp"
#include "dgq/sim/sweep/slurm.hpp"
#include "test_trace_helpers.hpp"

using namespace dgq;

namespace {

sim::SlurmOptions plain_options() {
  sim::SlurmOptions o;
  o.dgq = "/opt/dgq/bin/dgq";
  o.config = "/home/me/sweep.toml";
  o.output = "/scratch/me/results.h5";
  o.dir = "/scratch/me/results.h5.slurm";
  o.tasks = 4;
  o.job_name = "dgq-sweep";
  return o;
}

bool contains_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("array ranges: one index, a run, gaps, runs after gaps") {
  CHECK(sim::slurm_array_ranges({0}) == "0");
  CHECK(sim::slurm_array_ranges({3}) == "3");
  CHECK(sim::slurm_array_ranges({0, 1, 2, 3}) == "0-3");
  CHECK(sim::slurm_array_ranges({1, 3}) == "1,3");
  CHECK(sim::slurm_array_ranges({0, 1, 2, 5, 6, 9}) == "0-2,5-6,9");
  CHECK(sim::slurm_array_ranges({}) == "");
}

TEST_CASE("shell quoting: empty, plain, spaces, embedded single quotes") {
  CHECK(sim::shell_quote("") == "''");
  CHECK(sim::shell_quote("/a/b.toml") == "'/a/b.toml'");
  CHECK(sim::shell_quote("a b$c") == "'a b$c'");
  CHECK(sim::shell_quote("it's") == "'it'\\''s'");
}

TEST_CASE("the array script with default options, in full") {
  const sim::SlurmOptions o = plain_options();
  CHECK(sim::slurm_array_script(o, {0, 1, 2, 3}) ==
        R"(#!/bin/bash
# Written by `dgq slurm` (docs/cluster.md). Task i of this job array runs shard i/4 of
# /home/me/sweep.toml
# into /scratch/me/results.h5.slurm/shards/shard-i-of-4.h5. A requeued or
# resubmitted task resumes from that file: runs already complete in it are skipped.
#SBATCH --job-name=dgq-sweep
#SBATCH --array=0-3
#SBATCH --output=/scratch/me/results.h5.slurm/logs/sweep-%A_%a.out
#SBATCH --open-mode=append
#SBATCH --requeue
set -euo pipefail
export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"
shard="${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}"
shard_file='/scratch/me/results.h5.slurm/shards/shard-'"$shard"'-of-4.h5'
echo "dgq slurm: $(date -u +%FT%TZ) task $shard/4 of job ${SLURM_ARRAY_JOB_ID:-?} on $(hostname), restart ${SLURM_RESTART_COUNT:-0}, $OMP_NUM_THREADS thread(s) -> $shard_file"
exec '/opt/dgq/bin/dgq' sweep '/home/me/sweep.toml' -o "$shard_file" --shard "$shard/4" --threads "$OMP_NUM_THREADS" --device 'cpu' --progress
)");
  CHECK(sim::slurm_array_script_path(o) == "/scratch/me/results.h5.slurm/sweep.sbatch");
  CHECK(sim::slurm_shard_path(o, 3) == "/scratch/me/results.h5.slurm/shards/shard-3-of-4.h5");
}

TEST_CASE("the array script carries every placement option, only pending tasks and the throttle") {
  sim::SlurmOptions o = plain_options();
  o.partition = "gpu";
  o.time = "2:00:00";
  o.cpus_per_task = 8;
  o.mem = "16G";
  o.gpus_per_task = 1;
  o.device = "cuda";
  o.max_running = 2;
  o.extra_lines = {"--qos=long", "#SBATCH --account=kv"};
  const std::string s = sim::slurm_array_script(o, {1, 3});
  for (const char* line :
       {"#SBATCH --array=1,3%2", "#SBATCH --partition=gpu", "#SBATCH --time=2:00:00", "#SBATCH --cpus-per-task=8",
        "#SBATCH --mem=16G", "#SBATCH --gpus-per-task=1", "#SBATCH --qos=long", "#SBATCH --account=kv"}) {
    CAPTURE(line);
    CHECK(contains_line(s, line));
  }
  CHECK(s.find("--device 'cuda'") != std::string::npos);
  // Every #SBATCH line comes before the first command (sbatch stops reading them there).
  CHECK(s.rfind("#SBATCH") < s.find("set -euo pipefail"));
}

TEST_CASE("an array script needs at least one task") {
  CHECK_THROWS_AS(sim::slurm_array_script(plain_options(), {}), ParameterError);
}

TEST_CASE("the merge script runs dgq slurm --merge with the same submission, no GPUs") {
  sim::SlurmOptions o = plain_options();
  o.gpus_per_task = 2;
  o.partition = "short";
  o.extra_lines = {"--qos=long"};
  const std::string s = sim::slurm_merge_script(o);
  CHECK(contains_line(s, "#SBATCH --job-name=dgq-sweep-merge"));
  CHECK(contains_line(s, "#SBATCH --output=/scratch/me/results.h5.slurm/logs/merge-%j.out"));
  CHECK(contains_line(s, "#SBATCH --partition=short"));
  CHECK(contains_line(s, "#SBATCH --qos=long"));
  CHECK(s.find("gpus") == std::string::npos);
  CHECK(contains_line(s,
                      "exec '/opt/dgq/bin/dgq' slurm '/home/me/sweep.toml' -o '/scratch/me/results.h5' --tasks 4 "
                      "--dir '/scratch/me/results.h5.slurm' --sbatch 'sbatch' --squeue 'squeue' --merge"));
  CHECK(sim::slurm_merge_script_path(o) == "/scratch/me/results.h5.slurm/merge.sbatch");
}

TEST_CASE("sbatch commands: quoted, with the afterany dependency only when given") {
  CHECK(sim::sbatch_command("sbatch", "/d/sweep.sbatch", "") == "'sbatch' --parsable '/d/sweep.sbatch'");
  CHECK(sim::sbatch_command("/usr/bin/sbatch", "/d/merge.sbatch", "42") ==
        "'/usr/bin/sbatch' --parsable --dependency=afterany:42 '/d/merge.sbatch'");
}

TEST_CASE("sbatch's --parsable answer: id, id with cluster, warnings first, anything else is an error") {
  CHECK(sim::parse_sbatch_job_id("123\n") == "123");
  CHECK(sim::parse_sbatch_job_id("77;cluster2\n") == "77");
  CHECK(sim::parse_sbatch_job_id("sbatch: warning: something\n456\n") == "456");
  CHECK_THROWS_AS(sim::parse_sbatch_job_id(""), Error);
  CHECK_THROWS_AS(sim::parse_sbatch_job_id("sbatch: error: invalid partition specified\n"), Error);
  CHECK_THROWS_AS(sim::parse_sbatch_job_id("Submitted batch job 5\n"), Error);
}

TEST_CASE("shard states: a shard without file misses all its runs, a finished shard is complete") {
  const std::string dir = test::scratch_dir("slurm-shard-states");
  test::write_tiny_trace(dir + "/alpha.h5", test::tiny_meta(DType::f16, 48), DType::f16);
  std::ofstream(dir + "/sweep.toml") << "schemes = [\"fp16\", \"q8_0\", \"kivi-2\"]\ntraces = [\"alpha.h5\"]\n";
  const sim::SweepConfig config = sim::parse_sweep_config(dir + "/sweep.toml");
  sim::SlurmOptions o = plain_options();
  o.dir = dir + "/sub";
  o.tasks = 2;  // shard 0: runs 0 and 2, shard 1: run 1

  auto states = sim::slurm_shard_states(config, o);
  REQUIRE(states.size() == 2);
  CHECK(states[0].expected == 2);
  CHECK(states[0].missing == std::vector<std::string>{"fp16@alpha", "kivi-2_group=32,residual=32@alpha"});
  CHECK_FALSE(states[0].file_exists);
  CHECK(sim::describe_shard(states[1], 2) ==
        "shard 1/2: INCOMPLETE, 1 of 1 run(s) missing (q8_0@alpha), " + dir + "/sub/shards/shard-1-of-2.h5 (no file)");

  std::filesystem::create_directories(o.dir + "/shards");
  sim::SweepOptions run;
  run.output = sim::slurm_shard_path(o, 0);
  run.shard = {0, 2};
  sim::run_sweep(config, run);
  states = sim::slurm_shard_states(config, o);
  CHECK(states[0].complete());
  CHECK(states[0].file_exists);
  CHECK_FALSE(states[1].complete());
  CHECK(sim::describe_shard(states[0], 2) == "shard 0/2: complete, 2 run(s), " + run.output);
}

TEST_CASE("more tasks than runs is an error naming the counts") {
  const std::string dir = test::scratch_dir("slurm-too-many-tasks");
  test::write_tiny_trace(dir + "/alpha.h5", test::tiny_meta(DType::f16, 48), DType::f16);
  std::ofstream(dir + "/sweep.toml") << "schemes = [\"fp16\", \"q8_0\"]\ntraces = [\"alpha.h5\"]\n";
  const sim::SweepConfig config = sim::parse_sweep_config(dir + "/sweep.toml");
  sim::SlurmOptions o = plain_options();
  o.dir = dir + "/sub";
  o.tasks = 3;
  CHECK_THROWS_WITH(sim::slurm_shard_states(config, o), Catch::Contains("--tasks 3 for a sweep of 2 run(s)"));
  o.tasks = 2;
  CHECK(sim::slurm_shard_states(config, o).size() == 2);
}

TEST_CASE("jobs still in the queue: only those running this submission's scripts") {
  const std::vector<std::string> scripts = {"/d/sweep.sbatch", "/d/merge.sbatch"};
  CHECK(sim::jobs_running_scripts("", scripts).empty());
  CHECK(sim::jobs_running_scripts("12|(null)\n13|/other/sweep.sbatch\n14|/d/sweep.sbatch.old\n", scripts).empty());
  CHECK(sim::jobs_running_scripts("12|/d/sweep.sbatch\n13|(null)\n15|/d/merge.sbatch\n", scripts) ==
        std::vector<std::string>{"12", "15"});
  CHECK(sim::jobs_running_scripts("no bar here\n7|/d/merge.sbatch", scripts) == std::vector<std::string>{"7"});
  CHECK(sim::jobs_running_scripts("100|/d/merge.sbatch\n99|/d/sweep.sbatch\n", scripts) ==
        std::vector<std::string>{"99", "100"});
  // Running tasks of one array are one line each, all with the array's id.
  CHECK(sim::jobs_running_scripts("99|/d/sweep.sbatch\n99|/d/sweep.sbatch\n100|/d/merge.sbatch\n99|/d/sweep.sbatch\n",
                                  scripts) == std::vector<std::string>{"99", "100"});
}

TEST_CASE("a recorded trace that does not exist is an error at submission, naming config and trace") {
  const std::string dir = test::scratch_dir("slurm-missing-trace");
  test::write_tiny_trace(dir + "/alpha.h5", test::tiny_meta(DType::f16, 48), DType::f16);
  std::ofstream(dir + "/sweep.toml") << "schemes = [\"fp16\"]\ntraces = [\"alpha.h5\", \"gone.h5\"]\n";
  const sim::SweepConfig config = sim::parse_sweep_config(dir + "/sweep.toml");
  CHECK_THROWS_WITH(sim::check_slurm_inputs(config),
                    Catch::Contains("sweep.toml: trace 'gone': " + dir + "/gone.h5: no such file"));
  std::filesystem::copy_file(dir + "/alpha.h5", dir + "/gone.h5");
  CHECK_NOTHROW(sim::check_slurm_inputs(config));
}
