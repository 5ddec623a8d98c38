#include "calibrate/process_pool.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/traces/test_dir.h"

using namespace tokenline;
using tokenline::testing::read_all;
using tokenline::testing::TestDir;

TEST_CASE("Exit codes come back in job order, output goes to each job's log", "[process_pool]") {
  TestDir dir("process-pool");
  std::vector<ProcessJob> jobs;
  // The first job sleeps so that it finishes last.
  jobs.push_back({{"/bin/sh", "-c", "sleep 0.2; echo first; exit 3"}, dir.file("0.log")});
  jobs.push_back({{"/bin/sh", "-c", "echo second >&2"}, dir.file("1.log")});
  jobs.push_back({{"/bin/sh", "-c", "kill -9 $$"}, dir.file("2.log")});
  jobs.push_back({{"/no/such/binary"}, dir.file("3.log")});
  const std::vector<int> codes = run_processes(jobs, 3);
  REQUIRE(codes.size() == 4);
  CHECK(codes[0] == 3);
  CHECK(codes[1] == 0);
  CHECK(codes[2] == 128 + 9);
  CHECK(codes[3] == 127);
  CHECK(read_all(dir.file("0.log")) == "first\n");
  CHECK(read_all(dir.file("1.log")) == "second\n");
}

TEST_CASE("At most max_parallel children run at once", "[process_pool]") {
  TestDir dir("process-pool-limit");
  // Each job appends a start and an end mark; with one at a time they never interleave.
  const std::string log = dir.file("marks");
  std::vector<ProcessJob> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back({{"/bin/sh", "-c", "echo s >> '" + log + "'; sleep 0.05; echo e >> '" + log + "'"},
                    dir.file(std::to_string(i) + ".log")});
  run_processes(jobs, 1);
  CHECK(read_all(log) == "s\ne\ns\ne\ns\ne\n");
  CHECK(available_cpus() >= 1);
}

TEST_CASE("A child's failure reason is its log's last line, or the line before CLI11's help hint",
          "[process_pool]") {
  CHECK(log_reason("") == "no output");
  CHECK(log_reason("progress\ntokenline: --duration: expected a finite number, found 'nan'\n\n") ==
        "tokenline: --duration: expected a finite number, found 'nan'");
  CHECK(log_reason(
            "The following argument was not expected: --bogus\nRun with --help for more information.\n") ==
        "The following argument was not expected: --bogus");
  CHECK(log_reason("Run with --help for more information.\n") == "Run with --help for more information.");
}
