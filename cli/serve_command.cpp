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
#include <thread>

#include "cli/command.h"
#include "cli/engine_job.h"
#include "common/input_error.h"
#include "engine/runtime/byte_tokenizer.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/http_server.h"
#include "engine/runtime/openai_handler.h"

namespace tokenline::cli {
namespace {

struct ServeJob {
  EngineJob engine;
  std::string host = "127.0.0.1";
  int32_t port = 8000;
  int64_t max_requests = 0;  // stop after this many requests left the engine (0: on a signal)
};

// Records the loop's events, answers the clients, and closes the feed after max_requests.
class ServeObserver final : public RecorderObserver {
 public:
  ServeObserver(Recorder& recorder, const ModelRunner& runner, OpenAiHandler& completions, LiveFeed& feed,
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
  OpenAiHandler& completions_;
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
  Recorder recorder(setup.output, setup.slo, 1);
  recorder.describe_instance(0, setup.parallel.name(), setup.parallel.dp_attention, job.engine.kv_pages);
  OpenAiHandler completions(feed, setup.shape);
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
