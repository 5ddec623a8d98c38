#include "traces/chrome_trace_writer.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

nlohmann::json write_sample(const std::string& path) {
  ChromeTraceWriter w(path);
  w.process_name(1, "instance 0");
  w.thread_name(1, trace_tid(0, TraceStream::kCompute), "rank 0 compute");
  w.thread_name(1, trace_tid(0, TraceStream::kComm), "rank 0 comm");
  w.async_begin(1, "request", 7, "request", 0.0);
  w.async_begin(1, "request", 7, "queued", 0.0);
  w.async_end(1, "request", 7, "queued", 0.001);
  w.complete(1, 0, "step", 0.001, 0.027, {{"tokens", 32}});
  w.complete(1, 0, "sparse_mla", 0.001, 0.002);
  w.complete(1, 1, "dispatch", 0.003, 0.001);
  w.counter(1, "kv_pages", 0.001, {{"used", 12}});
  w.flow_begin(1, 0, 7, 0.028);
  w.flow_end(2, 0, 7, 0.029);
  w.async_end(1, "request", 7, "request", 0.028);
  CHECK(w.events() == 13);
  REQUIRE(w.finish());
  return nlohmann::json::parse(testing::read_all(path));
}

TEST_CASE("the trace parses as JSON with every event kind", "[chrome_trace_writer]") {
  testing::TestDir dir("trace");
  const nlohmann::json doc = write_sample(dir.file("trace.json"));
  const auto& events = doc.at("traceEvents");
  REQUIRE(events.size() == 13);
  std::string phases;
  for (const auto& e : events) phases += e.at("ph").get<std::string>();
  CHECK(phases == "MMMbbeXXXCsfe");
  CHECK(events[6].at("dur").get<double>() == Approx(27000.0));
  CHECK(events[9].at("args").at("used") == 12);
  // the KV hand-off flow: one id from the prefill slice to the decode slice, its end bound to the enclosing
  // slice; async events on the process track
  for (size_t i : {size_t{10}, size_t{11}}) {
    CHECK(events[i].at("cat") == "flow");
    CHECK(events[i].at("name") == "kv_handoff");
    CHECK(events[i].at("id") == 7);
  }
  CHECK_FALSE(events[10].contains("bp"));
  CHECK(events[11].at("bp") == "e");
  CHECK(events[12].at("tid") == 0);
  CHECK(events[12].at("cat") == "request");
}

TEST_CASE("op spans nest inside their step span", "[chrome_trace_writer]") {
  testing::TestDir dir("trace_nest");
  const nlohmann::json doc = write_sample(dir.file("trace.json"));
  const auto& events = doc.at("traceEvents");
  const auto& step = events[6];
  for (size_t i : {size_t{7}, size_t{8}}) {
    const auto& op = events[i];
    CHECK(op.at("ts").get<double>() >= step.at("ts").get<double>());
    CHECK(op.at("ts").get<double>() + op.at("dur").get<double>() <=
          step.at("ts").get<double>() + step.at("dur").get<double>());
  }
}

TEST_CASE("the same calls give the same bytes", "[chrome_trace_writer]") {
  testing::TestDir dir("trace_det");
  write_sample(dir.file("a.json"));
  write_sample(dir.file("b.json"));
  CHECK(testing::read_all(dir.file("a.json")) == testing::read_all(dir.file("b.json")));
}

TEST_CASE("a text arg follows the integer args, escaped as a JSON string", "[chrome_trace_writer]") {
  testing::TestDir dir("trace_text");
  const std::string path = dir.file("trace.json");
  ChromeTraceWriter w(path);
  w.complete(1, 0, "step", 0.0, 0.001, {{"step", 4}, {"tokens", 17}}, TraceText{"batch", "3p16@0 5d1"});
  w.complete(1, 2, "step", 0.0, 0.001, {}, TraceText{"note", "a \"quoted\" word"});
  REQUIRE(w.finish());
  const std::string text = testing::read_all(path);
  CHECK(text.find("\"args\":{\"step\":4,\"tokens\":17,\"batch\":\"3p16@0 5d1\"}") != std::string::npos);
  const auto events = nlohmann::json::parse(text).at("traceEvents");
  CHECK(events[0].at("args").at("batch") == "3p16@0 5d1");
  CHECK(events[1].at("args").size() == 1);
  CHECK(events[1].at("args").at("note") == "a \"quoted\" word");
}

TEST_CASE("a writer made without a path writes nothing (--trace-detail none)", "[chrome_trace_writer]") {
  testing::TestDir dir("trace_disabled");
  ChromeTraceWriter w;
  CHECK_FALSE(w.enabled());
  w.process_name(1, "instance 0");
  w.complete(1, 0, "step", 0.001, 0.027, {{"tokens", 32}});
  w.async_begin(1, "request", 7, "request", 0.0);
  w.counter(1, "kv_pages", 0.001, {{"used", 12}});
  CHECK(w.events() == 0);
  CHECK(w.finish());
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("a gzip trace holds the same document as a plain one", "[chrome_trace_writer]") {
  testing::TestDir dir("trace_gzip");
  const nlohmann::json plain = write_sample(dir.file("trace.json"));
  {
    ChromeTraceWriter w(dir.file("trace.json.gz"), TraceEncoding::kGzip);
    CHECK(w.enabled());
    w.process_name(1, "instance 0");
    REQUIRE(w.finish());
  }
  CHECK(std::filesystem::exists(dir.file("trace.json.gz")));
  CHECK(testing::read_all(dir.file("trace.json.gz")).substr(0, 2) == "\x1f\x8b");
  CHECK(plain.at("traceEvents").size() == 13);
}

}  // namespace
}  // namespace tokenline
