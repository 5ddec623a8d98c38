#include "traces/trace_sink.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/traces/gunzip.h"
#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

// Several MiB of trace-like text, so that the gzip stream crosses many deflate calls.
std::string write_lines(TraceSink& sink, int lines) {
  std::string all;
  for (int i = 0; i < lines; ++i) {
    const std::string line =
        "{\"ph\":\"X\",\"pid\":1,\"ts\":" + std::to_string(i * 37) + ".125,\"name\":\"step\"},\n";
    sink.buffer().append(line);
    sink.maybe_flush();
    all += line;
  }
  return all;
}

TEST_CASE("a gzip sink decompresses to the text written, identically across runs", "[trace_sink]") {
  testing::TestDir dir("trace_sink_gzip");
  const std::string a = dir.file("a.json.gz"), b = dir.file("b.json.gz");
  std::string text;
  {
    TraceSink sink(a, TraceEncoding::kGzip);
    text = write_lines(sink, 60000);  // ~3.6 MB
    REQUIRE(sink.commit());
  }
  {
    TraceSink sink(b, TraceEncoding::kGzip);
    write_lines(sink, 60000);
    REQUIRE(sink.commit());
  }
  CHECK(gunzip(a) == text);
  CHECK(testing::read_all(a) == testing::read_all(b));
  CHECK(std::filesystem::file_size(a) * 5 < text.size());  // compresses
  const std::string head = testing::read_all(a).substr(0, 2);
  CHECK(head == "\x1f\x8b");  // a gzip member, which Perfetto opens
}

TEST_CASE("a plain sink writes the text as is and only on commit", "[trace_sink]") {
  testing::TestDir dir("trace_sink_plain");
  const std::string path = dir.file("t.json");
  TraceSink sink(path, TraceEncoding::kPlain);
  const std::string text = write_lines(sink, 100);
  CHECK_FALSE(std::filesystem::exists(path));
  REQUIRE(sink.commit());
  CHECK(testing::read_all(path) == text);
}

TEST_CASE("an uncommitted gzip sink leaves no file", "[trace_sink]") {
  testing::TestDir dir("trace_sink_abandon");
  const std::string path = dir.file("t.json.gz");
  {
    TraceSink sink(path, TraceEncoding::kGzip);
    write_lines(sink, 30000);
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(path + ".partial"));
}

}  // namespace
}  // namespace tokenline
