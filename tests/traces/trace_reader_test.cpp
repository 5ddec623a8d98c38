#include "traces/trace_reader.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

#include "common/input_error.h"
#include "tests/traces/test_dir.h"
#include "traces/chrome_trace_writer.h"

namespace tokenline {
namespace {

std::string written_batch(const std::vector<RecordedEntry>& entries) {
  std::string out;
  for (const RecordedEntry& e : entries) append_batch_entry(out, e);
  return out;
}

// Expects read_recorded_run(path) to throw an InputError whose message holds every one of `parts`.
void check_rejected(const std::string& path, std::initializer_list<const char*> parts) {
  try {
    (void)read_recorded_run(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const char* part : parts) CHECK(what.find(part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("batch text: entries round-trip in order, anything off the grammar is refused") {
  const std::vector<RecordedEntry> entries = {
      {.id = 12, .prefill = true, .new_tokens = 64, .context_tokens = 32},
      {.id = 40, .prefill = false, .new_tokens = 1, .context_tokens = 0},
      {.id = 7, .prefill = false, .new_tokens = 3, .context_tokens = 0},
      {.id = 0, .prefill = true, .new_tokens = 5, .context_tokens = 0}};
  const std::string text = written_batch(entries);
  CHECK(text == "12p64@32 40d1 7d3 0p5@0");
  std::vector<RecordedEntry> back;
  REQUIRE(parse_batch(text, &back));
  CHECK(back == entries);
  CHECK(to_string(entries[0]) == "12p64@32");
  REQUIRE(parse_batch("", &back));
  CHECK(back.empty());
  for (const char* bad : {"12x3", "12p3", "12p3@", "12d", "d1", "1d1 ", " 1d1", "1d1  2d1", "-1d1", "1d1@0",
                          "1p2@3x", "1234567890123456789d1"}) {
    INFO(bad);
    CHECK_FALSE(parse_batch(bad, &back));
  }
}

TEST_CASE("batch text: a decode's accepted MTP drafts follow a '+', fewer than its new tokens") {
  const std::vector<RecordedEntry> entries = {{.id = 4, .prefill = false, .new_tokens = 2, .accepted = 1},
                                              {.id = 5, .prefill = false, .new_tokens = 2, .accepted = 0},
                                              {.id = 6, .prefill = false, .new_tokens = 1}};
  const std::string text = written_batch(entries);
  CHECK(text == "4d2+1 5d2+0 6d1");
  std::vector<RecordedEntry> back;
  REQUIRE(parse_batch(text, &back));
  CHECK(back == entries);
  CHECK(back[0].same_decision(RecordedEntry{.id = 4, .prefill = false, .new_tokens = 2}));  // an outcome
  for (const char* bad : {"4d2+2", "4d2+", "4d2+-1", "4p2@0+1", "4d2+1+1"}) {
    INFO(bad);
    CHECK_FALSE(parse_batch(bad, &back));
  }
}

TEST_CASE("trace reader: step spans come back per rank with their batch composition, when recorded") {
  testing::TestDir dir("trace-reader");
  const std::string path = dir.file("trace.json");
  {
    ChromeTraceWriter w(path);
    const std::string batch = "3p16@32 5d1";
    w.complete(1, trace_tid(0, TraceStream::kCompute), "step", 0.0, 0.002,
               {{"step", 0}, {"tokens", 17}, {"requests", 2}}, TraceText{"batch", batch});
    w.complete(1, trace_tid(1, TraceStream::kCompute), "step", 0.0, 0.002,
               {{"step", 0}, {"tokens", 1}, {"requests", 1}});
    w.complete(1, trace_tid(0, TraceStream::kCompute), "embed", 0.0, 0.001);
    REQUIRE(w.finish());
  }
  const RecordedRun run = read_recorded_run(path);
  REQUIRE(run.instances.size() == 1);
  REQUIRE(run.instances[0].steps.size() == 1);
  const RecordedStep& step = run.instances[0].steps[0];
  REQUIRE(step.ranks.size() == 2);
  CHECK(step.ranks[0].has_batch);
  REQUIRE(step.ranks[0].batch.size() == 2);
  CHECK(step.ranks[0].batch[0] ==
        RecordedEntry{.id = 3, .prefill = true, .new_tokens = 16, .context_tokens = 32});
  CHECK(step.ranks[0].batch[1] ==
        RecordedEntry{.id = 5, .prefill = false, .new_tokens = 1, .context_tokens = 0});
  CHECK_FALSE(step.ranks[1].has_batch);  // a step-detail span: counts only
  CHECK(step.ranks[1].tokens == 1);
  CHECK(step.ops.size() == 1);
}

TEST_CASE("trace reader: a gzip trace (--trace-gzip) reads back as its plain twin, a cut one is refused") {
  testing::TestDir dir("trace-reader-gzip");
  auto write = [](const std::string& path, TraceEncoding encoding) {
    ChromeTraceWriter w(path, encoding);
    for (int i = 0; i < 200; ++i) {  // several steps, so the cut below lands inside the deflate stream
      w.complete(1, trace_tid(0, TraceStream::kCompute), "step", 0.002 * i, 0.002,
                 {{"step", i}, {"tokens", 17}, {"requests", 2}}, TraceText{"batch", "3p16@32 5d1"});
      w.complete(1, trace_tid(0, TraceStream::kCompute), "embed", 0.002 * i, 0.001);
    }
    REQUIRE(w.finish());
  };
  write(dir.file("trace.json"), TraceEncoding::kPlain);
  write(dir.file("trace.json.gz"), TraceEncoding::kGzip);
  const RecordedRun plain = read_recorded_run(dir.file("trace.json"));
  const RecordedRun gz = read_recorded_run(dir.file("trace.json.gz"));
  REQUIRE(gz.instances.size() == 1);
  REQUIRE(gz.instances[0].steps.size() == 200);
  for (size_t i = 0; i < 200; ++i) {
    const RecordedStep &a = plain.instances[0].steps[i], &b = gz.instances[0].steps[i];
    CHECK(a.start_s == b.start_s);
    CHECK(a.ranks[0].batch == b.ranks[0].batch);
    CHECK(a.ops.size() == b.ops.size());
  }
  std::ifstream in(dir.file("trace.json.gz"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir.file("cut.json.gz"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  check_rejected(dir.file("cut.json.gz"), {"cut.json.gz", "corrupt or cut gzip data"});

  // zlib takes input in 32-bit counts, so a file past 4 GiB is inflated in parts: the same text when the
  // parts are 7 bytes (thousands of them) as in one, and a cut stream is still refused.
  std::ifstream plain_in(dir.file("trace.json"), std::ios::binary);
  const std::string plain_text((std::istreambuf_iterator<char>(plain_in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 1000);
  CHECK(inflate_gzip(bytes, "whole") == plain_text);
  CHECK(inflate_gzip(bytes, "parts", 7) == plain_text);
  CHECK_THROWS_WITH(inflate_gzip(bytes.substr(0, bytes.size() / 2), "cut", 7),
                    Catch::Contains("corrupt or cut gzip data"));
}

TEST_CASE("trace reader: a batch that breaks the grammar or disagrees with its span is an InputError") {
  testing::TestDir dir("trace-reader-bad");
  const std::string path = dir.file("trace.json");
  const std::string head =
      "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"step\", \"pid\": 1, \"tid\": 0, \"ts\": 0, "
      "\"dur\": 5, \"args\": {\"step\": 0, \"tokens\": 17, \"requests\": 2, \"batch\": ";
  std::ofstream(path) << head << "\"3p16 5d1\"}}]}";
  check_rejected(path, {"traceEvents[0]", "'3p16 5d1'", "<id>p<new>@<context>"});
  std::ofstream(path) << head << "\"3p16@0 5d2\"}}]}";  // 18 tokens in a span of 17
  check_rejected(path, {"traceEvents[0]", "2 entries and 17 tokens", "2 entries and 18 tokens"});
  std::ofstream(path) << head << "\"3p16@0\"}}]}";  // one entry in a span of two requests
  check_rejected(path, {"traceEvents[0]", "1 entries and 16 tokens"});
  std::ofstream(path) << head << "17}}]}";
  check_rejected(path, {"traceEvents[0]", "found 17"});
}

TEST_CASE("trace reader: a file that is not a tokenline trace is one InputError naming it") {
  testing::TestDir dir("trace-reader-not");
  const std::string path = dir.file("not_a_trace.json");
  std::ofstream(path) << "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"embed\", \"pid\": 1, \"tid\": 0, "
                         "\"ts\": 0, \"dur\": 5}]}";
  check_rejected(path, {path.c_str(), "op spans after their step span"});
  std::ofstream(path) << "not json";
  check_rejected(path, {path.c_str(), "malformed JSON"});
  check_rejected(dir.file("missing.json"), {"missing.json", "no such file"});
  CHECK(trace_us_to_s(70942.932) == 70942932 / 1e9);
}

TEST_CASE("trace reader: a span time that is negative or past the horizon is refused naming the event") {
  testing::TestDir dir("trace-reader-times");
  const std::string path = dir.file("trace.json");
  const auto trace = [&](const std::string& step_dur, const std::string& op_ts, const std::string& op_dur) {
    std::ofstream(path)
        << R"({"traceEvents": [{"ph": "X", "name": "step", "pid": 1, "tid": 0, "ts": 0, "dur": )" << step_dur
        << R"(, "args": {"step": 0}}, {"ph": "X", "name": "embed", "pid": 1, "tid": 0, "ts": )" << op_ts
        << R"(, "dur": )" << op_dur << "}]}";
  };
  trace("-1600", "0", "1");  // compare printed "measured -1.6 ms"
  check_rejected(path, {"traceEvents[0]", "expected \"dur\" in [0, 2e+15] us, found -1600"});
  trace("5", "0", "-5");  // compare printed "measured 0"
  check_rejected(path, {"traceEvents[1]", "expected \"dur\" in [0, 2e+15] us, found -5"});
  trace("5", "0", "1e308");  // rounded through llround to garbage
  check_rejected(path, {"traceEvents[1]", "found 1e+308"});
  trace("5", "-3", "1");
  check_rejected(path, {"traceEvents[1]", "expected \"ts\" in [0, 2e+15] us, found -3"});
  trace("5", "0", "1");
  CHECK(read_recorded_run(path).instances.at(0).steps.at(0).ops.at(0).duration_s == 1e-6);
}

TEST_CASE("trace reader: events stream from the traceEvents array wherever it stands among other keys") {
  testing::TestDir dir("trace-reader-stream");
  const std::string path = dir.file("trace.json");
  std::ofstream(path) << R"({"displayTimeUnit": "ns", "otherData": {"nested": [1, {"traceEvents": 5}]},
    "traceEvents": [7, {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "i0"}},
      {"ph": "X", "name": "step", "pid": 1, "tid": 0, "ts": 10, "dur": 5,
       "args": {"step": 3, "tokens": 17, "requests": 2, "batch": "3p16@32 5d1"}},
      {"ph": "X", "name": "embed", "pid": 1, "tid": 1, "ts": 11, "dur": 2, "args": {"x": [[1], {"y": []}]}}],
    "tail": [[[]]]})";
  const RecordedRun run = read_recorded_run(path);
  REQUIRE(run.instances.size() == 1);
  const RecordedStep& s = run.instances[0].steps.at(0);
  CHECK(s.step == 3);
  CHECK(s.ranks.at(0).batch.size() == 2);
  CHECK(s.ops.at(0).comm);
  CHECK(s.ops.at(0).start_s == 1e-6);
  std::ofstream(path) << "[1, 2]";
  check_rejected(path, {"an object with a traceEvents array"});
  std::ofstream(path) << R"({"traceEvents": 5})";
  check_rejected(path, {"an object with a traceEvents array"});
  std::ofstream(path) << R"({"traceEvents": [)" << std::string(100, '[') << std::string(100, ']') << "]}";
  check_rejected(path, {"expected JSON nested at most 64 levels deep, found deeper"});
}

}  // namespace tokenline
