#include "sim/replay_backend.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "common/input_error.h"
#include "traces/trace_reader.h"

using namespace tokenline;

namespace {

RecordedInstance two_steps() {
  RecordedInstance inst;
  inst.pid = 1;
  RecordedStep a;
  a.step = 0;
  a.duration_s = 0.25;
  a.ranks = {{0, 10, 2}};
  a.ops = {{"embed", 0, false, 0.0, 0.1}, {"sparse_mla", 0, false, 0.1, 0.15}};
  RecordedStep b;
  b.step = 1;
  b.duration_s = 0.5;
  b.ranks = {{0, 2, 2}};
  inst.steps = {a, b};
  return inst;
}

StepBatches batches(int64_t index, std::vector<int64_t> tokens) {
  StepBatches s;
  s.step_index = index;
  Batch b;
  for (size_t i = 0; i < tokens.size(); ++i)
    b.entries.push_back(BatchEntry{.id = static_cast<RequestId>(i), .new_tokens = tokens[i]});
  s.ranks.push_back(b);
  return s;
}

}  // namespace

TEST_CASE("replay backend: returns the recorded durations and op spans in order, counts divergences") {
  ReplayBackend same(two_steps());
  const StepOutcome first = same.execute(batches(0, {6, 4}));
  CHECK(first.duration_s == 0.25);
  REQUIRE(first.ops.size() == 2);
  CHECK(std::string(first.ops[1].name) == "sparse_mla");
  CHECK(first.ops[1].start_s == 0.1);
  CHECK(same.execute(batches(1, {1, 1})).duration_s == 0.5);
  CHECK(same.divergences() == 0);
  CHECK(same.replayed_steps() == same.recorded_steps());

  ReplayBackend other(two_steps());
  CHECK(other.execute(batches(0, {7, 4})).duration_s == 0.25);  // 11 tokens planned, 10 recorded
  CHECK(other.divergences() == 1);
  CHECK(other.first_divergence().find("step 0") != std::string::npos);
  (void)other.execute(batches(1, {1, 1}));
  CHECK(other.execute(batches(2, {1})).duration_s == 0.0);  // past the recording
  CHECK(other.divergences() == 2);
}

TEST_CASE("trace reader: a file that is not a tokenline trace is one InputError naming it") {
  const std::string path = (std::filesystem::temp_directory_path() / "tokenline_not_a_trace.json").string();
  std::ofstream(path) << "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"embed\", \"pid\": 1, \"tid\": 0, "
                         "\"ts\": 0, \"dur\": 5}]}";
  try {
    (void)read_recorded_run(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
  std::ofstream(path) << "not json";
  CHECK_THROWS_AS(read_recorded_run(path), InputError);
  std::filesystem::remove(path);
  CHECK(trace_us_to_s(70942.932) == 70942932 / 1e9);
}
