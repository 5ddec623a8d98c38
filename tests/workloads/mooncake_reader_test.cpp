#include "workloads/mooncake_reader.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "test_sources.h"

namespace tokenline {
namespace {

using test::drain;
using test::error_of;
using test::text_lines;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("mooncake lines become requests with 512-token block hashes", "[mooncake]") {
  MooncakeReader reader(
      text_lines("{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 10, \"hash_ids\": [0, 1]}\n"
                 "{\"timestamp\": 1500, \"input_length\": 512, \"output_length\": 3, \"hash_ids\": [0]}\n"),
      {});
  const auto rs = drain(reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].id == 0);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[0].input_tokens == 600);
  CHECK(rs[0].output_tokens == 10);
  CHECK(rs[0].block_hashes == std::vector<int64_t>{0, 1});
  CHECK(rs[0].block_tokens == 512);
  CHECK(rs[1].id == 1);
  CHECK(rs[1].arrival_s == Approx(1.5));
  CHECK(rs[1].session == -1);
  CHECK(reader.describe() == "mooncake:fixture");
}

TEST_CASE("mooncake: bad lines are reported as file:line: field: expected, found", "[mooncake]") {
  const std::string good =
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n";
  auto err = [&](const std::string& bad) {
    MooncakeReader reader(text_lines(good + bad, "conv.jsonl"), {});
    return error_of(reader);
  };
  CHECK(err("{\"timestamp\": 5, \"output_length\": 1}") ==
        "conv.jsonl:2: input_length: expected an integer >= 1, found no such field");
  CHECK(err("{\"timestamp\": 5, \"input_length\": \"ten\", \"output_length\": 1}") ==
        "conv.jsonl:2: input_length: expected an integer >= 1, found string \"ten\"");
  CHECK(err("{\"timestamp\": 5, \"input_length\": -3, \"output_length\": 1}") ==
        "conv.jsonl:2: input_length: expected an integer >= 1, found number -3");
  CHECK(err("{\"timestamp\": 5, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [0, 1]}") ==
        "conv.jsonl:2: hash_ids: expected ceil(1025 / 512) = 3 block hashes, found 2");
  CHECK(err("{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [\"a\"]}") ==
        "conv.jsonl:2: hash_ids[0]: expected an integer, found string \"a\"");
  CHECK(contains(err("{\"timestamp\": 5, \"input_length\": 10,"),
                 "conv.jsonl:2: expected a JSON object, found '{"));
  CHECK(contains(err("{\"timestamp\": -1, \"input_length\": 10, \"output_length\": 1}"),
                 "conv.jsonl:2: timestamp: expected an integer >= 0"));
}

TEST_CASE("mooncake: arrivals must not go back in time", "[mooncake]") {
  MooncakeReader reader(text_lines("{\"timestamp\": 2000, \"input_length\": 1, \"output_length\": 1}\n"
                                   "{\"timestamp\": 1000, \"input_length\": 1, \"output_length\": 1}\n"),
                        {});
  CHECK(error_of(reader) == "fixture:2: arrival: expected a time >= the previous request's 2 s, found 1 s");
}

TEST_CASE("mooncake: skip-bad-lines skips and counts, keeping ids dense", "[mooncake]") {
  MooncakeReader reader(text_lines("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n"
                                   "not json\n"
                                   "\n"
                                   "{\"timestamp\": 3, \"input_length\": 0, \"output_length\": 1}\n"
                                   "{\"timestamp\": 4, \"input_length\": 2, \"output_length\": 1}"),
                        ReaderOptions{.skip_bad_lines = true});
  const auto rs = drain(reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].id == 1);
  CHECK(rs[1].input_tokens == 2);
  CHECK(reader.skipped_lines() == 2);  // the blank line is not a bad line
  CHECK(reader.first_skip_reason() == "fixture:2: expected a JSON object, found 'not json'");
}

TEST_CASE("mooncake: the real conversation trace has 12,031 requests over 3,536.999 s", "[mooncake][real]") {
  const auto path = test::real_trace("conversation_trace.jsonl");
  if (!path) {
    WARN("skipped: conversation_trace.jsonl not found (set TOKENLINE_TRACES_DIR)");
    return;
  }
  MooncakeReader reader(LineReader::open_file(*path), {});
  int64_t count = 0, input_sum = 0;
  double first = -1, last = 0;
  while (auto r = reader.next()) {
    if (count == 0) first = r->arrival_s;
    last = r->arrival_s;
    input_sum += r->input_tokens;
    REQUIRE(r->block_hashes.front() == 0);  // SOURCE.md: every line starts with the shared block 0
    ++count;
  }
  CHECK(count == 12031);
  CHECK(first == 0.0);
  CHECK(last == Approx(3536.999));
  CHECK(static_cast<double>(input_sum) / count == Approx(12035).epsilon(1e-3));  // SOURCE.md: mean 12,035
  CHECK(reader.skipped_lines() == 0);
}

}  // namespace
}  // namespace tokenline
