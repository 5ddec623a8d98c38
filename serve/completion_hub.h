// CompletionHub: where `tokenline serve`'s HTTP workers meet the engine loop. A worker opens a
// CompletionGroup (the choices of one HTTP request, one engine request each), pushes the returned specs to
// the LiveFeed and waits on the group. On the engine thread the hub samples each request's tokens (the
// runner's TokenChooser), publishes them after each step - text held back while it may still become a
// stop string or is an incomplete UTF-8 character - ends a request at EOS or a stop string
// (Instance::abort, kFinished), aborts those whose client went away (kCancelled), and closes each choice
// with its record. Thread-safe: open/cancel on workers; choose/after_step/on_record/abandon on the loop.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/instance.h"
#include "engine/runtime/model_runner.h"
#include "serve/serve_metrics.h"
#include "serve/token_sampler.h"
#include "serve/tokenizer.h"

namespace tokenline {

enum class FinishReason {
  kNone,         // still running
  kStop,         // EOS or a stop string
  kLength,       // max_tokens reached
  kAbort,        // cancelled (client gone, or the shutdown timeout)
  kRejected,     // refused by the core (RequestRecord::reject_reason)
  kUnscheduled,  // the engine stopped before scheduling it
};
std::string_view to_string(FinishReason reason);  // OpenAI's words: "stop", "length", "abort", ...

// What one choice asks for.
struct ChoiceSpec {
  std::vector<int32_t> prompt;  // token ids
  int64_t max_tokens = 16;
  SamplingParams sampling;
  std::vector<std::string> stop;  // stop strings (excluded from the text)
  bool ignore_eos = false;
};

// One choice's published progress. Guarded by its group's mutex.
struct ChoiceState {
  RequestId id = 0;
  std::string text;                     // published text, stop string removed
  std::vector<int32_t> tokens;          // published tokens (EOS included when it stopped the choice)
  std::vector<TokenLogprobs> logprobs;  // one per published token, when logprobs were asked
  FinishReason finish = FinishReason::kNone;
  RequestRecord record;  // once done
  bool done = false;
};

struct CompletionGroup {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<ChoiceState> choices;
  bool all_done() const;  // REQUIRES: mutex held
};

class CompletionHub final : public TokenChooser {
 public:
  // REQUIRES: tokenizer and metrics outlive the hub.
  CompletionHub(const Tokenizer& tokenizer, ServeMetrics& metrics)
      : tokenizer_(tokenizer), metrics_(metrics) {}

  // Workers: a group of choices and the engine requests to push (one per choice, in order).
  std::shared_ptr<CompletionGroup> open(const std::vector<ChoiceSpec>& choices,
                                        std::vector<RequestSpec>& specs);
  // The client went away: every unfinished choice of the group is aborted at the next step boundary.
  void cancel(CompletionGroup& group);
  void cancel_all();     // shutdown timeout or a second signal
  int64_t live() const;  // requests opened and not yet finished

  // Engine thread.
  int32_t choose(RequestId id, std::span<const float> logits, int32_t greedy) override;
  // After a step's commit: publish the step's tokens, stop the requests that met a stop condition and abort
  // the cancelled ones.
  void after_step(const StepPlan& plan, const ModelRunner& runner, Instance& instance, double now_s);
  void on_record(const RequestRecord& record);
  // After the engine loop: what it never scheduled is closed (kUnscheduled), so no worker waits forever.
  void abandon_pending();

 private:
  struct Live {
    std::shared_ptr<CompletionGroup> group;
    size_t choice = 0;
    ChoiceSpec spec;
    std::string raw;             // generated text so far, cut at a stop string
    size_t published_bytes = 0;  // of raw
    int64_t seen_tokens = 0;     // generated tokens examined
    int64_t chosen = 0;          // tokens chosen (the sampler's position)
    std::deque<TokenLogprobs> pending_logprobs;
    FinishReason finish = FinishReason::kNone;  // kStop once a stop condition is met
    bool cancelled = false;
    double opened_s = 0;
  };
  void take_tokens(Live& live, const std::vector<int32_t>& all);
  void publish(Live& live, bool final_flush, std::vector<int32_t> tokens,
               std::vector<TokenLogprobs> logprobs);
  void log_record(const RequestRecord& record, FinishReason reason) const;

  const Tokenizer& tokenizer_;
  ServeMetrics& metrics_;
  mutable std::mutex mutex_;
  std::map<RequestId, Live> live_;
  RequestId next_id_ = 0;
};

}  // namespace tokenline
