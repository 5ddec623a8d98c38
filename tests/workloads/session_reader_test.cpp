#include "workloads/session_reader.h"

#include <catch2/catch.hpp>
#include <memory>
#include <sstream>

#include "common/input_error.h"

namespace tokenline {
namespace {

SessionReader reader_of(const std::string& text) {
  return SessionReader(LineReader(std::make_unique<std::istringstream>(text), "s.jsonl"));
}

std::string error_of(const std::string& text) {
  SessionReader r = reader_of(text);
  try {
    while (r.next()) {
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("session reader: a session's consecutive lines become one script of turns", "[session_reader]") {
  SessionReader r = reader_of(
      R"({"session": "a", "turn": 0, "new_tokens": 100, "output_tokens": 20, "start_s": 1.5, "prefix_id": "tools", "prefix_tokens": 64})"
      "\n"
      R"({"session": "a", "turn": 1, "new_tokens": 30, "output_tokens": 10, "think_s": 2})"
      "\n\n"
      R"({"session": 7, "turn": 0, "new_tokens": 5, "output_tokens": 1, "start_s": 1.5})"
      "\n");
  const std::optional<SessionScript> a = r.next();
  REQUIRE(a);
  CHECK(a->index == 0);
  CHECK(a->name == "a");
  CHECK(a->start_s == 1.5);
  CHECK(a->prefix_group >= 0);
  CHECK(a->prefix_tokens == 64);
  REQUIRE(a->turns.size() == 2);
  CHECK(a->turns[0].new_tokens == 100);
  CHECK(a->turns[0].think_s == 0);
  CHECK(a->turns[1].output_tokens == 10);
  CHECK(a->turns[1].think_s == 2);
  const std::optional<SessionScript> b = r.next();
  REQUIRE(b);
  CHECK(b->index == 1);
  CHECK(b->name == "7");
  CHECK(b->prefix_group == -1);
  CHECK(b->turns.size() == 1);
  CHECK_FALSE(r.next());
  CHECK(r.describe() == "sessions:s.jsonl");
}

TEST_CASE("session reader: equal prefix ids name one shared prefix group", "[session_reader]") {
  SessionReader r = reader_of(
      R"({"session": 1, "turn": 0, "new_tokens": 1, "output_tokens": 1, "prefix_id": "x", "prefix_tokens": 32})"
      "\n"
      R"({"session": 2, "turn": 0, "new_tokens": 1, "output_tokens": 1, "prefix_id": "x", "prefix_tokens": 32})"
      "\n"
      R"({"session": 3, "turn": 0, "new_tokens": 1, "output_tokens": 1, "prefix_id": "y", "prefix_tokens": 32})"
      "\n");
  const auto s1 = r.next(), s2 = r.next(), s3 = r.next();
  CHECK(s1->prefix_group == s2->prefix_group);
  CHECK(s1->prefix_group != s3->prefix_group);
}

TEST_CASE("session reader: each malformed line is named by file, line and field", "[session_reader]") {
  const std::string t0 = R"({"session": "a", "turn": 0, "new_tokens": 10, "output_tokens": 5})";
  CHECK_THAT(error_of(t0 + "\n" + R"({"session": "a", "turn": 2, "new_tokens": 1, "output_tokens": 1})"),
             Catch::Contains("s.jsonl:2: turn: expected 1") && Catch::Contains("found 2"));
  CHECK_THAT(error_of(R"({"session": "a", "turn": 1, "new_tokens": 1, "output_tokens": 1})"),
             Catch::Contains("s.jsonl:1: turn: expected 0 on a session's first line"));
  CHECK_THAT(error_of(t0 + "\n" + R"({"session": "b", "turn": 0, "new_tokens": 1, "output_tokens": 1})" +
                      "\n" + R"({"session": "a", "turn": 0, "new_tokens": 1, "output_tokens": 1})"),
             Catch::Contains("s.jsonl:3: session: expected each session's turns on consecutive lines"));
  CHECK_THAT(error_of(R"({"session": "a", "turn": 0, "new_tokens": 0, "output_tokens": 1})"),
             Catch::Contains("s.jsonl:1: new_tokens: expected an integer >= 1"));
  CHECK_THAT(error_of(R"({"session": "a", "turn": 0, "new_tokens": 1, "output_tokens": 1, "thinks": 1})"),
             Catch::Contains("s.jsonl:1") && Catch::Contains("thinks"));
  CHECK_THAT(error_of(R"({"session": "a", "turn": 0, "new_tokens": 1, "output_tokens": 1, "think_s": 3})"),
             Catch::Contains("s.jsonl:1: think_s: expected 0 or no think_s on turn 0"));
  CHECK_THAT(error_of(t0 + "\n" +
                      R"({"session": "a", "turn": 1, "new_tokens": 1, "output_tokens": 1, "think_s": -1})"),
             Catch::Contains("s.jsonl:2: think_s"));
  CHECK_THAT(error_of(t0 + "\n" +
                      R"({"session": "a", "turn": 1, "new_tokens": 1, "output_tokens": 1, "start_s": 4})"),
             Catch::Contains("s.jsonl:2: start_s: expected start_s and prefix_id on turn 0 only"));
  CHECK_THAT(error_of(R"({"session": "a", "turn": 0, "new_tokens": 1, "output_tokens": 1, "start_s": 5})"
                      "\n"
                      R"({"session": "b", "turn": 0, "new_tokens": 1, "output_tokens": 1, "start_s": 4})"),
             Catch::Contains("s.jsonl:2: start_s: expected sessions in non-decreasing start_s order"));
  CHECK_THAT(error_of(R"({"session": "", "turn": 0, "new_tokens": 1, "output_tokens": 1})"),
             Catch::Contains("s.jsonl:1: session: expected a session id"));
  CHECK_THAT(
      error_of(R"({"session": "a", "turn": 0, "new_tokens": 1, "output_tokens": 1, "prefix_id": "p"})"),
      Catch::Contains("s.jsonl:1: prefix_tokens: expected prefix_id and prefix_tokens together"));
  CHECK_THAT(error_of("{\"session\": \"a\", \"turn\": 0,"),
             Catch::Contains("s.jsonl:1: expected a JSON object"));
}

TEST_CASE("session reader: a prompt whose history passes the token limit is refused at its line",
          "[session_reader]") {
  const std::string big = std::to_string(int64_t{1} << 26);  // half of limits::kMaxRequestTokens
  const std::string text = R"({"session": "a", "turn": 0, "new_tokens": )" + big + R"(, "output_tokens": )" +
                           big + "}\n" +
                           R"({"session": "a", "turn": 1, "new_tokens": 1, "output_tokens": 1})";
  CHECK_THAT(error_of(text), Catch::Contains("s.jsonl:2: new_tokens: expected a prompt of at most"));
}

}  // namespace
}  // namespace tokenline
