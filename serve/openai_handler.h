// OpenAiHandler: the HTTP handler of `tokenline serve`, OpenAI- and vLLM-compatible:
//   POST /v1/completions, POST /v1/chat/completions  (whole replies or SSE with stream: true)
//   GET  /v1/models, /v1/models/{name}               GET /health (503 while draining)   GET /metrics
// A completion is parsed (openai_request.h), admitted (503 + Retry-After while draining, beyond
// --max-queued or when every engine slot of the worker pool is taken), opened on the CompletionHub and
// pushed to the LiveFeed; the worker then waits on it, streaming as tokens come, and cancels it when the
// client goes away. --api-key guards /v1/* (401); --cors adds CORS headers and answers preflights.
// Thread-safe: handle() runs on the HTTP workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/runtime/request_feed.h"
#include "serve/completion_hub.h"
#include "serve/http_server.h"
#include "serve/openai_request.h"
#include "serve/serve_metrics.h"

namespace tokenline {

struct ReplyContext;  // openai_response.h

struct ServeOptions {
  ServedModel model;
  std::string api_key;       // empty: no authentication
  std::string cors_origin;   // empty: no CORS headers
  int64_t max_queued = 0;    // engine requests waiting beyond which completions get 503 (0: no cap)
  int64_t engine_slots = 1;  // completions handled at once (the worker pool less the reserve)
  uint64_t seed = 0;         // draws of requests without a seed
};

class OpenAiHandler {
 public:
  // REQUIRES: feed, hub, metrics and tokenizer outlive the handler.
  OpenAiHandler(LiveFeed& feed, CompletionHub& hub, ServeMetrics& metrics, const Tokenizer& tokenizer,
                ServeOptions options);

  HttpResponse handle(const HttpRequest& req, HttpExchange& exchange);
  void set_draining() { draining_ = true; }
  bool draining() const { return draining_; }
  // What /metrics adds about the HTTP side (the server is built after the handler).
  void set_http_stats(std::function<HttpServerStats()> stats) { http_stats_ = std::move(stats); }

 private:
  HttpResponse route(const HttpRequest& req, HttpExchange& exchange);
  HttpResponse complete(Endpoint endpoint, const HttpRequest& req, HttpExchange& exchange);
  HttpResponse reply_whole(const ReplyContext& ctx, CompletionGroup& group, int32_t n,
                           HttpExchange& exchange);
  HttpResponse reply_stream(const ReplyContext& ctx, CompletionGroup& group, const CompletionRequest& req,
                            HttpExchange& exchange);
  HttpResponse models(const std::string& target) const;
  HttpResponse metrics() const;
  HttpResponse error(const ApiError& e) const;
  std::optional<ApiError> admit(int64_t choices);
  std::vector<ChoiceSpec> choice_specs(const CompletionRequest& req);

  LiveFeed& feed_;
  CompletionHub& hub_;
  ServeMetrics& metrics_;
  const Tokenizer& tokenizer_;
  ServeOptions options_;
  std::function<HttpServerStats()> http_stats_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> in_flight_{0};  // completions being handled
  std::atomic<uint64_t> unseeded_{0};  // requests without a seed so far
  int64_t started_ = 0;                // unix time, /v1/models' created
};

}  // namespace tokenline
