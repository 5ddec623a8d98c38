// OpenAiHandler: the HTTP handler of `tokenline serve` (OpenAI's completions shape, beside the HttpServer
// it plugs into). POST /v1/completions {"prompt": text, "max_tokens": n} tokenizes the prompt (byte
// tokens), pushes it to the engine loop's LiveFeed and blocks the connection's thread until the engine
// says the request left; the reply carries the greedy completion (text, exact token_ids, usage with
// cached_tokens). GET /health answers ok. Bad requests get 400 with a message. Thread-safe: handle() runs
// on connection threads, finished() and abandon_pending() on the engine loop's.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <mutex>
#include <vector>

#include "engine/core/request.h"
#include "engine/runtime/http_server.h"
#include "engine/runtime/model_shape.h"
#include "engine/runtime/request_feed.h"

namespace tokenline {

class OpenAiHandler {
 public:
  // REQUIRES: feed and shape outlive the handler.
  OpenAiHandler(LiveFeed& feed, const ModelShape& shape) : feed_(feed), shape_(shape) {}

  HttpResponse handle(const HttpRequest& req);
  // Engine thread: a request left the engine (finished or rejected) with these tokens (prompt + generated).
  void finished(const RequestRecord& record, const std::vector<int32_t>* tokens);
  // After the engine loop: requests it never scheduled get a reply too (503), so no connection waits forever.
  void abandon_pending();

 private:
  struct Outcome {
    RequestRecord record;
    std::vector<int32_t> generated;
  };
  HttpResponse complete(const std::string& prompt, int64_t max_tokens);

  LiveFeed& feed_;
  const ModelShape& shape_;
  std::mutex mutex_;
  std::map<RequestId, std::promise<Outcome>> pending_;
  std::atomic<RequestId> next_id_{0};
};

}  // namespace tokenline
