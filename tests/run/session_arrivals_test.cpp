// Sessions against completions (run/session_arrivals.h) and, end to end, a session workload on several
// instances under round-robin and the KV-aware router.
#include "run/session_arrivals.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "common/rng.h"
#include "run/workload_arrivals.h"
#include "tests/cli/tokenline_process.h"
#include "workloads/session_generator.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

class ScriptSource final : public SessionSource {
 public:
  explicit ScriptSource(std::vector<SessionScript> scripts) : scripts_(std::move(scripts)) {}
  std::optional<SessionScript> next() override {
    if (next_ == scripts_.size()) return std::nullopt;
    return scripts_[next_++];
  }
  std::string describe() const override { return "scripts"; }

 private:
  std::vector<SessionScript> scripts_;
  size_t next_ = 0;
};

SessionScript script(int64_t index, double start_s, std::vector<SessionTurn> turns) {
  SessionScript s;
  s.index = index;
  s.name = std::to_string(index);
  s.start_s = start_s;
  s.turns = std::move(turns);
  return s;
}

RequestRecord left(RequestId id, RequestStatus status = RequestStatus::kFinished) {
  RequestRecord r;
  r.id = id;
  r.status = status;
  return r;
}

using Due = ArrivalSource::Due;

// Session 0: turn 0 = 40 new tokens, 8 out; turn 1 = 20 new tokens after 3 s of thought.
//   t=0   turn 0 sent (40-token prompt)          t=5  its answer leaves
//   t=8   turn 1 sent: 40 + 8 + 20 = 68 tokens   its first 48 tokens' full blocks hash as turn 0's
TEST_CASE("sessions: a turn carries the history and waits for the answer plus the think time",
          "[session_arrivals]") {
  std::vector<SessionScript> scripts{script(0, 0.0, {{40, 8, 0}, {20, 4, 3.0}})};
  SessionArrivals a(std::make_unique<ScriptSource>(scripts), 0);
  REQUIRE(a.reacts_to_completions());
  TimedRequest t0, t1;
  REQUIRE(a.poll(0.0, t0).due == Due::kNow);
  CHECK(t0.spec.id == 0);
  CHECK(t0.spec.prompt_tokens == 40);
  CHECK(t0.spec.output_tokens == 8);
  CHECK(t0.spec.block_tokens == kSessionBlockTokens);
  REQUIRE(t0.spec.block_hashes.size() == 3);    // 16 + 16 + a partial 8
  CHECK(a.poll(1.0, t1).due == Due::kBlocked);  // the answer has not come
  a.on_left(left(0), 5.0);
  const ArrivalSource::Poll wait = a.poll(5.0, t1);
  CHECK(wait.due == Due::kAt);
  CHECK(wait.at_s == 8.0);
  REQUIRE(a.poll(8.0, t1).due == Due::kNow);
  CHECK(t1.arrival_s == 8.0);
  CHECK(t1.spec.id == 1);
  CHECK(t1.spec.prompt_tokens == 68);
  REQUIRE(t1.spec.block_hashes.size() == 5);
  // Full blocks 0 and 1 are the same history in both turns; turn 0's partial block 2 is not turn 1's
  // (now full) block 2.
  CHECK(t1.spec.block_hashes[0] == t0.spec.block_hashes[0]);
  CHECK(t1.spec.block_hashes[1] == t0.spec.block_hashes[1]);
  CHECK(t1.spec.block_hashes[2] != t0.spec.block_hashes[2]);
  a.on_left(left(1), 9.0);
  CHECK(a.poll(9.0, t1).due == Due::kEnd);
  CHECK(a.counters().completed == 1);
  CHECK(a.counters().turns_sent == 2);
}

TEST_CASE("sessions: N clients run N sessions at once, the next starts when one ends", "[session_arrivals]") {
  std::vector<SessionScript> scripts;
  for (int64_t i = 0; i < 3; ++i) scripts.push_back(script(i, 0.0, {{32, 4, 0}}));
  SessionArrivals a(std::make_unique<ScriptSource>(scripts), 2);
  TimedRequest r;
  REQUIRE(a.poll(0.0, r).due == Due::kNow);
  CHECK(r.spec.id == 0);
  REQUIRE(a.poll(0.0, r).due == Due::kNow);
  CHECK(r.spec.id == 1);
  CHECK(a.poll(0.0, r).due == Due::kBlocked);  // both clients busy
  a.on_left(left(1), 2.0);
  REQUIRE(a.poll(2.0, r).due == Due::kNow);
  CHECK(r.arrival_s == 2.0);
  CHECK(r.spec.id == 2);
  // Different sessions share no block: their histories differ.
  CHECK(a.counters().started == 3);
}

