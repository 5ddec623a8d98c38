#include "serve/openai_handler.h"

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "serve/openai_response.h"

namespace tokenline {
namespace {

using json = nlohmann::json;

constexpr auto kPeerCheck = std::chrono::milliseconds(50);  // how soon a vanished client is noticed
constexpr const char* kRetryAfterS = "1";  // a step of the CPU engine is tens of ms: retry after a second

ApiError overloaded(std::string message) {
  return ApiError{.status = 503,
                  .type = "server_error",
                  .message = std::move(message),
                  .param = {},
                  .code = "overloaded"};
}

// JSON text that cannot throw: a byte sequence that is not UTF-8 (refused where names enter, so never
// expected here) is written as U+FFFD.
std::string dump_text(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

uint64_t mix(uint64_t z) {  // splitmix64's finaliser: distinct (seed, choice) pairs, unrelated streams
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Waits until every choice is done; false when the client went away first.
bool wait_done(CompletionGroup& group, HttpExchange& exchange) {
  std::unique_lock<std::mutex> lock(group.mutex);
  while (!group.all_done()) {
    group.changed.wait_for(lock, kPeerCheck);
    if (group.all_done()) break;
    lock.unlock();
    const bool gone = exchange.peer_closed();
    lock.lock();
    if (gone) return false;
  }
  return true;
}

// The first choice that did not finish normally, as an error (none: every choice stopped or hit its length).
std::optional<ApiError> failed_choice(const std::vector<ChoiceState>& choices) {
  for (const ChoiceState& c : choices) {
    switch (c.finish) {
      case FinishReason::kNone:
      case FinishReason::kStop:
      case FinishReason::kLength:
        break;
      case FinishReason::kAbort:
        return overloaded("the request was cancelled: the server is shutting down");
      case FinishReason::kRejected:
        return ApiError{
            .message = "the engine refused the request: " + std::string(to_string(c.record.reject_reason)),
            .param = {},
            .code = std::string(to_string(c.record.reject_reason))};
      case FinishReason::kUnscheduled:
        return overloaded("the engine stopped before scheduling this request");
    }
  }
  return std::nullopt;
}

// What a stream has sent of each choice; take() returns the events for what is new (under the group's lock).
struct StreamCursor {
  std::vector<size_t> sent_text, sent_logprobs;
  std::vector<bool> started, finished;
  std::optional<ApiError> failure;  // the first choice that ended badly: the stream ends with its error

  explicit StreamCursor(size_t choices)
      : sent_text(choices, 0), sent_logprobs(choices, 0), started(choices, false), finished(choices, false) {}

  std::string take(const ReplyContext& ctx, const CompletionGroup& group, bool& all) {
    std::string events;
    all = true;
    for (size_t i = 0; i < group.choices.size(); ++i) {
      const ChoiceState& c = group.choices[i];
      const bool fresh = c.text.size() > sent_text[i] || c.logprobs.size() > sent_logprobs[i];
      all = all && (finished[i] || c.done);
      if (finished[i] || (!fresh && !c.done && started[i])) continue;
      ChoiceDelta d{
          .index = i,
          .text = c.text.substr(sent_text[i]),
          .logprobs = {c.logprobs.begin() + static_cast<std::ptrdiff_t>(sent_logprobs[i]), c.logprobs.end()},
          .finish = c.done ? c.finish : FinishReason::kNone,
          .first = !started[i] && ctx.endpoint == Endpoint::kChat};
      if (c.done && !failure) failure = failed_choice({c});
      if (!(c.done && failure)) events += stream_event(ctx, d);
      sent_text[i] = c.text.size();
      sent_logprobs[i] = c.logprobs.size();
      started[i] = true;
      finished[i] = c.done;
    }
    return events;
  }
};

}  // namespace

OpenAiHandler::OpenAiHandler(LiveFeed& feed, CompletionHub& hub, ServeMetrics& metrics,
                             const Tokenizer& tokenizer, ServeOptions options)
    : feed_(feed),
      hub_(hub),
      metrics_(metrics),
      tokenizer_(tokenizer),
      options_(std::move(options)),
      started_(static_cast<int64_t>(std::time(nullptr))) {}

HttpResponse OpenAiHandler::handle(const HttpRequest& req, HttpExchange& exchange) {
  HttpResponse r;
  const bool v1 = req.target.rfind("/v1/", 0) == 0;
  if (!options_.cors_origin.empty() && req.method == "OPTIONS") {
    r = HttpResponse{204, "text/plain", "", {}};
  } else if (v1 && !options_.api_key.empty() && req.header("authorization") != "Bearer " + options_.api_key) {
    r = error(ApiError{
        .status = 401, .message = "Incorrect API key provided.", .param = {}, .code = "invalid_api_key"});
  } else {
    r = route(req, exchange);
  }
  if (!options_.cors_origin.empty()) {
    r.headers.emplace_back("Access-Control-Allow-Origin", options_.cors_origin);
    r.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    r.headers.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type");
  }
  return r;
}

HttpResponse OpenAiHandler::route(const HttpRequest& req, HttpExchange& exchange) {
  const std::string& t = req.target;
  const bool get = req.method == "GET", post = req.method == "POST";
  if (t == "/health" && get) {
    return draining_ ? HttpResponse{503, "application/json", "{\"status\":\"draining\"}\n", {}}
                     : HttpResponse{200, "application/json", "{\"status\":\"ok\"}\n", {}};
  }
  if (t == "/metrics" && get) return metrics();
  if ((t == "/v1/models" || t.rfind("/v1/models/", 0) == 0) && get) return models(t);
  if (t == "/v1/completions" && post) return complete(Endpoint::kCompletions, req, exchange);
  if (t == "/v1/chat/completions" && post) return complete(Endpoint::kChat, req, exchange);
  const bool known = t == "/health" || t == "/metrics" || t == "/v1/models" || t == "/v1/completions" ||
                     t == "/v1/chat/completions";
  return error(ApiError{.status = known ? 405 : 404,
                        .message = (known ? "Method not allowed: " : "Invalid URL: ") + req.method + " " + t,
                        .param = {},
                        .code = known ? "method_not_allowed" : "unknown_url"});
}

HttpResponse OpenAiHandler::error(const ApiError& e) const {
  HttpResponse r{e.status, "application/json", error_body(e), {}};
  if (e.status == 503) r.headers.emplace_back("Retry-After", kRetryAfterS);
  return r;
}

HttpResponse OpenAiHandler::models(const std::string& target) const {
  const json model = {{"id", options_.model.name},
                      {"object", "model"},
                      {"created", started_},
                      {"owned_by", "tokenline"},
                      {"root", options_.model.name},
                      {"parent", json()},
                      {"max_model_len", options_.model.max_context_tokens}};
  if (target == "/v1/models")
    return HttpResponse{
        200, "application/json", dump_text(json{{"object", "list"}, {"data", {model}}}) + "\n", {}};
  const std::string name = target.substr(std::string("/v1/models/").size());
  if (name != options_.model.name)
    return error(ApiError{.status = 404,
                          .message = "The model `" + name + "` does not exist.",
                          .param = "model",
                          .code = "model_not_found"});
  return HttpResponse{200, "application/json", dump_text(model) + "\n", {}};
}

HttpResponse OpenAiHandler::metrics() const {
  HttpGauges gauges;
  if (http_stats_) {
    const HttpServerStats s = http_stats_();
    gauges = HttpGauges{s.open_connections, s.busy_workers, s.threads, draining_};
  }
  gauges.draining = draining_;
  return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics_.render(gauges), {}};
}

// 400 when the request alone has more choices than --max-queued lets wait (it could never be admitted);
// 503 while draining, when every engine slot of the pool is busy, or beyond --max-queued waiting choices.
std::optional<ApiError> OpenAiHandler::admit(int64_t choices) {
  if (options_.max_queued > 0 && choices > options_.max_queued)
    return ApiError{.message = "the request has " + std::to_string(choices) +
                               " choices (prompts x n), more than --max-queued " +
                               std::to_string(options_.max_queued) + " lets wait",
                    .param = "n",
                    .code = "too_many_choices"};
  if (draining_) return overloaded("the server is shutting down");
  if (in_flight_.fetch_add(1) >= options_.engine_slots) {
    in_flight_.fetch_sub(1);
    metrics_.on_overload();
    return overloaded("every worker is busy: retry later");
  }
  const int64_t queued = hub_.live() - metrics_.running();
  if (options_.max_queued > 0 && queued + choices > options_.max_queued) {
    in_flight_.fetch_sub(1);
    metrics_.on_overload();
    return overloaded("more than --max-queued " + std::to_string(options_.max_queued) +
                      " choices would be waiting");
  }
  return std::nullopt;
}

// One ChoiceSpec per (prompt, choice); each choice draws from its own stream of the request's seed.
std::vector<ChoiceSpec> OpenAiHandler::choice_specs(const CompletionRequest& req) {
  const uint64_t base = req.seeded ? req.sampling.seed : mix(options_.seed ^ mix(unseeded_.fetch_add(1) + 1));
  std::vector<ChoiceSpec> specs;
  for (const std::vector<int32_t>& prompt : req.prompts) {
    for (int32_t i = 0; i < req.n; ++i) {
      ChoiceSpec c{.prompt = prompt,
                   .max_tokens = req.max_tokens,
                   .sampling = req.sampling,
                   .stop = req.stop,
                   .ignore_eos = req.ignore_eos};
      c.sampling.seed = i == 0 ? base : mix(base + static_cast<uint64_t>(i));
      specs.push_back(std::move(c));
    }
  }
  return specs;
}

HttpResponse OpenAiHandler::complete(Endpoint endpoint, const HttpRequest& http, HttpExchange& exchange) {
  auto parsed = parse_completion_request(endpoint, http.body, tokenizer_, options_.model);
  if (const ApiError* e = std::get_if<ApiError>(&parsed)) return error(*e);
  const CompletionRequest& req = std::get<CompletionRequest>(parsed);
  const std::vector<ChoiceSpec> specs = choice_specs(req);
  if (auto e = admit(static_cast<int64_t>(specs.size()))) return error(*e);
  struct Release {
    std::atomic<int64_t>& n;
    ~Release() { n.fetch_sub(1); }
  } release{in_flight_};
  std::vector<RequestSpec> engine;
  std::shared_ptr<CompletionGroup> group = hub_.open(specs, engine);
  for (RequestSpec& spec : engine) {
    if (!feed_.push(std::move(spec))) {
      hub_.cancel(*group);  // closed by abandon_pending when the loop ends
      return error(overloaded("the server is shutting down"));
    }
  }
  const char* prefix = endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-";
  const ReplyContext ctx{.endpoint = endpoint,
                         .id = prefix + std::to_string(engine.empty() ? 0 : group->choices[0].id),
                         .created = static_cast<int64_t>(std::time(nullptr)),
                         .model = options_.model.name,
                         .logprobs = req.sampling.logprobs >= 0,
                         .tokenizer = &tokenizer_};
  try {
    if (req.stream) return reply_stream(ctx, *group, req, exchange);
    return reply_whole(ctx, *group, req.n, exchange);
  } catch (...) {  // the server answers 500; the engine stops working for nobody
    hub_.cancel(*group);
    throw;
  }
}

HttpResponse OpenAiHandler::reply_whole(const ReplyContext& ctx, CompletionGroup& group, int32_t n,
                                        HttpExchange& exchange) {
  if (!wait_done(group, exchange)) {
    hub_.cancel(group);
    return error(ApiError{
        .status = 499, .message = "client closed the request", .param = {}, .code = {}});  // never read
  }
  const std::lock_guard<std::mutex> lock(group.mutex);
  if (auto e = failed_choice(group.choices)) return error(*e);
  return HttpResponse{
      200, "application/json", reply_body(ctx, group.choices, usage_of(group.choices, n)), {}};
}

HttpResponse OpenAiHandler::reply_stream(const ReplyContext& ctx, CompletionGroup& group,
                                         const CompletionRequest& req, HttpExchange& exchange) {
  HttpResponse head{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
  if (!options_.cors_origin.empty())
    head.headers.emplace_back("Access-Control-Allow-Origin", options_.cors_origin);
  if (!exchange.stream_begin(head)) {
    hub_.cancel(group);
    return {};
  }
  StreamCursor cursor(group.choices.size());
  while (true) {
    std::string events;
    bool all = false;
    {
      std::unique_lock<std::mutex> lock(group.mutex);
      events = cursor.take(ctx, group, all);
      if (events.empty() && !all) group.changed.wait_for(lock, kPeerCheck);
    }
    if (!events.empty() && !exchange.stream_write(events)) break;
    if (all) {
      std::vector<ChoiceState> done;
      {
        const std::lock_guard<std::mutex> lock(group.mutex);
        done = group.choices;
      }
      std::string tail = cursor.failure ? error_event(*cursor.failure) : "";
      if (!cursor.failure && req.include_usage) tail += usage_event(ctx, usage_of(done, req.n));
      exchange.stream_write(tail + kDoneEvent);
      return {};
    }
    if (events.empty() && exchange.peer_closed()) break;
  }
  hub_.cancel(group);  // the client went away mid-stream
  return {};
}

}  // namespace tokenline
