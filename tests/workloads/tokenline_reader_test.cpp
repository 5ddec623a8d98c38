#include "workloads/tokenline_reader.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "test_sources.h"

namespace tokenline {
namespace {

using test::drain;
using test::error_of;
using test::text_lines;

TEST_CASE("tokenline JSONL: required and optional fields", "[tokenline]") {
  TokenlineReader reader(
      text_lines("{\"arrival_s\": 0.25, \"input_tokens\": 100, \"output_tokens\": 5}\n"
                 "{\"arrival_s\": 1, \"input_tokens\": 300, \"output_tokens\": 7, \"hash_ids\": [9, 8, 7], "
                 "\"block_tokens\": 128, \"priority\": -2, \"session\": 4}\n"),
      {});
  const auto rs = drain(reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].arrival_s == 0.25);
  CHECK(rs[0].block_hashes.empty());
  CHECK(rs[0].block_tokens == 0);
  CHECK(rs[0].session == -1);
  CHECK(rs[1].block_hashes == std::vector<int64_t>{9, 8, 7});
  CHECK(rs[1].block_tokens == 128);
  CHECK(rs[1].priority == -2);
  CHECK(rs[1].session == 4);
}

TEST_CASE("tokenline JSONL: a written line reads back to the same request", "[tokenline]") {
  WorkloadRequest r;
  r.arrival_s = 0.1 + 0.2;  // not exactly representable: the text must still round-trip
  r.input_tokens = 1000;
  r.output_tokens = 20;
  r.block_hashes = {5, 6};
  r.block_tokens = 512;
  r.priority = 3;
  r.session = 11;
  TokenlineReader reader(text_lines(to_tokenline_line(r) + "\n"), {});
  const auto back = drain(reader);
  REQUIRE(back.size() == 1);
  CHECK(back[0].arrival_s == r.arrival_s);
  CHECK(back[0].input_tokens == r.input_tokens);
  CHECK(back[0].output_tokens == r.output_tokens);
  CHECK(back[0].block_hashes == r.block_hashes);
  CHECK(back[0].block_tokens == r.block_tokens);
  CHECK(back[0].priority == r.priority);
  CHECK(back[0].session == r.session);
}

TEST_CASE("tokenline JSONL: bad values and unknown fields", "[tokenline]") {
  auto err = [](const std::string& line) {
    TokenlineReader reader(text_lines(line, "w.jsonl"), {});
    return error_of(reader);
  };
  CHECK(err("{\"arrival_s\": 0, \"input_tokens\": 1, \"output_tokens\": 1, \"prio\": 1}") ==
        "w.jsonl:1: prio: expected one of the fields {arrival_s, input_tokens, output_tokens, hash_ids, "
        "block_tokens, "
        "priority, session}, found unknown field 'prio'");
  CHECK(err("{\"arrival_s\": \"soon\", \"input_tokens\": 1, \"output_tokens\": 1}") ==
        "w.jsonl:1: arrival_s: expected a number >= 0, found string \"soon\"");
  CHECK(err("{\"arrival_s\": 0, \"input_tokens\": 1.5, \"output_tokens\": 1}") ==
        "w.jsonl:1: input_tokens: expected an integer >= 1, found number 1.5");
  CHECK(err("{\"arrival_s\": 0, \"input_tokens\": 1000, \"output_tokens\": 0}") ==
        "w.jsonl:1: output_tokens: expected an integer >= 1, found number 0");
  CHECK(err("{\"arrival_s\": 0, \"input_tokens\": 1000, \"output_tokens\": 1, \"hash_ids\": [1]}") ==
        "w.jsonl:1: hash_ids: expected ceil(1000 / 512) = 2 block hashes, found 1");
  CHECK(err("{\"arrival_s\": 0, \"input_tokens\": 1000, \"output_tokens\": 1, \"hash_ids\": 3}") ==
        "w.jsonl:1: hash_ids: expected an array of integers, found number 3");
  CHECK(err("{\"arrival_s\": 0, \"input_tokens\": 1, \"output_tokens\": 1, \"session\": -1}") ==
        "w.jsonl:1: session: expected an integer >= 0, found number -1");
  CHECK(err("[1, 2]") == "w.jsonl:1: expected a JSON object, found array [1,2]");
}

}  // namespace
}  // namespace tokenline
