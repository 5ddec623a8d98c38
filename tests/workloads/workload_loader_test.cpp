#include "workloads/workload_loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/input_error.h"
#include "test_sources.h"

namespace tokenline {
namespace {

using test::drain;

TEST_CASE("the embedded default workload is the 200-line Mooncake head", "[loader]") {
  auto source = open_workload("default", {});
  const auto rs = drain(*source);
  REQUIRE(rs.size() == 200);
  CHECK(rs.front().arrival_s == 0.0);
  CHECK(rs.back().arrival_s == Approx(72.0));  // workloads/data/SOURCE.md: 0 to 72,000 ms
  CHECK(rs.front().block_tokens == 512);
  CHECK(source->describe().find("mooncake:<embedded>") == 0);
}

TEST_CASE("formats are recognised by prefix or by the first line", "[loader]") {
  const std::string path = "tl_test_workload.tmp";
  auto write = [&](const std::string& text) { std::ofstream(path, std::ios::binary) << text; };

  write("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44");
  CHECK(open_workload(path, {})->describe() == "azure:" + path);
  write("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n");
  CHECK(open_workload(path, {})->describe() == "mooncake:" + path);
  write("\n{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 1}\n");
  auto tl = open_workload(path, {});
  CHECK(tl->describe() == "tokenline:" + path);
  CHECK(drain(*tl).size() == 1);
  CHECK(open_workload("mooncake:" + path, {})->describe() == "mooncake:" + path);
  write("");
  CHECK_THROWS_WITH(open_workload(path, {}),
                    path +
                        ": expected a workload trace (tokenline JSONL, Mooncake JSONL or "
                        "Azure CSV), found an empty file");
  std::remove(path.c_str());
  CHECK_THROWS_WITH(
      open_workload("azure:no-such-file.csv", {}),
      "no-such-file.csv: expected a readable workload file, found a file that cannot be opened");
}

TEST_CASE("options reach the source: seed, window, skip-bad-lines", "[loader]") {
  WorkloadOptions options;
  options.seed = 5;
  options.window.max_requests = 7;
  auto a = open_workload("synthetic:n=50,input=uniform:1:100000", options);
  auto b = open_workload("synthetic:n=50,input=uniform:1:100000", options);
  const auto ra = drain(*a);
  REQUIRE(ra.size() == 7);
  CHECK(ra[6].input_tokens == drain(*b)[6].input_tokens);

  const std::string path = "tl_test_skip.tmp";
  std::ofstream(path) << "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\nbroken\n";
  WorkloadOptions skipping;
  skipping.reader.skip_bad_lines = true;
  auto skipped = open_workload(path, skipping);
  CHECK(drain(*skipped).size() == 1);
  CHECK(skipped->skipped_lines() == 1);
  CHECK(skipped->first_skip_reason() == path + ":2: expected a JSON object, found 'broken'");
  std::remove(path.c_str());

  options.window.time_scale = -1;
  CHECK_THROWS_AS(open_workload("default", options), InputError);
}

TEST_CASE("real traces through open_workload: 10-minute window of the Mooncake trace", "[loader][real]") {
  const auto path = test::real_trace("conversation_trace.jsonl");
  if (!path) {
    WARN("skipped: conversation_trace.jsonl not found (set TOKENLINE_TRACES_DIR)");
    return;
  }
  WorkloadOptions options;
  options.window.start_s = 600;
  options.window.duration_s = 600;
  auto source = open_workload(*path, options);
  const auto rs = drain(*source);
  REQUIRE(!rs.empty());
  CHECK(rs.front().arrival_s >= 0);
  CHECK(rs.back().arrival_s < 600);
  // The trace's ~12,031 requests over ~3,537 s make ~2,040 per 600 s; the count must be in that range.
  CHECK(rs.size() > 1000);
  CHECK(rs.size() < 4000);
}

TEST_CASE("a CSV without the Azure header and a directory get their own messages", "[loader][input_limits]") {
  const std::string path = "tl_test_wrong_header.tmp";
  std::ofstream(path, std::ios::binary) << "time,in,out\n1,2,3\n";
  CHECK_THROWS_WITH(
      open_workload(path, {}),
      path +
          ":1: expected a workload trace: a JSON object per line (tokenline or Mooncake JSONL) or "
          "the Azure CSV header TIMESTAMP,ContextTokens,GeneratedTokens, found 'time,in,out'");
  std::remove(path.c_str());
  const std::string dir = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH(open_workload(dir, {}), dir + ": expected a workload file, found a directory");
  CHECK_THROWS_WITH(open_workload("mooncake:" + dir, {}),
                    dir + ": expected a workload file, found a directory");
}

TEST_CASE("a FIFO workload is read once, however often it is opened", "[loader][input_limits]") {
  const std::string fifo =
      (std::filesystem::temp_directory_path() / ("tl_test_fifo-" + std::to_string(::getpid()) + ".jsonl"))
          .string();
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);  // blocks until the reader opens
    for (int i = 0; i < 3; ++i)
      out << "{\"timestamp\": " << i << ", \"input_length\": 5, \"output_length\": 1}\n";
  });
  WorkloadOptions options;  // its stream cache is shared by the three opens below
  CHECK(open_workload(fifo, options)->describe() == "mooncake:" + fifo);  // sniffs, then opens again
  auto again = open_workload(fifo, options);
  CHECK(drain(*again).size() == 3);
  CHECK(drain(*open_workload("mooncake:" + fifo, options)).size() == 3);
  writer.join();
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace tokenline
