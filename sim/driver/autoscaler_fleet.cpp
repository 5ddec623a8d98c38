#include "sim/driver/autoscaler_fleet.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kRoundTo = 1e9;  // as metrics.json: nanosecond / 1e-9 resolution
double rounded(double v) {
  return std::isfinite(v) ? std::round(v * kRoundTo) / kRoundTo : 0.0;
}

bool serving(SlotState s) {
  return s == SlotState::kLive || s == SlotState::kDraining;
}

}  // namespace

FleetLog::FleetLog(const AutoscaleConfig& config, std::vector<int32_t> gpus, bool slo_enabled)
    : config_(config), slo_enabled_(slo_enabled) {
  for (const int32_t g : gpus) slots_.push_back(Slot{.gpus = g});
  syncs_.push_back(now_);
  changes_.push_back({0.0, 0, 0, 0});
}

void FleetLog::advance(double now_s) {
  const double dt = now_s - now_.time_s;
  if (dt <= 0) return;
  now_.waiting += static_cast<double>(waiting_) * dt;
  now_.in_instance += static_cast<double>(waiting_ + running_) * dt;
  now_.kv_used += static_cast<double>(kv_used_) * dt;
  now_.kv_pages += static_cast<double>(kv_pages_) * dt;
  now_.serving += static_cast<double>(serving_) * dt;
  gpu_s_ += static_cast<double>(up_gpus_) * dt;
  up_instance_s_ += static_cast<double>(up_) * dt;
  now_.time_s = now_s;
}

int32_t FleetLog::count(SlotState state) const {
  int32_t n = 0;
  for (const Slot& s : slots_) n += s.state == state ? 1 : 0;
  return n;
}

void FleetLog::note_counts(double now_s) {
  const ChangePoint c{now_s, count(SlotState::kLive), count(SlotState::kStarting),
                      count(SlotState::kDraining)};
  if (changes_.back().time_s == now_s) {
    changes_.back() = c;  // several changes at one instant: the last state stands
  } else {
    changes_.push_back(c);
  }
  peak_up_ = std::max(peak_up_, c.live + c.starting + c.draining);
}

void FleetLog::set_state(int32_t index, SlotState state, double now_s) {
  advance(now_s);
  Slot& s = slots_[static_cast<size_t>(index)];
  if (s.state == state) return;
  if (state == SlotState::kStarting) ++cold_starts_;
  if (state == SlotState::kDraining) ++drains_;
  if (s.state == SlotState::kStarting && state == SlotState::kOff) ++cancelled_starts_;
  serving_ += (serving(state) ? 1 : 0) - (serving(s.state) ? 1 : 0);
  up_gpus_ += (state != SlotState::kOff ? s.gpus : 0) - (s.state != SlotState::kOff ? s.gpus : 0);
  up_ += (state != SlotState::kOff ? 1 : 0) - (s.state != SlotState::kOff ? 1 : 0);
  s.state = state;
  if (state == SlotState::kOff) on_load(index, now_s, 0, 0, 0, 0);  // an instance that is gone holds nothing
  note_counts(now_s);
}

void FleetLog::on_load(int32_t index, double now_s, int64_t waiting, int64_t running, int64_t kv_used_pages,
                       int64_t kv_pages) {
  advance(now_s);
  Slot& s = slots_[static_cast<size_t>(index)];
  waiting_ += waiting - s.waiting;
  running_ += running - s.running;
  kv_used_ += kv_used_pages - s.kv_used;
  kv_pages_ += kv_pages - s.kv_pages;
  s.waiting = waiting;
  s.running = running;
  s.kv_used = kv_used_pages;
  s.kv_pages = kv_pages;
}

void FleetLog::on_drain_start(int32_t slot, double now_s, int64_t requests, int64_t used_pages,
                              int64_t cached_pages) {
  drain_log_.push_back({.slot = slot,
                        .start_s = now_s,
                        .requests = requests,
                        .used_pages = used_pages,
                        .cached_pages = cached_pages});
}

void FleetLog::on_drain_end(int32_t slot, double now_s, int64_t used_pages) {
  for (auto it = drain_log_.rbegin(); it != drain_log_.rend(); ++it) {
    if (it->slot != slot || it->end_s >= 0) continue;
    it->end_s = now_s;
    it->used_pages_at_end = used_pages;
    return;
  }
}

void FleetLog::on_finished(double finish_s, bool good) {
  ++now_.finished;
  now_.good += good ? 1 : 0;
  const auto w = static_cast<size_t>(std::max(0.0, finish_s) / config_.window_s);
  if (windows_.size() <= w) windows_.resize(w + 1);
  ++windows_[w].finished;
  windows_[w].good += good ? 1 : 0;
}

