// libFuzzer harness: `tokenline serve`'s HTTP handler (serve/openai_handler.h) on every endpoint, with
// JSON bodies mutated by type. The input's first byte picks the route (and whether --api-key and --cors are
// on), the rest is the body. The custom mutator parses a body that is JSON and changes one value of it to
// another type or a boundary value (a number to 2^64 - 1, a string to an object, a field removed, a known
// field added, a number spelled 1e309 or NaN, a lone surrogate), so the fuzzer reaches every field's type
// checks instead of breaking the JSON syntax. The rule: the handler always answers - a status among the ones
// it documents, never a 500 (an exception), and a JSON reply that parses - and the replies built from a
// parsed request's choices, with arbitrary bytes as generated text, are JSON too. The engine's feed is
// closed, so an admitted completion goes through the hub and is refused with 503 instead of waiting.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "common/input_limits.h"
#include "common/json_depth.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/request_feed.h"
#include "fuzz/fuzz_input.h"
#include "serve/byte_tokenizer.h"
#include "serve/completion_hub.h"
#include "serve/openai_handler.h"
#include "serve/openai_response.h"
#include "serve/serve_metrics.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace tokenline {
namespace {

using json = nlohmann::json;

struct Route {
  const char* method;
  const char* target;
};
constexpr Route kRoutes[] = {{"POST", "/v1/completions"}, {"POST", "/v1/chat/completions"},
                             {"GET", "/v1/models"},       {"GET", "/v1/models/glm-5.3-tiny"},
                             {"GET", "/v1/models/other"}, {"GET", "/health"},
                             {"GET", "/metrics"},         {"OPTIONS", "/v1/chat/completions"},
                             {"POST", "/health"},         {"GET", "/v1/completions"},
                             {"DELETE", "/v1/models"},    {"POST", "/v2/unknown"}};
constexpr size_t kRouteCount = sizeof kRoutes / sizeof kRoutes[0];

// The client never goes away; a stream cannot begin (the engine is not running, so none is reached).
class StillThere final : public HttpExchange {
 public:
  bool peer_closed() override { return false; }
  bool stream_begin(const HttpResponse&) override { return false; }
  bool stream_write(std::string_view) override { return false; }
};

struct Server {
  SteadyClock clock;
  LiveFeed feed{clock};
  ByteTokenizer tokenizer;
  ServeMetrics metrics{"glm-5.3-tiny"};
  CompletionHub hub{tokenizer, metrics};
  ServedModel model{.name = "glm-5.3-tiny", .max_context_tokens = 4096, .vocab = 512, .mtp = false};
  OpenAiHandler open{feed, hub, metrics, tokenizer,
                     ServeOptions{.model = model, .max_queued = 64, .engine_slots = 4, .seed = 1}};
  OpenAiHandler guarded{feed, hub, metrics, tokenizer,
                        ServeOptions{.model = model,
                                     .api_key = "key",
                                     .cors_origin = "*",
                                     .max_queued = 0,
                                     .engine_slots = 4,
                                     .seed = 2}};
  Server() { feed.close(); }
};

void require_json(const std::string& text) {
  if (!json::accept(text)) std::abort();
}

// The whole reply and a stream event of one parsed request, its choices "generating" the body's bytes.
void build_replies(const CompletionRequest& req, const std::string& body, const Tokenizer& tokenizer) {
  const ReplyContext ctx{.endpoint = req.endpoint,
                         .id = "cmpl-1",
                         .created = 1,
                         .model = "glm-5.3-tiny",
                         .logprobs = req.sampling.logprobs >= 0,
                         .tokenizer = &tokenizer};
  std::vector<ChoiceState> choices(std::min<size_t>(static_cast<size_t>(req.n) * req.prompts.size(), 4));
  for (size_t i = 0; i < choices.size(); ++i) {
    ChoiceState& c = choices[i];
    c.id = static_cast<RequestId>(i);
    c.text = body.substr(0, 64);  // arbitrary bytes, as random weights emit
    for (unsigned char b : c.text) c.tokens.push_back(b);
    if (ctx.logprobs)
      for (int32_t t : c.tokens)
        c.logprobs.push_back(TokenLogprobs{.token = t, .logprob = -1, .top = {{t, -1}}});
    c.finish = FinishReason::kLength;
    c.done = true;
  }
  require_json(reply_body(ctx, choices, usage_of(choices, req.n)));
  const std::string event = stream_event(ctx, ChoiceDelta{.index = 0,
                                                          .text = body.substr(0, 16),
                                                          .logprobs = {},
                                                          .finish = FinishReason::kNone,
                                                          .first = true});
  if (event.rfind("data: ", 0) != 0) std::abort();
  require_json(event.substr(6));
}

// A value of another type, or a boundary value of the same one.
json pool_value(std::minstd_rand& rng) {
  static const json kPool[] = {json(0),
                               json(-1),
                               json(1),
                               json(2),
                               json(4096),
                               json(INT32_MAX),
                               json(int64_t{INT32_MAX} + 1),
                               json(INT64_MAX),
                               json(INT64_MIN),
                               json(UINT64_MAX),
                               json(1.5),
                               json(-0.0),
                               json(1e308),
                               json(""),
                               json("x"),
                               json("user"),
                               json("text"),
                               json("none"),
                               json("glm-5.3-tiny"),
                               json(std::string(300, 'a')),
                               json(true),
                               json(false),
                               json(nullptr),
                               json::array(),
                               json::object(),
                               json::array({1, 2}),
                               json::array({json::array({1})}),
                               json::array({"a", "b"}),
                               json::object({{"type", "text"}, {"text", "x"}}),
                               json::object({{"role", "user"}, {"content", "x"}}),
                               json::object({{"include_usage", true}})};
  return kPool[rng() % (sizeof kPool / sizeof kPool[0])];
}

constexpr const char* kFields[] = {
    "model",       "prompt",          "messages", "max_tokens",   "max_completion_tokens",
    "temperature", "top_p",           "top_k",    "seed",         "stop",
    "n",           "stream",          "logprobs", "top_logprobs", "stream_options",
    "ignore_eos",  "response_format", "echo",     "best_of",      "presence_penalty",
    "logit_bias",  "tools",           "user",     "suffix"};

// Every value's location in the document (at most 256), parents before children.
void collect(json& v, std::vector<json*>& out) {
  if (out.size() >= 256) return;
  out.push_back(&v);
  if (v.is_object() || v.is_array())
    for (auto& child : v) collect(child, out);
}

// Text spellings JSON does not allow or that decode to no character: spliced over a number or a string.
std::string raw_splice(std::string text, std::minstd_rand& rng) {
  static const char* kRaw[] = {"1e309",       "-1e309",
                               "NaN",         "Infinity",
                               "\"\\ud800\"", "\"\\udc00x\"",
                               "\"caf\xe9\"", "18446744073709551616",
                               "1e-400",      "-0"};
  const size_t at = text.find_first_of("0123456789\"", rng() % (text.size() + 1));
  if (at == std::string::npos) return text;
  size_t end = at + 1;
  if (text[at] == '"') {
    while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
    end = std::min(end + 1, text.size());
  } else {
    while (end < text.size() && std::strchr("0123456789.eE+-", text[end]) != nullptr) ++end;
  }
  return text.substr(0, at) + kRaw[rng() % (sizeof kRaw / sizeof kRaw[0])] + text.substr(end);
}

// One typed mutation of a JSON body; empty when the body is not a JSON document.
std::string mutate_json(const std::string& body, std::minstd_rand& rng) {
  if (json_nesting_depth(body, limits::kMaxJsonDepth) > limits::kMaxJsonDepth) return "";
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) return "";
  std::vector<json*> nodes;
  collect(doc, nodes);
  json& node = *nodes[rng() % nodes.size()];
  switch (rng() % 5) {
    case 0:
    case 1:
      node = pool_value(rng);
      break;
    case 2:  // a member removed
      if (node.is_object() && !node.empty()) node.erase(std::next(node.begin(), rng() % node.size()).key());
      break;
    case 3:  // an element repeated (more prompts, messages, stops)
      if (node.is_array() && !node.empty() && node.size() < 64) node.push_back(node[rng() % node.size()]);
      break;
    case 4:  // a known field added at the top
      if (doc.is_object()) doc[kFields[rng() % (sizeof kFields / sizeof kFields[0])]] = pool_value(rng);
      break;
  }
  std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  if (rng() % 8 == 0) text = raw_splice(std::move(text), rng);
  return text;
}

}  // namespace
}  // namespace tokenline

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  if (size == 0 || max_size < 2) return LLVMFuzzerMutate(data, size, max_size);
  if (rng() % 16 == 0) {  // another route
    data[0] = static_cast<uint8_t>(rng());
    return size;
  }
  if (rng() % 4 != 0) {
    const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::string mutated = tokenline::mutate_json(body, rng);
    if (!mutated.empty() && mutated.size() + 1 <= max_size) {
      std::memcpy(data + 1, mutated.data(), mutated.size());
      return mutated.size() + 1;
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  static Server server;
  if (size == 0) return 0;
  const Route& route = kRoutes[data[0] % kRouteCount];
  const bool guarded = (data[0] / kRouteCount) % 2 == 1;
  HttpRequest req{.method = route.method,
                  .target = route.target,
                  .headers = {{"authorization", (data[0] & 0x80) != 0 ? "Bearer key" : "Bearer nope"}},
                  .body = fuzz::text_of(data + 1, size - 1)};
  StillThere exchange;
  const HttpResponse reply = (guarded ? server.guarded : server.open).handle(req, exchange);
  server.hub.abandon_pending();  // what the loop's end does: nothing stays open between inputs
  switch (reply.status) {
    case 200:
    case 204:
    case 400:
    case 401:
    case 404:
    case 405:
    case 503:
      break;
    default:
      std::abort();  // 500: an exception escaped; anything else is undocumented
  }
  if (reply.content_type == "application/json") require_json(reply.body);
  const bool completion = route.method == std::string("POST") &&
                          std::string(route.target).find("completions") != std::string::npos;
  if (completion) {
    const Endpoint endpoint =
        std::string(route.target) == "/v1/chat/completions" ? Endpoint::kChat : Endpoint::kCompletions;
    const auto parsed = parse_completion_request(endpoint, req.body, server.tokenizer, server.model);
    if (const auto* r = std::get_if<CompletionRequest>(&parsed))
      build_replies(*r, req.body, server.tokenizer);
  }
  return 0;
}
