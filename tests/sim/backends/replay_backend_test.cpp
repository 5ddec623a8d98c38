#include "sim/backends/replay_backend.h"

#include <catch2/catch.hpp>

#include "traces/trace_reader.h"

using namespace tokenline;

namespace {

RecordedRankStep rank_step(int32_t rank, int64_t tokens, int64_t requests) {
  RecordedRankStep r;
  r.rank = rank;
  r.tokens = tokens;
  r.requests = requests;
  return r;
}

RecordedInstance two_steps() {
  RecordedInstance inst;
  inst.pid = 1;
  RecordedStep a;
  a.step = 0;
  a.duration_s = 0.25;
  a.ranks = {rank_step(0, 10, 2)};
  a.ops = {{"embed", 0, false, 0.0, 0.1}, {"sparse_mla", 0, false, 0.1, 0.15}};
  RecordedStep b;
  b.step = 1;
  b.duration_s = 0.5;
  b.ranks = {rank_step(0, 2, 2)};
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

BatchEntry prefill(RequestId id, int64_t new_tokens, int64_t context_tokens) {
  return BatchEntry{
      .id = id, .phase = Phase::kPrefill, .new_tokens = new_tokens, .context_tokens = context_tokens};
}

BatchEntry decode(RequestId id, int64_t context_tokens) {
  return BatchEntry{.id = id, .phase = Phase::kDecode, .new_tokens = 1, .context_tokens = context_tokens};
}

// A step over two DP ranks whose batches are given entry by entry.
StepBatches two_ranks(int64_t index, std::vector<BatchEntry> rank0, std::vector<BatchEntry> rank1) {
  StepBatches s;
  s.step_index = index;
  s.ranks = {Batch{.rank = 0, .entries = std::move(rank0)}, Batch{.rank = 1, .entries = std::move(rank1)}};
  return s;
}

// The recording of `step` as the recorder writes it at op detail: each working rank's batch as text,
// read back through the trace reader's grammar.
RecordedStep recorded(const StepBatches& step, double duration_s) {
  RecordedStep rec;
  rec.step = step.step_index;
  rec.duration_s = duration_s;
  for (const Batch& b : step.ranks) {
    RecordedRankStep r = rank_step(b.rank, b.total_tokens(), static_cast<int64_t>(b.entries.size()));
    std::string text;
    for (const BatchEntry& e : b.entries) {
      const bool p = e.phase == Phase::kPrefill;
      append_batch_entry(text, RecordedEntry{.id = e.id,
                                             .prefill = p,
                                             .new_tokens = e.new_tokens,
                                             .context_tokens = p ? e.context_tokens : 0});
    }
    REQUIRE(parse_batch(text, &r.batch));
    r.has_batch = true;
    rec.ranks.push_back(r);
  }
  return rec;
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
  CHECK(same.compared_entries() == 0);  // no batch composition recorded: counts only
  CHECK(same.replayed_steps() == same.recorded_steps());

  ReplayBackend other(two_steps());
  CHECK(other.execute(batches(0, {7, 4})).duration_s == 0.25);  // 11 tokens planned, 10 recorded
  CHECK(other.divergences() == 1);
  CHECK(other.first_divergence() ==
        "step 0 rank 0 recorded 10 tokens in 2 requests, planned 11 tokens in 2 requests");
  (void)other.execute(batches(1, {1, 1}));
  CHECK(other.execute(batches(2, {1})).duration_s == 0.0);  // past the recording
  CHECK(other.divergences() == 2);
  CHECK(other.composition_divergences() == 0);
}

TEST_CASE("replay backend: batches recorded entry by entry must match entry by entry") {
  // Step 0: rank 0 prefills request 1 after a 32-token prefix hit, rank 1 decodes 2 and 3.
  const StepBatches step0 = two_ranks(0, {prefill(1, 16, 32), decode(4, 50)}, {decode(2, 40), decode(3, 41)});
  // Step 1: request 2 was preempted and recomputes its prompt; rank 0 idles.
  const StepBatches step1 = two_ranks(1, {}, {prefill(2, 40, 0), decode(3, 42)});
  RecordedInstance inst;
  inst.steps = {recorded(step0, 0.25), recorded(step1, 0.5)};

  ReplayBackend same(inst);
  CHECK(same.execute(step0).duration_s == 0.25);
  CHECK(same.execute(step1).duration_s == 0.5);
  CHECK(same.divergences() == 0);
  CHECK(same.composition_divergences() == 0);
  CHECK(same.compared_entries() == 6);
  CHECK(same.first_divergence().empty());

  SECTION("the same tokens and requests in another order") {
    ReplayBackend swapped(inst);
    (void)swapped.execute(two_ranks(0, {prefill(1, 16, 32), decode(4, 50)}, {decode(3, 41), decode(2, 40)}));
    CHECK(swapped.divergences() == 1);
    CHECK(swapped.composition_divergences() == 1);
    CHECK(swapped.first_divergence() ==
          "step 0 rank 1 entry 0: recorded 2d1, planned 3d1 (recorded 2 entries, planned 2)");
  }
  SECTION("the same chunk without its prefix hit, and another request on the other rank") {
    ReplayBackend missed(inst);
    (void)missed.execute(two_ranks(0, {prefill(1, 16, 0), decode(4, 50)}, {decode(2, 40), decode(5, 41)}));
    CHECK(missed.divergences() == 1);              // one step ...
    CHECK(missed.composition_divergences() == 2);  // ... two ranks
    CHECK(missed.first_divergence() ==
          "step 0 rank 0 entry 0: recorded 1p16@32, planned 1p16@0 (recorded 2 entries, planned 2)");
  }
  SECTION("a request left out, a rank idle that computed, a step index off") {
    ReplayBackend short_batch(inst);
    (void)short_batch.execute(step0);
    (void)short_batch.execute(two_ranks(1, {}, {prefill(2, 40, 0)}));
    CHECK(short_batch.first_divergence() ==
          "step 1 rank 1 entry 1: recorded 3d1, planned nothing (recorded 2 entries, planned 1)");

    ReplayBackend moved(inst);
    (void)moved.execute(step0);
    (void)moved.execute(two_ranks(1, {prefill(2, 40, 0), decode(3, 42)}, {}));
    CHECK(moved.composition_divergences() == 1);  // rank 1's recording; rank 0 recorded idle: counts
    CHECK(moved.first_divergence() ==
          "step 1 rank 0 recorded 0 tokens in 0 requests, planned 41 tokens in 2 requests");

    ReplayBackend late(inst);
    (void)late.execute(step1);
    CHECK(late.first_divergence() == "step 1: the recording's next step is 0");
  }
}