TEST_CASE("sessions: a rejected turn ends its session, and sessions start at their own times without a cap",
          "[session_arrivals]") {
  std::vector<SessionScript> scripts{script(0, 0.0, {{32, 4, 0}, {8, 4, 1.0}}),
                                     script(1, 10.0, {{32, 4, 0}})};
  SessionArrivals a(std::make_unique<ScriptSource>(scripts), 0);
  TimedRequest r;
  REQUIRE(a.poll(0.0, r).due == Due::kNow);
  const ArrivalSource::Poll p = a.poll(0.0, r);
  CHECK(p.due == Due::kAt);
  CHECK(p.at_s == 10.0);
  a.on_left(left(0, RequestStatus::kRejected), 0.0);
  CHECK(a.counters().abandoned == 1);
  REQUIRE(a.poll(10.0, r).due == Due::kNow);
  CHECK(r.spec.id == 1);
  a.on_left(left(1), 11.0);
  CHECK(a.poll(11.0, r).due == Due::kEnd);
}

TEST_CASE("sessions: next() lists every turn in script order for passes that only judge requests",
          "[session_arrivals]") {
  std::vector<SessionScript> scripts{script(0, 1.0, {{10, 2, 0}, {5, 2, 4.0}})};
  SessionArrivals a(std::make_unique<ScriptSource>(scripts), 0);
  TimedRequest r;
  REQUIRE(a.next(r));
  CHECK(r.arrival_s == 1.0);
  REQUIRE(a.next(r));
  CHECK(r.arrival_s == 5.0);
  CHECK(r.spec.prompt_tokens == 17);
  CHECK_FALSE(a.next(r));
}

// Randomized: sessions from the generator against a fake engine that answers after a random time and
// rejects a few turns. After every event: at most `clients` sessions live, every send due (not in the
// future), ids 0, 1, 2, ... in send order. At the end every session has ended, every answered turn but a
// session's last was followed by its next, and a second pass with the same seed sends the same requests at
// the same times. The seed is printed on failure.
struct Sent {
  RequestId id;
  double at_s;
  int64_t prompt;
  std::vector<uint64_t> hashes;
  bool operator==(const Sent&) const = default;
};

std::vector<Sent> play(uint64_t seed, int32_t clients, SessionCounters* counters) {
  Rng rng(seed, "fake engine");
  const std::string spec =
      "sessions=25,turns=uniform:1:5,first=uniform:10:200,new=uniform:1:40,output=uniform:1:30,"
      "think=exp:1" +
      std::string(seed % 2 == 0 ? ",rate=0.7" : "");
  SessionArrivals a(std::make_unique<SessionGenerator>(parse_session_generator_spec(spec), seed), clients);
  std::vector<Sent> sent;
  std::map<double, std::vector<RequestRecord>> answers;  // by leave time
  double now = 0;
  while (true) {
    TimedRequest r;
    ArrivalSource::Poll p;
    while ((p = a.poll(now, r)).due == ArrivalSource::Due::kNow) {
      REQUIRE(r.arrival_s <= now);
      REQUIRE(r.spec.id == static_cast<RequestId>(sent.size()));
      sent.push_back({r.spec.id, r.arrival_s, r.spec.prompt_tokens, r.spec.block_hashes});
      const bool reject = rng.uniform01() < 0.05;
      answers[reject ? now : now + rng.uniform01() * 3].push_back(
          left(r.spec.id, reject ? RequestStatus::kRejected : RequestStatus::kFinished));
    }
    const SessionCounters& c = a.counters();
    if (clients > 0) REQUIRE(c.started - c.completed - c.abandoned <= clients);
    if (p.due == ArrivalSource::Due::kEnd) {
      REQUIRE(answers.empty());
      break;
    }
    double next = answers.empty() ? p.at_s : answers.begin()->first;
    if (p.due == ArrivalSource::Due::kAt && p.at_s < next) next = p.at_s;
    REQUIRE((p.due != ArrivalSource::Due::kBlocked || !answers.empty()));
    REQUIRE(next >= now);
    now = next;
    if (!answers.empty() && answers.begin()->first == now) {
      for (const RequestRecord& rec : answers.begin()->second) a.on_left(rec, now);
      answers.erase(answers.begin());
    }
  }
  *counters = a.counters();
  return sent;
}

