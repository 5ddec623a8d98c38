// SessionSource: a stream of multi-turn sessions (conversations, agent loops), each a script of turns. A
// turn's prompt is the session's whole history - the shared prefix (if any), every earlier turn's new
// tokens and answer - followed by its own new tokens; it is sent think_s after the previous answer left
// (run/session_arrivals.h plays the scripts against the engine's completions). Sessions come in
// non-decreasing start_s order; a source holds one session at a time, never the whole trace.
// Open inheritance: the JSONL reader (session_reader.h) and the generator (session_generator.h) plug in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tokenline {

// Tokens per hashed block of a session's prompt: SGLang's and vLLM's usual KV block, and the Bailian
// traces' block (alibaba-edu/qwen-bailian-usagetraces-anon README: 16 tokens per block), so every KV page
// size from 16 up sees the history's full pages hashed alike.
inline constexpr int32_t kSessionBlockTokens = 16;

struct SessionTurn {
  int64_t new_tokens = 0;     // input tokens this turn adds after the history, >= 1
  int64_t output_tokens = 0;  // the answer's tokens, >= 1
  double think_s = 0;         // after the previous answer left, before this turn is sent; 0 for turn 0
};

struct SessionScript {
  int64_t index = 0;   // 0, 1, 2, ... in the order the source produced them (names its history's blocks)
  std::string name;    // the trace's session id, for messages
  double start_s = 0;  // the first turn is sent at this time at the earliest (later with a client cap)
  // A prefix shared across sessions (a system prompt, tool definitions): its first prefix_tokens tokens are
  // the same for every session of prefix_group. prefix_group < 0: none.
  int64_t prefix_group = -1;
  int64_t prefix_tokens = 0;
  std::vector<SessionTurn> turns;  // >= 1
};

class SessionSource {
 public:
  virtual ~SessionSource() = default;
  // The next session, or nullopt at the end. Throws InputError for bad input (file:line: field ...).
  virtual std::optional<SessionScript> next() = 0;
  // What the source reads, for run metadata: "sessions:agent.jsonl", "synthetic-sessions:sessions=8,...".
  virtual std::string describe() const = 0;
};

}  // namespace tokenline
