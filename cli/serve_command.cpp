// `tokenline serve`: the real engine behind an OpenAI-compatible HTTP endpoint (engine/runtime/
// openai_handler.h: completions, chat completions, SSE streaming, models, health, Prometheus metrics).
// Each request joins the same Instance plan/commit loop as `tokenline run` at its wall-clock arrival
// (continuous batching, chunked prefill, the radix prefix cache on the prompt's tokens). A client that goes
// away has its request aborted in the core. On SIGINT/SIGTERM, or after --max-requests requests have left
// the engine, it drains: /health answers 503, new completions 503, admitted ones finish (at most
// --shutdown-timeout seconds, then they are aborted; a second signal aborts at once), and it writes
// metrics.json, requests.csv and trace.json (mode "serve"; aborted requests are `cancelled`).
#include <pthread.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>

#include "cli/command.h"
#include "cli/engine_job.h"
#include "common/input_error.h"
#include "common/input_limits.h"
#include "engine/runtime/clock.h"
#include "serve/bpe_tokenizer.h"
#include "serve/byte_tokenizer.h"
#include "serve/completion_hub.h"
#include "serve/http_server.h"
#include "serve/openai_handler.h"
#include "serve/serve_metrics.h"
#include "serve/utf8.h"
#include "traces/output_file.h"

namespace tokenline::cli {
namespace {

// Serving defaults from engine practice (README "tokenline serve"): a step's token budget bounds how long
// one prompt's prefill stalls the running decodes. vLLM's API server on H100-class GPUs uses 8192 tokens
// and 1024 sequences; the CPU engine prefills glm-5.3-tiny at ~1.7 ms/token (issue 15: 4096 tokens in
// 7.1 s), so 512 tokens bound a stall to ~0.9 s, and 256 running requests keep a decode step's attention
// over their pages within a few tens of ms.
constexpr int64_t kCpuChunkTokens = 512;
constexpr int32_t kCpuMaxRunning = 256;
constexpr int64_t kGpuChunkTokens = 8192;
constexpr int32_t kGpuMaxRunning = 1024;
constexpr int32_t kReservedWorkers = 8;  // workers kept free of completions: /health and /metrics answer
// --shutdown-timeout's ceiling: a day, far beyond any orchestrator's grace period (Kubernetes' default is
// 30 s), and far inside time_t.
constexpr double kMaxShutdownTimeoutS = 86400;
// --max-queued's default: choices waiting for the engine beyond which completions get 503. 4,096 is 16x
// the CPU engine's --max-running (4x the GPU default): minutes of work on the CPU engine.
constexpr int64_t kDefaultMaxQueued = 4096;

struct ServeJob {
  EngineJob engine;
  std::string host = "127.0.0.1";
  int32_t port = 8000;
  int64_t max_requests = 0;  // stop after this many requests left the engine (0: on a signal)
  std::string served_model_name;
  std::string tokenizer;  // tokenizer.json; empty: the byte tokenizer
  std::string api_key;
  std::string cors;
  int64_t max_queued = kDefaultMaxQueued;
  int64_t max_request_choices = kDefaultMaxRequestChoices;
  int64_t max_request_tokens = kDefaultMaxRequestTokens;
  int32_t http_workers = 256;      // 200 concurrent clients + the reserve, with headroom
  double shutdown_timeout_s = 30;  // Kubernetes' default terminationGracePeriodSeconds
};

// Records the loop's events, feeds the hub and the metrics, and closes the feed after max_requests.
class ServeObserver final : public RecorderObserver {
 public:
  ServeObserver(Recorder& recorder, const ModelRunner& runner, Instance& instance, CompletionHub& hub,
                ServeMetrics& metrics, LiveFeed& feed, int64_t max_requests)
      : RecorderObserver(recorder),
        runner_(runner),
        instance_(instance),
        hub_(hub),
        metrics_(metrics),
        feed_(feed),
        max_requests_(max_requests) {}
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override {
    RecorderObserver::on_step(plan, outcome, start_s, counters);
    hub_.after_step(plan, runner_, instance_, start_s + outcome.duration_s);
    metrics_.on_step(instance_.counters());  // after the hub's aborts: their pages are free
  }
  void on_record(const RequestRecord& record) override {
    RecorderObserver::on_record(record);
    hub_.on_record(record);
    if (max_requests_ > 0 && ++left_ >= max_requests_) feed_.close();
  }

