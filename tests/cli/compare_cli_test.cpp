// `tokenline compare` as a separate process on a real run (`tokenline run`, CPU kernels) and an analytic
// prediction (`tokenline sim --backend analytic`) of the same workload and scheduler options. The analytic
// model prices glm-5.3-tiny on an H200 (microseconds) while the CPU measures milliseconds, so nothing here
// asserts closeness; the tests check the join, the decision comparison and the errors the CLI reports.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/traces/prefix_group_workload.h"
#include "tests/traces/test_dir.h"
#include "traces/chrome_trace_writer.h"
#include "traces/trace_reader.h"

namespace tokenline {
namespace {

using nlohmann::json;
using testing::read_all;
using testing::TestDir;

constexpr int kPageTokens = 16;
// A pool of 12 pages x 16 tokens holds ~3 of the requests: the burst preempts (incremental reservation).
// Every option that steers the scheduler is passed to both commands (their defaults differ: --kv-pages), and
// the sim is priced by the roofline with the seed's engine, as the run is (the default profile brings its
// engine's rules, docs/hardware-and-engines.md).
const std::string kSchedulerFlags =
    " --model glm-5.3-tiny --page-size 16 --reservation incremental"
    " --max-running 64 --kv-pages 12 --chunk 64";

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Result run_tokenline(const std::string& args, const TestDir& dir) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const int status = std::system(
      (std::string("'") + TOKENLINE_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'").c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out), read_all(err)};
}

// Runs the workload for real and predicts it with the analytic backend (both with `extra` flags), then
// compares the prediction with the measurement as JSON on stdout and in --out. Returns the JSON.
json run_and_compare(const TestDir& dir, const std::string& extra, Result* compare) {
  testing::write_prefix_group_workload(dir.file("w.jsonl"), kPageTokens);
  const std::string common = " --workload " + dir.file("w.jsonl") + kSchedulerFlags + extra;
  const Result real = run_tokenline("run --out " + dir.file("real") + common, dir);
  INFO(real.err);
  REQUIRE(real.exit_code == 0);
  const Result sim = run_tokenline(
      "sim --backend analytic --parallel tp1 --trace-detail op --roofline --out " + dir.file("sim") + common,
      dir);
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  *compare = run_tokenline("compare " + dir.file("sim/trace.json") + " " + dir.file("real/trace.json") +
                               " --json --out " + dir.file("compare.json"),
                           dir);
  INFO(compare->err);
  REQUIRE(compare->exit_code == 0);
  const json doc = json::parse(compare->out);
  CHECK(json::parse(read_all(dir.file("compare.json"))) == doc);
  return doc;
}

double step_seconds(const RecordedRun& run) {
  double total = 0;
  for (const RecordedStep& s : run.instances.at(0).steps) total += s.duration_s;
  return total;
}

// The first step index whose rank batches differ (MTP acceptances aside) between two single-instance
// runs, found here without the code under test; -1 when none does.
int64_t first_differing_step(const RecordedRun& a, const RecordedRun& b) {
  const auto& sa = a.instances.at(0).steps;
  const auto& sb = b.instances.at(0).steps;
  for (size_t i = 0; i < std::min(sa.size(), sb.size()); ++i) {
    REQUIRE(sa[i].step == sb[i].step);
    const auto& ba = sa[i].ranks.at(0).batch;
    const auto& bb = sb[i].ranks.at(0).batch;
    bool same = ba.size() == bb.size();
    for (size_t e = 0; same && e < ba.size(); ++e) same = ba[e].same_decision(bb[e]);
    if (!same) return sa[i].step;
  }
  return -1;
}

}  // namespace

TEST_CASE(
    "compare CLI: a burst at time 0 is decided alike by the run and the analytic sim - every step joins") {
  TestDir dir("compare-cli-burst");
  Result compare;
  // --max-requests 12 keeps the burst only: with no later arrival no decision depends on step times.
  const json doc = run_and_compare(dir, " --max-requests 12", &compare);
  const RecordedRun real = read_recorded_run(dir.file("real/trace.json"));
  const RecordedRun sim = read_recorded_run(dir.file("sim/trace.json"));
  const auto steps = static_cast<int64_t>(real.instances.at(0).steps.size());
  CHECK(steps > 12);
  CHECK(doc["steps"]["joined"] == steps);
  CHECK(doc["steps"]["predicted_only"] == 0);
  CHECK(doc["steps"]["measured_only"] == 0);
  CHECK(doc["decisions"]["compared_steps"] == steps);
  CHECK(doc["decisions"]["compared_by_batch"] == steps);
  CHECK(doc["decisions"]["differing_steps"] == 0);
  CHECK(doc["decisions"]["same"] == true);
  CHECK(doc["warning"].is_null());
  CHECK(compare.err.empty());

  const json& step = doc["step"];
  CHECK(step["measured_s"].get<double>() == Approx(step_seconds(real)).epsilon(1e-9));
  CHECK(step["predicted_s"].get<double>() == Approx(step_seconds(sim)).epsilon(1e-9));
  CHECK(step["relative_error"]["samples"] == steps);
  std::set<std::string> names;
  for (const json& op : doc["ops"]) {
    INFO(op.dump());
    names.insert(op["name"].get<std::string>());
    CHECK(op["steps"] == steps);  // the tiny model runs every op in every step, on both sides
    CHECK(op["predicted_s"].get<double>() > 0);
    CHECK(op["measured_s"].get<double>() > 0);
    CHECK(op["ratio"].get<double>() ==
          Approx(op["predicted_s"].get<double>() / op["measured_s"].get<double>()).epsilon(1e-12));
    CHECK(op["relative_error"]["p90"].get<double>() >= op["relative_error"]["p50"].get<double>());
  }
  for (const char* op : {"embed", "a_proj", "sparse_mla", "o_proj", "expert_gemm", "lm_head", "sample"})
    CHECK(names.count(op) == 1);

  const Result table =
      run_tokenline("compare " + dir.file("sim/trace.json") + " " + dir.file("real/trace.json"), dir);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("steps: " + std::to_string(steps) + " joined") != std::string::npos);
  CHECK(table.out.find("sparse_mla") != std::string::npos);
  CHECK(table.out.find("warning") == std::string::npos);
}

TEST_CASE(
    "compare CLI: late arrivals meet microsecond predicted steps: the decisions differ, and it says so") {
  TestDir dir("compare-cli-late");
  Result compare;
  // The 4 requests at 20 ms arrive after a few CPU steps of milliseconds but after ~200 predicted steps of
  // ~90 us: they are admitted at other steps, and every batch from there on differs.
  const json doc = run_and_compare(dir, "", &compare);
  const RecordedRun real = read_recorded_run(dir.file("real/trace.json"));
  const RecordedRun sim = read_recorded_run(dir.file("sim/trace.json"));
  const int64_t first = first_differing_step(sim, real);
  REQUIRE(first >= 0);
  INFO(doc.dump(2));
  CHECK(doc["decisions"]["differing_steps"].get<int64_t>() > 0);
  CHECK(doc["decisions"]["same"] == false);
  CHECK(doc["decisions"]["first_differences"].at(0)["step"] == first);
  CHECK(doc["warning"].get<std::string>().find("different scheduling decisions") != std::string::npos);
  CHECK(compare.err.find("warning: the runs made different scheduling decisions") != std::string::npos);
  const auto joined = std::min(real.instances.at(0).steps.size(), sim.instances.at(0).steps.size());
  CHECK(doc["steps"]["joined"] == joined);
}

// The tiny GQA presets (docs/real-engine.md): the same burst, with their window pages and state slots in the
// core, is decided alike by the run (CPU kernels reading those pages and slots) and the analytic sim.
TEST_CASE("compare CLI: gpt-oss-tiny, qwen3.5-tiny and llama-tiny bursts are decided alike by run and sim") {
  for (const char* model : {"gpt-oss-tiny", "qwen3.5-tiny", "llama-tiny"}) {
    INFO(model);
    TestDir dir(std::string("compare-cli-") + model);
    testing::write_prefix_group_workload(dir.file("w.jsonl"), kPageTokens);
    const std::string common = " --workload " + dir.file("w.jsonl") + " --model " + model +
                               " --page-size 16 --reservation incremental --max-running 64 --kv-pages 12"
                               " --chunk 64 --max-requests 12";
    const Result real = run_tokenline("run --out " + dir.file("real") + common, dir);
    INFO(real.err);
    REQUIRE(real.exit_code == 0);
    const Result sim =
        run_tokenline("sim --backend analytic --parallel tp1 --trace-detail op --roofline --out " +
                          dir.file("sim") + common,
                      dir);
    INFO(sim.err);
    REQUIRE(sim.exit_code == 0);
    const Result compare = run_tokenline(
        "compare " + dir.file("sim/trace.json") + " " + dir.file("real/trace.json") + " --json", dir);
    INFO(compare.err);
    REQUIRE(compare.exit_code == 0);
    const json doc = json::parse(compare.out);
    const RecordedRun measured = read_recorded_run(dir.file("real/trace.json"));
    const auto steps = static_cast<int64_t>(measured.instances.at(0).steps.size());
    CHECK(steps > 12);
    CHECK(doc["steps"]["joined"] == steps);
    CHECK(doc["decisions"]["differing_steps"] == 0);
    CHECK(doc["decisions"]["same"] == true);
    const json metrics = json::parse(read_all(dir.file("real/metrics.json")));
    CHECK(metrics["requests"]["preemptions"].get<int64_t>() > 0);  // 12 pages preempt the burst
    if (std::string(model) == "gpt-oss-tiny") {
      CHECK(metrics["kv_window_pages"]["dropped_pages"].get<int64_t>() > 0);  // pages left the window
    } else if (std::string(model) == "qwen3.5-tiny") {
      CHECK(metrics["state_slots"]["capacity"] == 64);  // a slot per running request (--max-running)
      CHECK(metrics["state_slots"]["peak"].get<int64_t>() > 1);
    }
  }
}

TEST_CASE("compare CLI: a missing file, a file that is not a trace, or no common step is exit 2 naming it") {
  TestDir dir("compare-cli-bad");
  auto write_trace = [&](const std::string& name, int64_t step) {
    ChromeTraceWriter w(dir.file(name));
    w.complete(1, trace_tid(0, TraceStream::kCompute), "step", 0, 0.001,
               {{"step", step}, {"tokens", 1}, {"requests", 1}});
    REQUIRE(w.finish());
  };
  write_trace("a.json", 0);
  write_trace("b.json", 5);
  std::ofstream(dir.file("metrics.json")) << "{\"run\": {}}";
  const std::pair<std::string, std::string> cases[] = {
      {"compare " + dir.file("a.json") + " " + dir.file("missing.json"), "missing.json"},
      {"compare " + dir.file("metrics.json") + " " + dir.file("a.json"), "metrics.json"},
      {"compare " + dir.file("a.json") + " " + dir.file("b.json"), "b.json: expected steps sharing"}};
  for (const auto& [args, named] : cases) {
    const Result r = run_tokenline(args, dir);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(named) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(run_tokenline("compare " + dir.file("a.json") + " " + dir.file("a.json"), dir).exit_code == 0);
}

}  // namespace tokenline
