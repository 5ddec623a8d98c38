// SessionReader: multi-turn sessions from tokenline's session JSONL (docs/sessions-and-routing.md), one line
// per turn:
//   {"session": "a1", "turn": 0, "new_tokens": 1800, "output_tokens": 120, "start_s": 0.5,
//    "prefix_id": "tools-v2", "prefix_tokens": 4096}
//   {"session": "a1", "turn": 1, "new_tokens": 300, "output_tokens": 80, "think_s": 2.5}
// session: a string or an integer >= 0; turn: 0 on a session's first line, then one more per line; a
// session's lines are consecutive and its id is not used again. new_tokens, output_tokens: integers >= 1.
// think_s (turns > 0, default 0): seconds from the previous answer to this turn. On turn 0 only: start_s
// (default 0; non-decreasing along the file), prefix_id + prefix_tokens (a shared prefix before turn 0's
// new tokens). Unknown keys, blank-free malformed lines, a prompt (history included) above
// limits::kMaxRequestTokens or more than limits::kMaxTurns turns throw InputError "file:line: field:
// expected ..., found ...". Memory: one session's turns plus one 8-byte hash per session ended.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "workloads/line_reader.h"
#include "workloads/session_source.h"

namespace tokenline {

class SessionReader final : public SessionSource {
 public:
  explicit SessionReader(LineReader lines) : lines_(std::move(lines)) {}
  std::optional<SessionScript> next() override;
  std::string describe() const override { return "sessions:" + lines_.name(); }

 private:
  struct Line {
    std::string session;
    int64_t turn = 0;
    SessionTurn body;
    std::optional<double> start_s;
    std::string prefix_id;  // "" = none
    int64_t prefix_tokens = 0;
    std::string where;  // "file:line"
  };
  std::optional<Line> read_line();  // the next non-blank line, parsed and checked on its own
  void check_into(const Line& line, SessionScript& s, int64_t& history_tokens) const;

  LineReader lines_;
  std::optional<Line> held_;  // the first line of the next session, read ahead
  std::set<uint64_t> ended_;  // hashes of the ids of sessions already read
  double last_start_s_ = 0;
  int64_t sessions_ = 0;
};

}  // namespace tokenline