 private:
  const ModelRunner& runner_;
  Instance& instance_;
  CompletionHub& hub_;
  ServeMetrics& metrics_;
  LiveFeed& feed_;
  int64_t max_requests_;
  int64_t left_ = 0;
};

// SIGINT and SIGTERM, blocked in this thread and so in every thread started after it (the kernels' pools,
// the HTTP workers): only drain_on_signal's thread receives them.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The first signal drains (health 503, no new requests, the feed closed); the shutdown timeout or a second
// signal aborts what is left.
void drain_on_signal(sigset_t signals, LiveFeed& feed, OpenAiHandler& handler, CompletionHub& hub,
                     double timeout_s) {
  std::thread([signals, &feed, &handler, &hub, timeout_s] {
    int received = 0;
    sigwait(&signals, &received);
    std::fprintf(stderr, "tokenline serve: signal %d: draining (%lld requests left, at most %.0f s)\n",
                 received, static_cast<long long>(hub.live()), timeout_s);
    handler.set_draining();
    feed.close();
    timespec wait{};
    wait.tv_sec = static_cast<time_t>(timeout_s);
    wait.tv_nsec = static_cast<long>((timeout_s - static_cast<double>(wait.tv_sec)) * 1e9);
    const bool bounded = timeout_s > 0;
    const int second = bounded ? sigtimedwait(&signals, nullptr, &wait) : sigwaitinfo(&signals, nullptr);
    std::fprintf(stderr, "tokenline serve: %s: aborting %lld requests\n",
                 second > 0 ? "second signal" : "shutdown timeout", static_cast<long long>(hub.live()));
    hub.cancel_all();
  }).detach();
}

std::unique_ptr<Tokenizer> make_tokenizer(const ServeJob& job, const ModelShape& shape) {
  std::unique_ptr<Tokenizer> tok;
  if (job.tokenizer.empty()) {
    tok = std::make_unique<ByteTokenizer>();
  } else {
    tok = std::make_unique<BpeTokenizer>(BpeTokenizer::load(job.tokenizer));
  }
  if (tok->vocab_size() > shape.vocab)
    throw InputError("--tokenizer",
                     "a vocabulary of at most the model's " + std::to_string(shape.vocab) + " ids",
                     std::to_string(tok->vocab_size()) + " ids");
  return tok;
}

// Text that reaches JSON replies or HTTP headers: UTF-8, and no control characters (a header line ends
// at CR or LF).
void require_text(const char* flag, const std::string& text) {
  if (!is_valid_utf8(text))
    throw InputError(flag, "UTF-8 text",
                     "invalid UTF-8 at byte " + std::to_string(utf8_invalid_offset(text)));
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      throw InputError(flag, "text without control characters", "'" + text + "'");
}

void validate(const ServeJob& job) {
  if (job.port < 0 || job.port > 65535) throw InputError("--port", "0..65535", std::to_string(job.port));
  if (job.max_requests < 0) throw InputError("--max-requests", "0 or more", std::to_string(job.max_requests));
  if (job.max_queued < 0) throw InputError("--max-queued", "0 or more", std::to_string(job.max_queued));
  if (job.max_request_choices < 1 || job.max_request_choices > int64_t{1} << 20)
    throw InputError("--max-request-choices", "1..1048576", std::to_string(job.max_request_choices));
  if (job.max_request_tokens < 1 || job.max_request_tokens > limits::kMaxRequestTokens)
    throw InputError("--max-request-tokens", "1.." + std::to_string(limits::kMaxRequestTokens),
                     std::to_string(job.max_request_tokens));
  if (job.http_workers <= kReservedWorkers || job.http_workers > kMaxHttpWorkers)
    throw InputError("--http-workers",
                     std::to_string(kReservedWorkers + 1) + ".." + std::to_string(kMaxHttpWorkers),
                     std::to_string(job.http_workers));
  if (!std::isfinite(job.shutdown_timeout_s) || job.shutdown_timeout_s < 0 ||
      job.shutdown_timeout_s > kMaxShutdownTimeoutS)
    throw InputError("--shutdown-timeout",
                     "0.." + std::to_string(static_cast<int64_t>(kMaxShutdownTimeoutS)) + " seconds",
                     std::to_string(job.shutdown_timeout_s));
  require_text("--served-model-name", job.served_model_name);
  require_text("--api-key", job.api_key);
  require_text("--cors", job.cors);
}

// Every connection is a file: the soft open-file limit (often 1,024) is raised to the hard one, so the
// server's connection cap (http_server.h) is not a low default.
void raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

ServeOptions serve_options(const ServeJob& job, const EngineSetup& setup) {
  ServeOptions o;
  o.model = ServedModel{.name = job.served_model_name.empty() ? job.engine.model : job.served_model_name,
                        .max_context_tokens = setup.instance.scheduler.max_context_tokens,
                        .vocab = setup.shape.vocab,
                        .mtp = job.engine.mtp_drafts > 0,
                        .max_request_choices = job.max_request_choices,
                        .max_request_tokens = job.max_request_tokens};
  o.api_key = job.api_key;
  o.cors_origin = job.cors;
  o.max_queued = job.max_queued;
  o.engine_slots = job.http_workers - kReservedWorkers;
  o.seed = job.engine.seed;
  return o;
}

int serve_job(const ServeJob& job) {
  validate(job);
  const sigset_t stop_signals = block_stop_signals();
  EngineSetup setup = prepare_engine(job.engine);
  // Flags judged: only now is --out touched. A failure from here on leaves no earlier run's outputs beside
  // it.
  retire_previous_outputs(job.engine.out);
  // The seed's solo rule runs a long prefill alone, every decode waiting for its whole prompt: a serving
  // engine (vLLM) mixes each chunk with the running decodes instead, so one prompt stalls them one chunk.
  setup.instance.scheduler.solo_prefill_ratio = 0;
  const std::unique_ptr<Tokenizer> tokenizer = make_tokenizer(job, setup.shape);
  RealEngine engine(job.engine, setup);
  LiveFeed feed(engine.clock);
  const ServeOptions options = serve_options(job, setup);
  ServeMetrics metrics(options.model.name);
  metrics.on_step(engine.instance.counters());
  CompletionHub hub(*tokenizer, metrics);
  if (job.engine.mtp_drafts == 0) engine.runner.set_token_chooser(&hub);
  OpenAiHandler handler(feed, hub, metrics, *tokenizer, options);
  drain_on_signal(stop_signals, feed, handler, hub, job.shutdown_timeout_s);
  ServeObserver observer(engine.recorder, engine.runner, engine.instance, hub, metrics, feed,
                         job.max_requests);
  raise_open_file_limit();
  std::unique_ptr<HttpServer> started;
  try {
    started = std::make_unique<HttpServer>(
        HttpServerConfig{.host = job.host,
                         .port = job.port,
                         .workers = job.http_workers,
                         .reserved_workers = kReservedWorkers},
        [&handler](const HttpRequest& r, HttpExchange& x) { return handler.handle(r, x); });
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const InputError*>(&e) != nullptr) throw;
    std::fprintf(stderr, "tokenline serve: %s\n", e.what());
    return 1;
  }
  HttpServer& server = *started;
  handler.set_http_stats([&server] { return server.stats(); });
  std::fprintf(stderr,
               "tokenline serve: listening on http://%s:%d (model %s; /v1/completions, "
               "/v1/chat/completions, /v1/models, /health, /metrics)\n",
               server.address().find(':') != std::string::npos ? ("[" + server.address() + "]").c_str()
                                                               : server.address().c_str(),
               server.port(), options.model.name.c_str());
  std::fflush(stderr);
  const EngineLoopResult result =
      run_engine_loop(engine.instance, engine.runner, engine.clock, feed, job.engine.seed, observer);
  handler.set_draining();
  feed.close();
  hub.abandon_pending();
  server.stop();
  engine.runner.set_token_chooser(nullptr);