std::optional<double> FleetLog::sync(double now_s) {
  advance(now_s);
  syncs_.push_back(now_);
  while (syncs_.size() > static_cast<size_t>(config_.window_ticks()) + 1) syncs_.pop_front();
  const Integrals& a = syncs_.front();
  const Integrals& b = syncs_.back();
  const double serving_s = b.serving - a.serving;
  switch (config_.metric) {
    case ScaleMetric::kQueue:
      return serving_s > 0 ? std::optional<double>((b.waiting - a.waiting) / serving_s) : std::nullopt;
    case ScaleMetric::kConcurrency:
      return serving_s > 0 ? std::optional<double>((b.in_instance - a.in_instance) / serving_s)
                           : std::nullopt;
    case ScaleMetric::kKv: {
      const double held = b.kv_pages - a.kv_pages;
      return held > 0 ? std::optional<double>((b.kv_used - a.kv_used) / held) : std::nullopt;
    }
    case ScaleMetric::kSlo: {
      const int64_t finished = b.finished - a.finished;
      if (finished == 0) return std::nullopt;
      return static_cast<double>(finished - (b.good - a.good)) / static_cast<double>(finished);
    }
  }
  return std::nullopt;
}

void FleetLog::on_decision(double now_s, int32_t current, int32_t desired, std::optional<double> metric) {
  if (desired != current) decisions_.push_back({now_s, current, desired, metric});
}

void FleetLog::close(double end_s) {
  advance(end_s);
  end_s_ = end_s;
}

std::string FleetLog::json() const {
  Json policy = {{"metric", std::string(to_string(config_.metric))},
                 {"target", rounded(config_.target)},
                 {"min_instances", config_.min_instances},
                 {"max_instances", config_.max_instances},
                 {"initial_instances", config_.initial_instances},
                 {"interval_s", rounded(config_.interval_s)},
                 {"window_s", rounded(config_.window_s)},
                 {"tolerance", rounded(config_.tolerance)},
                 {"scale_up_stabilization_s", rounded(config_.scale_up_stabilization_s)},
                 {"scale_down_stabilization_s", rounded(config_.scale_down_stabilization_s)},
                 {"weights_load_s", rounded(config_.weights_load_s)},
                 {"engine_start_s", rounded(config_.engine_start_s)},
                 {"cold_start_s", rounded(config_.cold_start_s())}};
  Json changes = Json::array();
  for (const ChangePoint& c : changes_)
    changes.push_back(
        {{"t_s", rounded(c.time_s)}, {"live", c.live}, {"starting", c.starting}, {"draining", c.draining}});
  Json decisions = Json::array();
  for (const Decision& d : decisions_) {
    Json row = {{"t_s", rounded(d.time_s)}, {"from", d.from}, {"to", d.to}};
    row["metric"] = d.metric ? Json(rounded(*d.metric)) : Json(nullptr);
    decisions.push_back(std::move(row));
  }
  Json windows = Json::array();
  for (size_t i = 0; i < windows_.size(); ++i) {
    const Window& w = windows_[i];
    Json row = {{"start_s", rounded(static_cast<double>(i) * config_.window_s)}, {"finished", w.finished}};
    if (slo_enabled_) {
      row["good"] = w.good;
      row["slo_attainment"] =
          w.finished > 0 ? rounded(static_cast<double>(w.good) / static_cast<double>(w.finished)) : 1.0;
    }
    windows.push_back(std::move(row));
  }
  Json drains = Json::array();
  for (const Drain& d : drain_log_) {
    Json row = {{"slot", d.slot},
                {"start_s", rounded(d.start_s)},
                {"requests_at_start", d.requests},
                {"used_pages_at_start", d.used_pages},
                {"cached_pages_at_start", d.cached_pages}};
    row["end_s"] = d.end_s >= 0 ? Json(rounded(d.end_s)) : Json(nullptr);  // null: still draining at the end
    row["used_pages_at_end"] = d.used_pages_at_end;
    drains.push_back(std::move(row));
  }
  int64_t ups = 0, downs = 0;
  for (const Decision& d : decisions_) (d.to > d.from ? ups : downs) += 1;
  Json j = {{"policy", policy},
            {"scale_ups", ups},
            {"scale_downs", downs},
            {"cold_starts", cold_starts_},
            {"cancelled_starts", cancelled_starts_},
            {"drains", drains_},
            {"instances_peak", peak_up_},
            {"instances_mean", end_s_ > 0 ? rounded(up_instance_s_ / end_s_) : 0.0},
            {"gpu_hours", rounded(gpu_hours())},
            {"instances_over_time", changes},
            {"decisions", decisions},
            {"slo_windows", windows},
            {"drain_log", drains}};
  return j.dump();
}

std::string pd_fleet_json(const FleetLog& prefill, const FleetLog& decode) {
  const Json p = Json::parse(prefill.json());
  const Json d = Json::parse(decode.json());
  Json j = {{"prefill", p}, {"decode", d}};
  for (const char* key : {"scale_ups", "scale_downs", "cold_starts", "cancelled_starts", "drains"})
    j[key] = p[key].get<int64_t>() + d[key].get<int64_t>();
  j["instances_mean"] = rounded(p["instances_mean"].get<double>() + d["instances_mean"].get<double>());
  j["gpu_hours"] = rounded(prefill.gpu_hours() + decode.gpu_hours());
  return j.dump();
}

}  // namespace tokenline