TEST_CASE("sessions: randomized runs end every session, respect the client cap and repeat exactly",
          "[session_arrivals][property]") {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const int32_t clients = static_cast<int32_t>(seed % 3 == 0 ? 0 : seed % 3 == 1 ? 1 : 4);
    INFO("seed " << seed << ", clients " << clients);
    SessionCounters c1, c2;
    const std::vector<Sent> first = play(seed, clients, &c1);
    CHECK(c1.started == 25);
    CHECK(c1.completed + c1.abandoned == 25);
    CHECK(c1.turns_sent == static_cast<int64_t>(first.size()));
    CHECK(play(seed, clients, &c2) == first);
  }
}

TEST_CASE("a session file with a bad line stops the run with its file and line, exit code 2",
          "[session_arrivals][cli]") {
  TestDir dir("sessions_bad");
  const std::string path = dir.file("s.jsonl");
  std::ofstream(path) << R"({"session": "a", "turn": 0, "new_tokens": 10, "output_tokens": 5})"
                      << "\n"
                      << R"({"session": "a", "turn": 3, "new_tokens": 10, "output_tokens": 5})"
                      << "\n";
  const auto r = run_tokenline("sim --workload 'sessions:" + path +
                                   "' --model llama-3.1-8b --parallel tp1 --out '" + dir.file("o") + "'",
                               dir);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.stderr_text, Catch::Contains("s.jsonl:2: turn: expected 1"));
  const auto w = run_tokenline(
      "sim --workload 'sessions:" + path + "' --max-requests 3 --out '" + dir.file("p") + "'", dir);
  CHECK(w.exit_code == 2);
  CHECK_THAT(w.stderr_text, Catch::Contains("--max-requests"));
}

// 16 agent-like sessions (a 2,000-token first prompt, 6 turns of 150 new tokens, 2 s of tool time) on four
// llama-3.1-8b instances, 16 clients. Round-robin scatters a session's turns over the instances, so most
// turns find their history elsewhere; kv-aware sends each turn where its history is cached.
const char* const kSessionRun =
    "sim --workload 'synthetic-sessions:sessions=48,turns=fixed:6,first=fixed:2000,new=fixed:150,"
    "output=fixed:100,think=exp:2' --concurrency 16 --model llama-3.1-8b --hardware h200 --parallel tp1 "
    "--instances 4";

TEST_CASE("on a session workload the KV-aware router beats round-robin on hit rate and mean TTFT",
          "[session_arrivals][cli]") {
  TestDir dir("sessions_router");
  REQUIRE(run_tokenline(std::string(kSessionRun) +
                            " --seed 3 --trace-detail none --router round-robin --out '" + dir.file("rr") +
                            "'",
                        dir)
              .exit_code == 0);
  REQUIRE(run_tokenline(std::string(kSessionRun) + " --seed 3 --trace-detail none --router kv-aware --out '" +
                            dir.file("kv") + "'",
                        dir)
              .exit_code == 0);
  const auto rr = read_json(dir.file("rr/metrics.json"));
  const auto kv = read_json(dir.file("kv/metrics.json"));
  for (const auto* m : {&rr, &kv}) {
    CHECK((*m)["requests"]["arrived"] == 48 * 6);
    CHECK((*m)["requests"]["completed"] == 48 * 6);
  }
  const double rr_hit = rr["prefix_cache"]["hit_rate"], kv_hit = kv["prefix_cache"]["hit_rate"];
  const double rr_ttft = rr["latency_ms"]["ttft"]["mean"], kv_ttft = kv["latency_ms"]["ttft"]["mean"];
  INFO("hit rate rr " << rr_hit << " kv " << kv_hit << "; mean TTFT ms rr " << rr_ttft << " kv " << kv_ttft);
  CHECK(kv_hit > rr_hit);
  CHECK(kv_ttft < rr_ttft);
}