  RunInfo info = engine_run_info(job.engine, setup, "serve");
  info.workload = "http";
  info.wall_s = engine.clock.now_s();
  return finish_engine(engine, info, result, "serve", job.engine.out);
}

void add_serve_options(CLI::App& cmd, ServeJob& job) {
  cmd.add_option("--host", job.host, "address or name to listen on")->capture_default_str();
  cmd.add_option("--port", job.port, "port (0: any free port, printed on stderr)")->capture_default_str();
  cmd.add_option("--max-requests", job.max_requests, "stop after N requests left the engine (0: on SIGINT)")
      ->capture_default_str();
  cmd.add_option("--served-model-name", job.served_model_name,
                 "the model name clients use (default: --model)");
  cmd.add_option("--tokenizer", job.tokenizer, "a Hugging Face tokenizer.json (default: one token per byte)");
  cmd.add_option("--api-key", job.api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  cmd.add_option("--cors", job.cors, "allow browser clients from this origin ('*': any)");
  cmd.add_option(
         "--max-queued", job.max_queued,
         "503 beyond this many choices waiting for the engine; a request with more is a 400 (0: no cap)")
      ->capture_default_str();
  cmd.add_option("--max-request-choices", job.max_request_choices,
                 "400 for a request with more choices (prompts x n)")
      ->capture_default_str();
  cmd.add_option("--max-request-tokens", job.max_request_tokens,
                 "400 for a request asking more tokens (prompt + max_tokens, summed over its choices)")
      ->capture_default_str();
  cmd.add_option("--http-workers", job.http_workers,
                 "HTTP worker threads, 9..4096 (8 kept for /health, /metrics, /v1/models)")
      ->capture_default_str();
  cmd.add_option("--shutdown-timeout", job.shutdown_timeout_s,
                 "seconds (at most 86400) to finish admitted requests after a signal, then abort them "
                 "(0: no limit)")
      ->capture_default_str();
}

void add_serve(CLI::App& app) {
  auto job = std::make_shared<ServeJob>();
  job->engine.chunk_tokens = kCpuChunkTokens;
  job->engine.max_running = kCpuMaxRunning;
  CLI::App* cmd =
      app.add_subcommand("serve", "serve OpenAI-compatible completions over HTTP on the real engine");
  add_engine_options(*cmd, job->engine);
  add_serve_options(*cmd, *job);
  cmd->callback([job, cmd] {
    if (job->engine.backend != "cpu") {  // a GPU engine: vLLM's API-server defaults, unless given
      if (cmd->get_option("--chunk")->count() == 0) job->engine.chunk_tokens = kGpuChunkTokens;
      if (cmd->get_option("--max-running")->count() == 0) job->engine.max_running = kGpuMaxRunning;
    }
    const int rc = serve_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("serve", add_serve);

}  // namespace
}  // namespace tokenline::cli
