#include "workloads/session_reader.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "common/rng.h"
#include "workloads/json_fields.h"

namespace tokenline {
namespace {

constexpr size_t kMaxSessionIdChars = 256;  // an id is a name, not a payload

std::string session_id(const nlohmann::json& obj) {
  const auto it = obj.find("session");
  if (it == obj.end()) throw FieldError{"session", "a session id (string or integer >= 0)", "no such field"};
  if (it->is_string()) {
    const std::string id = it->get<std::string>();
    if (!id.empty() && id.size() <= kMaxSessionIdChars) return "s:" + id;
  } else if (it->is_number_integer() && (it->is_number_unsigned() || it->get<int64_t>() >= 0)) {
    return "i:" + it->dump();
  }
  throw FieldError{"session", "a session id (a string of 1 to 256 characters or an integer >= 0)",
                   jsonl::describe(*it)};
}

std::string prefix_id(const nlohmann::json& obj) {
  const auto it = obj.find("prefix_id");
  if (it == obj.end()) return "";
  if (it->is_string() && !it->get<std::string>().empty() &&
      it->get<std::string>().size() <= kMaxSessionIdChars)
    return it->get<std::string>();
  throw FieldError{"prefix_id", "a string of 1 to 256 characters", jsonl::describe(*it)};
}

InputError at(const std::string& where, const FieldError& e) {
  return InputError(e.field.empty() ? where : where + ": " + e.field, e.expected, e.found);
}

}  // namespace

std::optional<SessionReader::Line> SessionReader::read_line() {
  std::string text;
  while (lines_.next(text)) {
    if (lines_.too_long())
      throw InputError(lines_.where(),
                       "a line of at most " + std::to_string(lines_.max_line_bytes()) + " bytes",
                       "a longer line");
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    Line line;
    line.where = lines_.where();
    try {
      const nlohmann::json obj = jsonl::parse_object(text);
      jsonl::reject_unknown_keys(obj, {"session", "turn", "new_tokens", "output_tokens", "think_s", "start_s",
                                       "prefix_id", "prefix_tokens"});
      line.session = session_id(obj);
      line.turn = jsonl::int_field(obj, "turn", 0);
      line.body.new_tokens = jsonl::int_field(obj, "new_tokens", 1);
      line.body.output_tokens = jsonl::int_field(obj, "output_tokens", 1);
      if (obj.contains("think_s")) line.body.think_s = jsonl::number_field(obj, "think_s", 0);
      if (obj.contains("start_s")) line.start_s = jsonl::number_field(obj, "start_s", 0);
      line.prefix_id = prefix_id(obj);
      line.prefix_tokens = jsonl::optional_int_field(obj, "prefix_tokens", 1).value_or(0);
      constexpr int64_t kMost = limits::kMaxRequestTokens;
      for (const auto& [field, tokens] : {std::pair<const char*, int64_t>{"new_tokens", line.body.new_tokens},
                                          {"output_tokens", line.body.output_tokens},
                                          {"prefix_tokens", line.prefix_tokens}}) {
        if (tokens > kMost)
          throw FieldError{field, "at most " + std::to_string(kMost), std::to_string(tokens)};
      }
      const std::string most_s = "at most " + number_text(limits::kMaxArrivalS) + " s";
      if (line.body.think_s > limits::kMaxArrivalS)
        throw FieldError{"think_s", most_s, number_text(line.body.think_s)};
      if (line.start_s && *line.start_s > limits::kMaxArrivalS)
        throw FieldError{"start_s", most_s, number_text(*line.start_s)};
      if ((line.prefix_id.empty()) != (line.prefix_tokens == 0))
        throw FieldError{
            "prefix_tokens", "prefix_id and prefix_tokens together, or neither",
            line.prefix_id.empty() ? "prefix_tokens without prefix_id" : "prefix_id without prefix_tokens"};
      if (line.turn > 0 && (line.start_s || line.prefix_tokens > 0))
        throw FieldError{line.start_s ? "start_s" : "prefix_id", "start_s and prefix_id on turn 0 only",
                         "turn " + std::to_string(line.turn)};
      if (line.turn == 0 && line.body.think_s != 0)
        throw FieldError{"think_s", "0 or no think_s on turn 0 (start_s says when a session starts)",
                         number_text(line.body.think_s)};
    } catch (const FieldError& e) {
      throw at(line.where, e);
    }
    return line;
  }
  return std::nullopt;
}

// Appends `line` to `s` (its next turn), checking the order and the history's length.
void SessionReader::check_into(const Line& line, SessionScript& s, int64_t& history_tokens) const {
  const auto expected_turn = static_cast<int64_t>(s.turns.size());
  if (line.turn != expected_turn)
    throw at(line.where, {"turn", std::to_string(expected_turn) + " (the session's turns in order, from 0)",
                          std::to_string(line.turn)});
  if (expected_turn >= limits::kMaxTurns)
    throw at(line.where, {"turn", "at most " + std::to_string(limits::kMaxTurns) + " turns per session",
                          "turn " + std::to_string(line.turn)});
  const int64_t prompt = history_tokens + line.body.new_tokens;
  if (prompt > limits::kMaxRequestTokens)
    throw at(line.where, {"new_tokens",
                          "a prompt of at most " + std::to_string(limits::kMaxRequestTokens) +
                              " tokens, the session's history included",
                          std::to_string(prompt) + " tokens"});
  history_tokens = prompt + line.body.output_tokens;
  s.turns.push_back(line.body);
}

std::optional<SessionScript> SessionReader::next() {
  std::optional<Line> first = held_ ? std::move(held_) : read_line();
  held_.reset();
  if (!first) return std::nullopt;
  if (first->turn != 0)
    throw at(first->where, {"turn", "0 on a session's first line", std::to_string(first->turn)});
  const uint64_t id_hash = stream_id(first->session);
  if (!ended_.insert(id_hash).second)
    throw at(first->where, {"session", "each session's turns on consecutive lines",
                            "session " + first->session.substr(2) + " again after other sessions"});
  SessionScript s;
  s.index = sessions_++;
  s.name = first->session.substr(2);
  s.start_s = first->start_s.value_or(0.0);
  if (s.start_s < last_start_s_)
    throw at(first->where,
             {"start_s", "sessions in non-decreasing start_s order (>= " + number_text(last_start_s_) + ")",
              number_text(s.start_s)});
  last_start_s_ = s.start_s;
  if (!first->prefix_id.empty()) {
    s.prefix_group = static_cast<int64_t>(stream_id(first->prefix_id) >> 1);
    s.prefix_tokens = first->prefix_tokens;
  }
  int64_t history = s.prefix_tokens;
  check_into(*first, s, history);
  while (std::optional<Line> line = read_line()) {
    if (line->session != first->session) {
      held_ = std::move(line);
      break;
    }
    check_into(*line, s, history);
  }
  return s;
}

}  // namespace tokenline
