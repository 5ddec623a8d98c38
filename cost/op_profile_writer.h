// Writing an own profile (`tokenline profile`): profile.json, ops.csv and hardware.json in the format of
// topologies/profiles/README.md, read back by load_op_profile / load_hardware. Keys are deterministic: the
// same grid gives the same files but for the measured numbers and the metadata block (date, machine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tokenline {

// One measured point: one ledger op's whole step on one rank.
struct OwnOpRow {
  std::string op;  // ledger op name ("a_proj", "dispatch", ...)
  bool decode = true;
  int64_t batch = 0;   // sequences
  int64_t tokens = 0;  // decode: keys each sequence's token attends to; prefill: new tokens per sequence
  double latency_ms = 0;
  // Only the first attention group ran the shape, the others idle (DP layouts): phase decode-alone or
  // prefill-alone. Else every group ran it.
  bool alone = false;
};

// What the profile says about where and how it was measured (metadata; only `name`, `model`, `parallel`,
// `hardware` and the timing figures reach the loader).
struct OwnProfileInfo {
  std::string name;      // the profile's name ("cpu-glm-5.3-tiny-tp1")
  std::string hardware;  // the name in hardware.json ("cpu-host")
  std::string backend;   // cpu | cuda
  std::string model;
  std::string parallel;  // canonical layout ("dp2-tp2-ep4")
  std::string machine;   // host name and CPU / GPU model
  int64_t threads = 0;   // worker threads the kernels used per rank
  std::string date;      // UTC, ISO 8601
  int64_t warmup = 0, repeats = 0;
  double step_overhead_s = 0;  // measured executor time per step outside the ops (median)
  double speed_probe_s = 0;    // the machine's speed probe around the measurement (mean of before and after)
};

// What hardware.json says about the profiled machine; every rate is measured by the profiler.
struct OwnHardware {
  double gemm_flops = 0;            // FLOP/s of the backend's GEMM on a large square product
  double memory_bw = 0;             // bytes/s of a large copy
  double memory_bytes = 0;          // the machine's (or device's) memory
  double collective_bw = 0;         // bytes/s of an in-process all-reduce of a large message, per rank
  double collective_latency_s = 0;  // one all-reduce of a small message
};

// The phase column's text of a row: decode, prefill, decode-alone or prefill-alone.
const char* own_row_phase(const OwnOpRow& row);

// Rows sorted into the file's order: ledger op order (as `op_order` lists names), every-group rows before
// alone rows, decode before prefill, then batch, then tokens.
void sort_own_rows(std::vector<OwnOpRow>& rows, const std::vector<std::string>& op_order);

// Writes DIR/profile.json, DIR/ops.csv and DIR/hardware.json (creating DIR). Throws InputError when DIR
// cannot be written.
void write_own_profile(const std::string& dir, const OwnProfileInfo& info, const OwnHardware& hw,
                       const std::vector<OwnOpRow>& rows);

// ops.csv's text for `rows` in their order (tests compare keys).
std::string own_ops_csv(const std::vector<OwnOpRow>& rows);

}  // namespace tokenline
