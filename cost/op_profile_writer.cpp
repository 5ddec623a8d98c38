// write_own_profile: an own profile's three files. profile.json's keys and ops.csv's rows depend only on
// the grid; numbers are printed with a fixed format so a re-run differs only where the measurements do.
#include "cost/op_profile_writer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/input_error.h"

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kJsonIndent = 2;

// A figure with where it came from (the hardware and timing formats require one); the hardware format
// has no unit field (units are in the key names and topologies/hardware/*.json).
Json sourced(double value, const std::string& unit, const std::string& source) {
  return Json{{"value", value}, {"unit", unit}, {"source", source}};
}

Json hw_value(double value, const std::string& source) {
  return Json{{"value", value}, {"source", source}};
}

Json factor(double value, const std::string& why) {
  return Json{{"value", value}, {"source", "tokenline profile"}, {"why", why}};
}

Json hardware_json(const OwnProfileInfo& info, const OwnHardware& hw) {
  const std::string measured = "measured by tokenline profile on " + info.machine;
  const std::string flops = measured + ": the " + info.backend + " GEMM (FP32 math) on a large product";
  const std::string copy = measured + ": a large host copy";
  const std::string coll = measured + ": in-process all-reduce";
  const std::string unused =
      "not used when every op is priced from the profile's ops table; the rank's collectives are in it";
  Json j;
  j["name"] = info.hardware;
  j["description"] = "the machine `tokenline profile --backend " + info.backend + "` measured (" +
                     info.machine + "); rates are measured, so its roofline is this machine's";
  j["peak_flops"] = {{"fp8", hw_value(hw.gemm_flops, flops + " (every dtype runs as FP32)")},
                     {"bf16", hw_value(hw.gemm_flops, flops)},
                     {"fp32", hw_value(hw.gemm_flops, flops)},
                     {"nvfp4", hw_value(0, "no FP4 path: falls back to fp8")}};
  j["hbm"] = {
      {"bytes", hw_value(hw.memory_bytes, measured + ": physical memory")},
      {"bw", hw_value(hw.memory_bw, copy)},
      {"usable_fraction", hw_value(1, "the engine sizes KV by --kv-pages, not by a memory fraction")}};
  j["nvlink"] = {{"bw_per_direction", hw_value(hw.collective_bw, coll)},
                 {"ring_bw", hw_value(hw.collective_bw, coll)},
                 {"latency_s", hw_value(hw.collective_latency_s, coll + " of a small message")}};
  j["ib"] = {{"nics_per_gpu", hw_value(1, unused)},
             {"bw_per_direction", hw_value(hw.collective_bw, unused)},
             {"seed_bw", hw_value(hw.collective_bw, unused)},
             {"latency_s", hw_value(hw.collective_latency_s, unused)}};
  j["node"] = {{"gpus_per_node", hw_value(8, "ranks are threads of one process: one domain")}};
  j["overheads"] = {{"collective_launch_s", hw_value(hw.collective_latency_s, coll + " of a small message")},
                    {"kernel_launch_s", hw_value(0, "host kernels are function calls; in the ops' times")}};
  const std::string rates = "the peaks above are measured rates";
  j["efficiency"] = {{"gemm", factor(1, rates)},
                     {"attention", factor(1, rates)},
                     {"hbm", factor(1, rates)},
                     {"nvlink", factor(1, rates)},
                     {"ib", factor(1, rates)}};
  return j;
}

Json profile_json(const OwnProfileInfo& info) {
  Json j;
  j["name"] = info.name;
  j["hardware"] = info.hardware;
  j["engine_name"] = "tokenline";
  j["description"] =
      "tokenline's own engine (" + info.backend + " kernels) measured op by op by `tokenline profile`";
  j["measured_on"] = {{"model", info.model}, {"parallel", info.parallel}};
  j["metadata"] = {{"backend", info.backend}, {"machine", info.machine}, {"threads", info.threads},
                   {"date", info.date},       {"warmup", info.warmup},   {"repeats", info.repeats}};
  j["sources"] = {{"ops.csv",
                   "tokenline profile: ModelRunner steps of synthetic batches (every attention "
                   "group the same shape), per op the first rank's whole-step time, median of "
                   "the repeats (one pass over the grid each; the first after each point's warm-up)"}};
  j["tables"] = {{"ops", "ops.csv"}};
  j["timing"] = {
      {"step_cpu_overhead_s",
       sourced(info.step_overhead_s, "s",
               "tokenline profile: median step time minus its ops' times (batch building, rank threads); "
               "tokenline calibrate --trace fits what the run adds")},
      {"overlap_schedule",
       Json{{"value", 0}, {"unit", "bool"}, {"source", "the engine loop plans, then executes"}}},
      {"cuda_graph_max_bs", Json{{"value", 0}, {"unit", "requests"}, {"source", "no CUDA graphs"}}},
      {"eager_launch_gap_s",
       Json{{"value", 0}, {"unit", "s"}, {"source", "launches are inside the ops' times"}}},
      {"speed_probe_s",
       sourced(
           info.speed_probe_s, "s",
           "tokenline profile: the engine's speed probe (a decode of 4 x 64 keys and a 64-token prefill on "
           "the profiled runner, median of 7) before and after the measurement, mean; sim --speed-of RUN "
           "prices at a run's own probe over this")}};
  return j;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw InputError(path.string(), "a writable file", "a file that cannot be written");
}

}  // namespace

const char* own_row_phase(const OwnOpRow& row) {
  if (row.alone) return row.decode ? "decode-alone" : "prefill-alone";
  return row.decode ? "decode" : "prefill";
}

void sort_own_rows(std::vector<OwnOpRow>& rows, const std::vector<std::string>& op_order) {
  auto rank = [&](const std::string& op) {
    return std::find(op_order.begin(), op_order.end(), op) - op_order.begin();
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const OwnOpRow& a, const OwnOpRow& b) {
    return std::make_tuple(rank(a.op), a.alone, !a.decode, a.batch, a.tokens) <
           std::make_tuple(rank(b.op), b.alone, !b.decode, b.batch, b.tokens);
  });
}

std::string own_ops_csv(const std::vector<OwnOpRow>& rows) {
  std::string s = "op,phase,batch,tokens,latency_ms\n";
  char buf[64];
  for (const OwnOpRow& r : rows) {
    std::snprintf(buf, sizeof buf, "%.6f", r.latency_ms);  // ns resolution, as the engine's clock
    s += r.op + "," + own_row_phase(r) + "," + std::to_string(r.batch) + "," + std::to_string(r.tokens) +
         "," + buf + "\n";
  }
  return s;
}

void write_own_profile(const std::string& dir, const OwnProfileInfo& info, const OwnHardware& hw,
                       const std::vector<OwnOpRow>& rows) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError(dir, "a directory that can be created", ec.message());
  write_text(fs::path(dir) / "profile.json", profile_json(info).dump(kJsonIndent) + "\n");
  write_text(fs::path(dir) / "hardware.json", hardware_json(info, hw).dump(kJsonIndent) + "\n");
  write_text(fs::path(dir) / "ops.csv", own_ops_csv(rows));
}

}  // namespace tokenline
