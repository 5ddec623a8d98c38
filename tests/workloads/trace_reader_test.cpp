// Streaming: readers pull one line at a time, so a trace far larger than anything held in memory is read
// through without ever existing as a whole. The input below is generated lazily by a streambuf.
#include "workloads/trace_reader.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <streambuf>

#include "test_sources.h"
#include "workloads/mooncake_reader.h"

namespace tokenline {
namespace {

// A read-only stream of `lines` Mooncake lines, produced one line at a time into a small buffer.
class GeneratedTrace : public std::streambuf {
 public:
  explicit GeneratedTrace(int64_t lines) : lines_(lines) {}
  int64_t bytes_served() const { return bytes_; }
  int64_t lines_served() const { return next_; }

 protected:
  int_type underflow() override {
    if (next_ >= lines_) return traits_type::eof();
    line_ = "{\"timestamp\": " + std::to_string(next_) +
            ", \"input_length\": 1024, \"output_length\": 8, "
            "\"hash_ids\": [0, " +
            std::to_string(next_ + 1) + "]}\n";
    ++next_;
    bytes_ += static_cast<int64_t>(line_.size());
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(line_[0]);
  }

 private:
  int64_t lines_;
  int64_t next_ = 0;
  int64_t bytes_ = 0;
  std::string line_;  // the only buffer: one line
};

TEST_CASE("a reader streams a trace that never exists in memory as a whole", "[streaming]") {
  constexpr int64_t kLines = 100000;  // ~9 MB of trace text, served ~90 bytes at a time
  auto buf = std::make_unique<GeneratedTrace>(kLines);
  GeneratedTrace* served = buf.get();
  struct OwningStream : std::istream {
    explicit OwningStream(std::unique_ptr<std::streambuf> b) : std::istream(b.get()), owned(std::move(b)) {}
    std::unique_ptr<std::streambuf> owned;
  };
  MooncakeReader reader(LineReader(std::make_unique<OwningStream>(std::move(buf)), "generated"), {});
  int64_t count = 0;
  int64_t last_hash = 0;
  bool read_ahead = false;
  while (auto r = reader.next()) {
    // After each request the source has produced exactly the lines returned so far: no read-ahead.
    read_ahead = read_ahead || served->lines_served() != count + 1;
    if (count % 9973 == 0) CHECK(r->arrival_s == Approx(static_cast<double>(count) / 1000));
    last_hash = r->block_hashes.back();
    ++count;
  }
  CHECK_FALSE(read_ahead);
  CHECK(count == kLines);
  CHECK(last_hash == kLines);
  CHECK(served->bytes_served() > 8'000'000);
}

std::string mooncake_line(int64_t timestamp_ms) {
  return "{\"timestamp\": " + std::to_string(timestamp_ms) + ", \"input_length\": 1, \"output_length\": 1}\n";
}

// Arrivals in whole milliseconds (a Mooncake timestamp's unit).
std::vector<int64_t> arrivals_ms(const std::vector<WorkloadRequest>& rs) {
  std::vector<int64_t> out;
  for (const WorkloadRequest& r : rs) out.push_back(std::llround(r.arrival_s * 1000));
  return out;
}

TEST_CASE("skip-bad-lines skips one outlier timestamp, not the good lines after it",
          "[trace_reader][input_limits]") {
  std::string text;
  for (int i = 0; i < 50; ++i) text += mooncake_line(i * 100);
  text += mooncake_line(1'000'000'000);  // the outlier: 11.6 days ahead of its neighbours
  for (int i = 50; i < 250; ++i) text += mooncake_line(i * 100);
  MooncakeReader reader(test::text_lines(text), ReaderOptions{.skip_bad_lines = true});
  const auto rs = test::drain(reader);
  CHECK(rs.size() == 250);
  CHECK(reader.skipped_lines() == 1);
  CHECK(reader.first_skip_reason() ==
        "fixture:51: arrival: expected a time <= the next request's 5 s, found 1e+06 s");
  CHECK(rs.back().arrival_s == Approx(24.9));
  CHECK(rs.back().id == 249);
}

TEST_CASE("skip-bad-lines judges each line against the accepted ones", "[trace_reader][input_limits]") {
  auto read = [](const std::vector<int64_t>& ms) {
    std::string text;
    for (int64_t t : ms) text += mooncake_line(t);
    MooncakeReader reader(test::text_lines(text), ReaderOptions{.skip_bad_lines = true});
    const std::vector<int64_t> kept = arrivals_ms(test::drain(reader));  // before skipped_lines()
    return std::make_pair(kept, reader.skipped_lines());
  };
  // A line back in time is the one skipped.
  CHECK(read({1000, 2000, 500, 3000}) == std::make_pair(std::vector<int64_t>{1000, 2000, 3000}, int64_t{1}));
  // An outlier ahead of time is the one skipped, also as the first or the last line.
  CHECK(read({1000, 2000, 999'000, 3000, 4000}) ==
        std::make_pair(std::vector<int64_t>{1000, 2000, 3000, 4000}, int64_t{1}));
  CHECK(read({999'000, 1000, 2000}) == std::make_pair(std::vector<int64_t>{1000, 2000}, int64_t{1}));
  CHECK(read({1000, 2000, 999'000}) == std::make_pair(std::vector<int64_t>{1000, 2000, 999000}, int64_t{0}));
  // Equal times are in order.
  CHECK(read({1000, 1000, 1000}) == std::make_pair(std::vector<int64_t>{1000, 1000, 1000}, int64_t{0}));
}

TEST_CASE("a line nesting 100,000 brackets is one bad line, not a crash", "[trace_reader][input_limits]") {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']') + "\n";
  MooncakeReader strict(test::text_lines(mooncake_line(0) + deep), {});
  CHECK(test::error_of(strict) ==
        "fixture:2: expected JSON nested at most 64 levels deep, found deeper nesting");
  MooncakeReader skipping(test::text_lines(mooncake_line(0) + deep + mooncake_line(5)),
                          ReaderOptions{.skip_bad_lines = true});
  CHECK(test::drain(skipping).size() == 2);
  CHECK(skipping.skipped_lines() == 1);
}

TEST_CASE("arrivals after 1e9 s and requests above 2^27 tokens are refused", "[trace_reader][input_limits]") {
  MooncakeReader late(test::text_lines(mooncake_line(0) + mooncake_line(1'000'000'000'000'000'000)), {});
  CHECK(test::error_of(late) == "fixture:2: arrival: expected a time <= 1e+09 s, found 1e+15 s");
  MooncakeReader big(
      test::text_lines("{\"timestamp\": 0, \"input_length\": 200000000, \"output_length\": 1}\n"), {});
  CHECK(test::error_of(big) == "fixture:1: input tokens: expected at most 134217728 tokens, found 200000000");
}

TEST_CASE("a line longer than the limit is a bad line", "[trace_reader][input_limits]") {
  auto stream = std::make_unique<std::istringstream>(mooncake_line(0) + std::string(5000, ' ') + "x\n" +
                                                     mooncake_line(5));
  MooncakeReader strict(LineReader(std::move(stream), "fixture", 1000), {});
  CHECK(test::error_of(strict) == "fixture:2: expected a line of at most 1000 bytes, found a longer line");
}

}  // namespace
}  // namespace tokenline
