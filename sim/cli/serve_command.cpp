// `tokenline serve`: the real engine behind an HTTP endpoint. Clients POST /v1/completions
// ({"prompt": text, "max_tokens": n}, OpenAI's completions shape); each request joins the same
// Instance plan/commit loop as `tokenline run` at its wall-clock arrival (continuous batching, chunked
// prefill, the radix prefix cache on the prompt's byte tokens) and the reply carries the greedy
// completion. On SIGINT/SIGTERM, or after --max-requests requests have left the engine, it stops taking
// requests, finishes those admitted and writes metrics.json, requests.csv and trace.json (mode "serve").
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/input_error.h"
#include "engine/runtime/byte_tokenizer.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/http_server.h"
#include "sim/cli/command.h"
#include "sim/cli/engine_job.h"

namespace tokenline::cli {
namespace {

using json = nlohmann::json;

constexpr int64_t kDefaultMaxTokens = 16;  // OpenAI's completions default

struct ServeJob {
  EngineJob engine;
  std::string host = "127.0.0.1";
  int32_t port = 8000;
  int64_t max_requests = 0;  // stop after this many requests left the engine (0: on a signal)
};

struct Outcome {
  RequestRecord record;
  std::vector<int32_t> generated;
};

HttpResponse error_reply(int status, const std::string& message) {
  const json body = {{"error", {{"message", message}, {"type", "invalid_request_error"}}}};
  return HttpResponse{status, "application/json", body.dump() + "\n"};
}

// Requests between the HTTP threads (handle) and the engine loop's thread (finished).
class Completions {
 public:
  Completions(LiveFeed& feed, const ModelShape& shape) : feed_(feed), shape_(shape) {}

  HttpResponse handle(const HttpRequest& req) {
    if (req.target == "/health" && req.method == "GET")
      return HttpResponse{200, "application/json", "{\"status\":\"ok\"}\n"};
    if (req.target != "/v1/completions") return error_reply(404, "no such endpoint: " + req.target);
    if (req.method != "POST") return error_reply(405, "POST /v1/completions");
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.contains("prompt") || !body["prompt"].is_string() ||
        body["prompt"].get<std::string>().empty()) {
      return error_reply(400, "expected a JSON object with a non-empty string \"prompt\"");
    }
    const json max_tokens = body.value("max_tokens", json(kDefaultMaxTokens));
    if (!max_tokens.is_number_integer() || max_tokens.get<int64_t>() < 1)
      return error_reply(400, "expected \"max_tokens\" to be an integer >= 1, found " + max_tokens.dump());
    return complete(body["prompt"].get<std::string>(), max_tokens.get<int64_t>());
  }

  // After the engine loop: requests it never scheduled (it stops when nothing more can be planned) get a
  // reply too, so that no connection waits forever.
  void abandon_pending() {
    std::map<RequestId, std::promise<Outcome>> left;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      left.swap(pending_);
    }
    for (auto& [id, promise] : left) {
      Outcome never;
      never.record.id = id;  // status stays kWaiting
      promise.set_value(std::move(never));
    }
  }

  // Engine thread: a request left the engine (finished or rejected) with these tokens.
  void finished(const RequestRecord& record, const std::vector<int32_t>* tokens) {
    std::promise<Outcome> promise;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto it = pending_.find(record.id);
      if (it == pending_.end()) return;
      promise = std::move(it->second);
      pending_.erase(it);
    }
    Outcome outcome{record, {}};
    if (tokens != nullptr && static_cast<int64_t>(tokens->size()) > record.prompt_tokens)
      outcome.generated.assign(tokens->begin() + record.prompt_tokens, tokens->end());
    promise.set_value(std::move(outcome));
  }

 private:
  HttpResponse complete(const std::string& prompt, int64_t max_tokens) {
    RequestSpec spec;
    spec.id = next_id_++;
    spec.token_ids = ByteTokenizer().encode(prompt, true);
    spec.prompt_tokens = static_cast<int64_t>(spec.token_ids.size());
    spec.output_tokens = max_tokens;
    std::future<Outcome> done;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done = pending_[spec.id].get_future();
    }
    const RequestId id = spec.id;
    if (!feed_.push(std::move(spec))) {
      const std::lock_guard<std::mutex> lock(mutex_);
      pending_.erase(id);
      return error_reply(503, "the server is shutting down");
    }
    const Outcome out = done.get();
    if (out.record.status == RequestStatus::kWaiting)
      return error_reply(503, "the engine stopped before scheduling this request");
    if (out.record.status != RequestStatus::kFinished)
      return error_reply(400, "rejected: " + std::string(to_string(out.record.reject_reason)));
    const auto completion = static_cast<int64_t>(out.generated.size());
    const json reply = {{"id", "cmpl-" + std::to_string(id)},
                        {"object", "text_completion"},
                        {"model", shape_.name},
                        {"choices",
                         {{{"index", 0},
                           {"text", ByteTokenizer().decode(out.generated)},
                           {"token_ids", out.generated},
                           {"finish_reason", "length"}}}},
                        {"usage",
                         {{"prompt_tokens", out.record.prompt_tokens},
                          {"completion_tokens", completion},
                          {"total_tokens", out.record.prompt_tokens + completion},
                          {"cached_tokens", out.record.cached_tokens}}}};
    // Random weights emit arbitrary bytes: invalid UTF-8 is replaced (U+FFFD), token_ids stay exact.
    return HttpResponse{200, "application/json",
                        reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"};
  }

  LiveFeed& feed_;
  const ModelShape& shape_;
  std::mutex mutex_;
  std::map<RequestId, std::promise<Outcome>> pending_;
  std::atomic<RequestId> next_id_{0};
};

