// The CLI boundary under hostile and careless input (issue 16): every case ends in one message and a
// documented exit code (2 bad input, 1 internal error), before work starts, never a signal, a hang, an
// unbounded allocation or figures corrupted with exit 0. Each case was measured failing before the fix.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::run_tokenline;
using testing::TestDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string mooncake_line(long long timestamp_ms) {
  return "{\"timestamp\": " + std::to_string(timestamp_ms) +
         ", \"input_length\": 64, \"output_length\": 4}\n";
}

// A short simulation's options: the tiny model keeps each run well under a second.
const std::string kSim = "sim --model glm-5.3 --parallel tp8 ";

TEST_CASE("runs that would grow memory without bound are refused at once", "[cli][input_limits]") {
  TestDir dir("cli_issue16_memory");
  const auto run = run_tokenline("run --model glm-5.3 --workload synthetic:n=1 --out " + dir.file("o"), dir);
  CHECK(run.exit_code == 2);
  CHECK(contains(run.stderr_text, "/proc/meminfo MemAvailable"));
  const auto many = run_tokenline("sim --instances 100000 --out " + dir.file("o"), dir);
  CHECK(many.exit_code == 2);
  CHECK(contains(many.stderr_text, "--instances: expected at most 1024"));
  const auto sessions =
      run_tokenline("sim --workload synthetic-sessions:sessions=100000000000 --out " + dir.file("o"), dir);
  CHECK(sessions.exit_code == 2);
  CHECK(contains(sessions.stderr_text, "synthetic-sessions: sessions: expected an integer in [1, 10000000]"));
  const auto old_keys =
      run_tokenline("sim --workload synthetic:sessions=10,turns=4 --out " + dir.file("o"), dir);
  CHECK(old_keys.exit_code == 2);
  CHECK(contains(old_keys.stderr_text, "synthetic: sessions: expected synthetic-sessions:"));
}

TEST_CASE("a line nesting 100,000 brackets is a bad line, not a segfault", "[cli][input_limits]") {
  TestDir dir("cli_issue16_deep");
  const std::string trace = dir.file("deep.jsonl");
  std::ofstream(trace) << mooncake_line(0) << std::string(100'000, '[') << std::string(100'000, ']') << "\n"
                       << mooncake_line(1000);
  const auto strict = run_tokenline(kSim + "--workload mooncake:" + trace + " --out " + dir.file("a"), dir);
  CHECK(strict.exit_code == 2);
  CHECK(contains(strict.stderr_text, "deep.jsonl:2: expected JSON nested at most 64 levels deep"));
  const auto skip =
      run_tokenline(kSim + "--workload mooncake:" + trace + " --skip-bad-lines --out " + dir.file("b"), dir);
  CHECK(skip.exit_code == 0);
  CHECK(contains(skip.stderr_text, "skipped 1 malformed workload lines"));
  CHECK(testing::read_json(dir.file("b/metrics.json"))["requests"]["completed"] == 2);
  CHECK_FALSE(std::filesystem::exists(dir.file("b/trace.json.partial")));
}

TEST_CASE("out-of-range numbers are refused, not replaced or overflowed", "[cli][input_limits]") {
  TestDir dir("cli_issue16_range");
  const auto context = run_tokenline("ledger decode --context -5", dir);
  CHECK(context.exit_code == 2);
  CHECK(contains(context.stderr_text, "--context"));
  const std::string late = dir.file("late.jsonl");
  std::ofstream(late) << "{\"arrival_s\": 0, \"input_tokens\": 10, \"output_tokens\": 5}\n"
                      << "{\"arrival_s\": 1e18, \"input_tokens\": 10, \"output_tokens\": 5}\n";
  const auto arrival = run_tokenline(kSim + "--workload tokenline:" + late + " --out " + dir.file("o"), dir);
  CHECK(arrival.exit_code == 2);
  CHECK(contains(arrival.stderr_text, "late.jsonl:2: arrival: expected a time <= 1e+09 s, found 1e+18 s"));
  const auto scale =
      run_tokenline(kSim + "--workload synthetic:n=3 --time-scale 1e300 --out " + dir.file("o"), dir);
  CHECK(scale.exit_code == 2);
  CHECK(contains(scale.stderr_text, "after --time-scale 1e+300"));
  CHECK_FALSE(std::filesystem::exists(dir.file("o/requests.csv")));
}

TEST_CASE("skip-bad-lines skips the outlier, not the 199 lines after it", "[cli][input_limits]") {
  TestDir dir("cli_issue16_outlier");
  const std::string trace = dir.file("outlier.jsonl");
  {
    std::ofstream out(trace);
    for (int i = 0; i < 50; ++i) out << mooncake_line(i * 100);
    out << mooncake_line(1'000'000'000);
    for (int i = 50; i < 250; ++i) out << mooncake_line(i * 100);
  }
  const auto r =
      run_tokenline(kSim + "--workload mooncake:" + trace + " --skip-bad-lines --out " + dir.file("o"), dir);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.stderr_text, "skipped 1 malformed workload lines"));
  CHECK(testing::read_json(dir.file("o/metrics.json"))["requests"]["completed"] == 250);
}