TEST_CASE("a session run repeats byte for byte with the same seed", "[session_arrivals][cli]") {
  TestDir dir("sessions_repeat");
  const std::string run = std::string(kSessionRun) + " --router kv-aware --router-temperature 0.3";
  REQUIRE(run_tokenline(run + " --seed 3 --out '" + dir.file("a") + "'", dir).exit_code == 0);
  REQUIRE(run_tokenline(run + " --seed 3 --out '" + dir.file("b") + "'", dir).exit_code == 0);
  for (const char* f : {"metrics.json", "requests.csv", "trace.json"})
    CHECK(testing::read_all(dir.file(std::string("a/") + f)) ==
          testing::read_all(dir.file(std::string("b/") + f)));
  REQUIRE(run_tokenline(std::string(kSessionRun) +
                            " --router kv-aware --router-temperature 0.3 --seed 4 --out '" + dir.file("c") +
                            "'",
                        dir)
              .exit_code == 0);
  CHECK(testing::read_all(dir.file("a/requests.csv")) != testing::read_all(dir.file("c/requests.csv")));
}

TEST_CASE("the KV-aware router's weights are judged before the run and recorded in metrics.json",
          "[session_arrivals][cli]") {
  TestDir dir("router_flags");
  const std::string base = "sim --model llama-3.1-8b --parallel tp1 --instances 2 --max-requests 4 ";
  const auto stray = run_tokenline(base + "--kv-overlap-score-weight 2 --out '" + dir.file("a") + "'", dir);
  CHECK(stray.exit_code == 2);
  CHECK_THAT(stray.stderr_text, Catch::Contains("--kv-overlap-score-weight: expected --router kv-aware"));
  const auto cold =
      run_tokenline(base + "--router kv-aware --router-temperature -1 --out '" + dir.file("b") + "'", dir);
  CHECK(cold.exit_code == 2);
  CHECK_THAT(cold.stderr_text, Catch::Contains("--router-temperature: expected a temperature >= 0"));
  REQUIRE(run_tokenline(
              base + "--router kv-aware --kv-overlap-score-weight 2.5 --out '" + dir.file("c") + "'", dir)
              .exit_code == 0);
  const auto m = read_json(dir.file("c/metrics.json"));
  CHECK(m["run"]["router"] == "kv-aware");
  CHECK(m["configuration"]["router_weights"]["kv_overlap_score_weight"] == 2.5);
  CHECK(m["configuration"]["router_weights"]["router_temperature"] == 0.0);
}

// The real engine plays the same rule through its SourceFeed (engine/runtime/request_feed.h): every turn
// is sent after the answer before it, and later turns hit the history their session left in the cache.
TEST_CASE("the real engine runs a session workload turn after turn, hitting each session's history",
          "[session_arrivals][cli]") {
  TestDir dir("sessions_real");
  const auto r = run_tokenline(
      "run --model glm-5.3-tiny --page-size 16 --workload "
      "'synthetic-sessions:sessions=2,turns=fixed:3,first=fixed:64,new=fixed:16,output=fixed:4,think=fixed:0."
      "001' "
      "--out '" +
          dir.file("o") + "'",
      dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["requests"]["arrived"] == 6);
  CHECK(m["requests"]["completed"] == 6);
  CHECK(m["prefix_cache"]["hit_rate"].get<double>() > 0);
  // Turn k+1 of a session (prompt 64 + 4 + 16 = 84 tokens, then 104) is sent after turn k's answer: the
  // i-th earliest send of turn k+1 is not before the i-th earliest finish of turn k, and it hits.
  std::ifstream csv(dir.file("o/requests.csv"));
  std::string line;
  REQUIRE(std::getline(csv, line));
  REQUIRE(line.rfind("id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens", 0) == 0);
  std::map<int64_t, std::vector<double>> sent_by_prompt, done_by_prompt;
  std::map<int64_t, int64_t> cached_by_prompt;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    REQUIRE(f.size() >= 7);
    const int64_t prompt = std::stoll(f[4]);
    sent_by_prompt[prompt].push_back(std::stod(f[1]));
    done_by_prompt[prompt].push_back(std::stod(f[3]));
    cached_by_prompt[prompt] += std::stoll(f[6]);
  }
  REQUIRE(sent_by_prompt.size() == 3);
  const int64_t turns[] = {64, 84, 104};
  for (int k = 0; k + 1 < 3; ++k) {
    std::vector<double> done = done_by_prompt[turns[k]], sent = sent_by_prompt[turns[k + 1]];
    std::sort(done.begin(), done.end());
    std::sort(sent.begin(), sent.end());
    REQUIRE(sent.size() == 2);
    for (size_t i = 0; i < 2; ++i) CHECK(sent[i] >= done[i]);
    CHECK(cached_by_prompt[turns[k + 1]] > 0);
  }
}

}  // namespace
}  // namespace tokenline