// Records the loop's events, answers the clients, and closes the feed after max_requests.
class ServeObserver final : public RecorderObserver {
 public:
  ServeObserver(Recorder& recorder, const ModelRunner& runner, Completions& completions, LiveFeed& feed,
                int64_t max_requests)
      : RecorderObserver(recorder),
        runner_(runner),
        completions_(completions),
        feed_(feed),
        max_requests_(max_requests) {}
  void on_record(const RequestRecord& record) override {
    RecorderObserver::on_record(record);
    completions_.finished(record, runner_.tokens(record.id));
    if (max_requests_ > 0 && ++left_ >= max_requests_) feed_.close();
  }

 private:
  const ModelRunner& runner_;
  Completions& completions_;
  LiveFeed& feed_;
  int64_t max_requests_;
  int64_t left_ = 0;
};

// SIGINT and SIGTERM are blocked in every thread started after this; one thread waits for them and
// closes the feed, so the loop drains and the outputs are written.
void close_feed_on_signal(LiveFeed& feed) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals, &feed] {
    int received = 0;
    sigwait(&signals, &received);
    std::fprintf(stderr, "tokenline serve: signal %d: finishing the admitted requests\n", received);
    feed.close();
  }).detach();
}

int serve_job(const ServeJob& job) {
  const EngineSetup setup = prepare_engine(job.engine);
  if (job.port < 0 || job.port > 65535) throw InputError("--port", "0..65535", std::to_string(job.port));
  if (job.max_requests < 0) throw InputError("--max-requests", "0 or more", std::to_string(job.max_requests));
  SteadyClock clock;
  LiveFeed feed(clock);
  close_feed_on_signal(feed);
  ModelRunner runner(setup.shape, engine_weights(job.engine, setup.shape), setup.runner, clock);
  Instance instance(setup.instance);
  Recorder recorder(setup.recorder);
  recorder.describe_instance(0, setup.recorder.parallel_name, setup.parallel.dp_attention,
                             job.engine.kv_pages);
  Completions completions(feed, setup.shape);
  ServeObserver observer(recorder, runner, completions, feed, job.max_requests);
  HttpServer server(job.host, job.port,
                    [&completions](const HttpRequest& r) { return completions.handle(r); });
  std::fprintf(stderr, "tokenline serve: listening on http://%s:%d (POST /v1/completions, GET /health)\n",
               job.host.c_str(), server.port());
  std::fflush(stderr);
  const EngineLoopResult result = run_engine_loop(instance, runner, clock, feed, job.engine.seed, observer);
  feed.close();
  completions.abandon_pending();
  server.stop();

  RunInfo info = engine_run_info(job.engine, setup, "serve");
  info.workload = "http";
  info.simulated_s = result.end_s;
  info.wall_s = clock.now_s();
  std::string why;
  if (!recorder.finish(info, &why)) {
    std::fprintf(stderr, "tokenline serve: %s\n", why.c_str());
    return 1;
  }
  print_engine_summary("serve", recorder.metrics(), result, job.engine.out);
  return 0;
}

void add_serve(CLI::App& app) {
  auto job = std::make_shared<ServeJob>();
  CLI::App* cmd = app.add_subcommand("serve", "serve completions over HTTP on the real engine");
  add_engine_options(*cmd, job->engine);
  cmd->add_option("--host", job->host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", job->port, "port (0: any free port, printed on stderr)")->capture_default_str();
  cmd->add_option("--max-requests", job->max_requests, "stop after N requests left the engine (0: on SIGINT)")
      ->capture_default_str();
  cmd->callback([job] {
    const int rc = serve_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("serve", add_serve);

}  // namespace
}  // namespace tokenline::cli
