// Streaming: readers pull one line at a time, so a trace far larger than anything held in memory is read
// through without ever existing as a whole. The input below is generated lazily by a streambuf.
#include "workloads/trace_reader.h"

#include <catch2/catch.hpp>
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

}  // namespace
}  // namespace tokenline