TEST_CASE("a FIFO workload is read once and the run ends", "[cli][input_limits]") {
  TestDir dir("cli_issue16_fifo");
  const std::string trace = dir.file("trace.jsonl"), fifo = dir.file("trace.fifo");
  {
    std::ofstream out(trace);
    for (int i = 0; i < 20; ++i) out << mooncake_line(i * 100);
  }
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A writer in the background, and `timeout` on both, so that the old hang (a second open of the drained
  // FIFO) ends as exit code 124 instead of stalling the suite.
  const std::string command = "timeout 60 sh -c \"cat '" + trace + "' > '" + fifo + "'\" & timeout 60 '" +
                              TOKENLINE_BINARY + "' " + kSim + "--workload mooncake:" + fifo + " --out '" +
                              dir.file("o") + "' 2>/dev/null; rc=$?; wait; exit $rc";
  const int status = std::system(command.c_str());
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(testing::read_json(dir.file("o/metrics.json"))["requests"]["completed"] == 20);
}

TEST_CASE("nonsense option values are input errors", "[cli][input_limits]") {
  TestDir dir("cli_issue16_options");
  const std::string out = " --out " + dir.file("o");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--kv-pages 99999999999", "--kv-pages: expected at most 268435456"},
      {"--mtp 1 --mtp-accept-std 5",
       "--mtp-accept-std: expected a standard deviation in [0, sqrt(m (1 - m)))"},
      {"--mtp 1000", "--mtp: expected 0 to 8 draft tokens per decode step, found 1000"},
      {"--slo ttft=1s,ttft=2s", "--slo ttft: expected each key once"},
      {"--pd 1P1D --instances 7", "--instances: expected 1 or 2 with --pd 1P1D"},
      {"--eplb-redundant 100000", "--eplb-redundant: expected -1 (no EPLB) or 0 to 256 redundant experts"},
  };
  for (const Case& c : cases) {
    const auto r = run_tokenline(kSim + c.args + out, dir);
    INFO(c.args << " -> " << r.stderr_text);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.stderr_text, c.message));
  }
  // MTP drafts of a model without an MTP layer would be free (a separate draft model, EAGLE's, is not
  // modelled): refused by sim and ledger alike.
  for (const std::string& args :
       {"sim --model llama-3.1-8b --mtp 2" + out, std::string("ledger decode --model llama-3.1-8b --mtp")}) {
    const auto r = run_tokenline(args, dir);
    INFO(args << " -> " << r.stderr_text);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.stderr_text, "--mtp: expected 0 for a model without an MTP layer"));
  }
}

TEST_CASE("messages name what is wrong", "[cli][input_limits]") {
  TestDir dir("cli_issue16_messages");
  const std::string out = " --out " + dir.file("o");
  const auto page = run_tokenline(kSim + "--page-size 100000000" + out, dir);
  CHECK(page.exit_code == 2);
  CHECK(contains(page.stderr_text, "--page-size: expected a page no larger than"));
  const auto key = run_tokenline(kSim + "--workload synthetic:n=10,foo=3" + out, dir);
  CHECK(contains(key.stderr_text, "synthetic: foo: expected one of the keys"));
  const std::string nul = dir.file("nul.jsonl");
  std::ofstream(nul, std::ios::binary) << "{\"arrival_s\": 0, \"input_tokens\": " << '\0' << " 10}\n";
  const auto nul_run = run_tokenline(kSim + "--workload tokenline:" + nul + out, dir);
  CHECK(contains(nul_run.stderr_text, "found '{\"arrival_s\": 0, \"input_tokens\": \\x00 10}'"));
  const std::string csv = dir.file("wrong.csv");
  std::ofstream(csv) << "time,in,out\n1,2,3\n";
  const auto header = run_tokenline(kSim + "--workload " + csv + out, dir);
  CHECK(contains(header.stderr_text, "or the Azure CSV header TIMESTAMP,ContextTokens,GeneratedTokens"));
  const auto directory = run_tokenline(kSim + "--workload " + dir.file("") + out, dir);
  CHECK(contains(directory.stderr_text, "expected a workload file, found a directory"));
}

// Issue 16 item 8 retired the earlier outputs when a run started, so that a failure left nothing
// complete-looking; now every input is judged before --out is touched and a run that fails puts the
// earlier outputs back (traces/output_file.h RunOutputs): the directory stays as it was.
TEST_CASE("a failed rerun leaves the outputs of the run before as they were", "[cli][input_limits]") {
  TestDir dir("cli_issue16_rerun");
  const std::string out = " --out " + dir.file("o");
  REQUIRE(run_tokenline(kSim + "--workload synthetic:n=3" + out, dir).exit_code == 0);
  REQUIRE(std::filesystem::exists(dir.file("o/metrics.json")));
  const std::string bad = dir.file("bad.jsonl");
  std::ofstream(bad) << "not json\n";
  CHECK(run_tokenline(kSim + "--workload tokenline:" + bad + out, dir).exit_code == 2);
  for (const char* name : {"metrics.json", "requests.csv", "trace.json"}) {
    CHECK(std::filesystem::exists(dir.file("o/") + name));
    CHECK_FALSE(std::filesystem::exists(dir.file("o/") + name + ".previous"));
  }
  CHECK(run_tokenline(kSim + "--workload synthetic:n=3" + out, dir).exit_code == 0);
  CHECK(std::filesystem::exists(dir.file("o/metrics.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("o/metrics.json.previous")));
}

TEST_CASE("a mistyped flag is exit 2 with the closest flag of the command", "[cli]") {
  TestDir dir("cli_did_you_mean");
  const auto r = run_tokenline("sim --parralel tp8 --out " + dir.file("o"), dir);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.stderr_text, "--parralel: did you mean --parallel?"));
  CHECK_FALSE(std::filesystem::exists(dir.file("o")));
  const auto far = run_tokenline("sim --zzzzzzzz 1 --out " + dir.file("o"), dir);
  CHECK(far.exit_code == 2);
  CHECK_FALSE(contains(far.stderr_text, "did you mean"));  // nothing close: no guess
}

}  // namespace
}  // namespace tokenline
