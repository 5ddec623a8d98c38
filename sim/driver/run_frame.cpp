#include "sim/driver/run_frame.h"

#include <stdexcept>
#include <utility>

#include "common/input_error.h"

namespace tokenline {

RunFrame::RunFrame(const SimConfig& config, ArrivalSource& source, double hbm_bw, Feeder::Dispatch dispatch)
    : config_(config),
      source_(source),
      recorder_(config.output, config.slo, config.instance_count()),
      feeder_(source, ClientLoop{.concurrency = config.feed.concurrency, .warmup = config.feed.warmup()},
              std::move(dispatch),
              RequestLatency{.mean_s = config.feed.request_latency_s, .seed = config.seed}),
      wall_start_(std::chrono::steady_clock::now()) {
  recorder_.set_warmup_requests(config.feed.warmup());
  recorder_.set_first_token_latency(config.feed.first_token_latency_s);
  if (config.backend == Backend::kSimgrid) {
    platform_ = sg::load_platform(config.cluster_source, hbm_bw);
    link_meter_ = std::make_unique<LinkMeter>(*platform_, kLinkWindowS);
  }
}

std::unique_ptr<sg::SimEngine> RunFrame::engine(std::function<void()> fed) {
  auto engine = platform_ ? std::make_unique<sg::SimEngine>(*platform_) : std::make_unique<sg::SimEngine>();
  engine->add_actor("feeder", [this, fed = std::move(fed)] {
    feeder_.run();
    fed();
  });
  return engine;
}

SimResult RunFrame::run(sg::SimEngine& engine, const std::string& backend_name, FleetLog* fleet,
                        FleetLog* decode_fleet) {
  const bool ok = engine.run();
  if (feeder_.input_error()) throw *feeder_.input_error();
  if (!ok && engine.horizon_passed()) throw InputError("simulation stopped: " + engine.error());
  if (!ok) throw std::runtime_error("simulation failed: " + engine.error());
  return finish_simulation(config_, recorder_,
                           {.backend_name = backend_name,
                            .skipped_lines = source_.skipped_lines(),
                            .wall_start = wall_start_,
                            .links = link_meter_.get(),
                            .fleet = fleet,
                            .decode_fleet = decode_fleet});
}

}  // namespace tokenline
