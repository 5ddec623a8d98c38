#include "topologies/hardware_loader.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/input_error.h"

namespace tokenline {
namespace {

// The seed article's figures for one H200 (seed/000_7e4e84ddb53cc7f2.txt).
constexpr double kSeedRingBw = 787e9;    // "ring 有效带宽约 787GB/s"
constexpr double kSeedHbmBw = 4.8e12;    // "每卡 4.8TB/s HBM"
constexpr double kSeedHbmBytes = 141e9;  // H200 141 GB
constexpr double kSeedIbBw = 200e9 / 8;  // "IB(200Gb/s ≈ 25GB/s)"
constexpr double kNdrBw = 400e9 / 8;     // ConnectX-7 400 Gb/s NDR

std::string read_source_file(const std::string& rel) {
  std::ifstream in(std::string(TOKENLINE_SOURCE_DIR) + "/" + rel);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// h200.json with the first occurrence of `from` replaced by `to`.
std::string edited_h200(const std::string& from, const std::string& to) {
  std::string text = read_source_file("topologies/hardware/h200.json");
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse_hardware(text, "bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("h200 preset carries the seed's figures", "[hardware]") {
  const Hardware hw = load_hardware("h200");
  CHECK(hw.name == "h200");
  CHECK(hw.nvlink_ring_bw == Approx(kSeedRingBw).epsilon(1e-3));
  CHECK(hw.hbm_bw == Approx(kSeedHbmBw));
  CHECK(hw.hbm_bytes == Approx(kSeedHbmBytes));
  CHECK(hw.ib_seed_bw == Approx(kSeedIbBw));
  CHECK(hw.ib_bw == Approx(kNdrBw));
  CHECK(hw.collective_launch_s >= 3e-6);  // the seed's 3-5 us per collective
  CHECK(hw.collective_launch_s <= 5e-6);
  CHECK(hw.peak_flops(Dtype::kFp8) == Approx(2 * hw.peak_flops(Dtype::kBf16)));  // Hopper: FP8 = 2 x BF16
  CHECK(hw.peak_flops(Dtype::kNvfp4) == hw.peak_flops_fp8);                      // no FP4 on Hopper
  CHECK(hw.nics_per_gpu == 1);
  CHECK(hw.gpus_per_node == 8);
}

TEST_CASE("h200 preset reproduces the seed's communication table and weight-read bound", "[hardware]") {
  const Hardware hw = load_hardware("h200");
  // b=1 TP8: 157 all-reduces x 6144 hidden x 2 bytes (BF16) ~= 1.9 MB: "≈ 2µs" on NVLink, "≈ 77µs" on IB.
  const double tp8_bytes = 157.0 * 6144 * 2;
  CHECK(tp8_bytes / hw.nvlink_ring_bw == Approx(2.45e-6).margin(0.05e-6));
  CHECK(tp8_bytes / hw.ib_seed_bw == Approx(77e-6).margin(0.5e-6));
  // b=256 EP8 dispatch/combine: 256 x 8 x 6144 x 3 bytes ~= 38 MB: "≈ 48µs" on NVLink, "≈ 1.5ms" on IB.
  const double ep8_bytes = 256.0 * 8 * 6144 * 3;
  CHECK(ep8_bytes / hw.nvlink_ring_bw == Approx(48e-6).margin(0.5e-6));
  CHECK(ep8_bytes / hw.ib_seed_bw == Approx(1.5e-3).margin(0.02e-3));
  // 109 GB of expert + replicated weights per card at 4.8 TB/s: "理论下限约 23ms ... 约 44 个 step/s".
  const double weight_read_s = 109e9 / hw.hbm_bw;
  CHECK(weight_read_s == Approx(23e-3).margin(0.5e-3));
  CHECK(static_cast<int>(1.0 / weight_read_s) == 44);
}

TEST_CASE("ring bandwidth is NVLink total x (n-1)/n of the NVLink domain on every preset", "[hardware]") {
  // The seed's 787 GB/s = 900 GB/s (both directions) x (8-1)/8; the others are derived the same way, GB200
  // over its NVL72 rack's 72 GPUs.
  for (const std::string& name : hardware_presets()) {
    const Hardware hw = load_hardware(name);
    INFO(name);
    const double n = hw.gpus_per_node;
    CHECK(hw.nvlink_ring_bw == Approx(2 * hw.nvlink_bw * (n - 1) / n).epsilon(1e-3));
    CHECK(hw.efficiency.gemm > 0);
    CHECK(hw.efficiency.gemm <= 1);
  }
}

TEST_CASE("presets are listed and b200 has FP4", "[hardware]") {
  CHECK(hardware_presets() == std::vector<std::string>{"b200", "b300", "gb200", "gb300", "h100", "h200"});
  const Hardware b200 = load_hardware("b200");
  CHECK(b200.peak_flops(Dtype::kNvfp4) == Approx(2 * b200.peak_flops(Dtype::kFp8)));
  CHECK(load_hardware("h100").hbm_bytes < load_hardware("h200").hbm_bytes);
}

TEST_CASE("engines see the device memory the driver reports, the seed the datasheet's", "[hardware]") {
  // nvidia-smi memory.total in MiB (each JSON's hbm.device_mib names its public source).
  const std::vector<std::pair<std::string, double>> driver_mib = {{"b200", 183359},  {"b300", 275040},
                                                                  {"gb200", 189471}, {"gb300", 284208},
                                                                  {"h100", 81559},   {"h200", 143771}};
  for (const auto& [name, mib] : driver_mib) {
    INFO(name);
    const Hardware hw = load_hardware(name);
    CHECK(hw.device_mib == mib);
    CHECK(hw.device_memory_bytes() == mib * 1024 * 1024);
  }
  // B200: 180 GB on the datasheet, 179.06 GiB on the device.
  const Hardware b200 = load_hardware("b200");
  CHECK(b200.hbm_bytes == 1.8e11);
  CHECK(b200.device_memory_bytes() / (1024.0 * 1024 * 1024) == Approx(179.06).margin(0.01));
  // GB200 NVL72: one NVLink domain of 72 GPUs, one NIC per GPU, as HGX boards have.
  CHECK(load_hardware("gb200").gpus_per_node == 72);
  CHECK(load_hardware("gb300").gpus_per_node == 72);
  for (const std::string& name : hardware_presets()) CHECK(load_hardware(name).nics_per_gpu == 1);
}

TEST_CASE("a hardware JSON without device_mib sizes engines from hbm.bytes, and a bad one is refused",
          "[hardware]") {
  const std::string text = read_source_file("topologies/hardware/h100.json");
  const std::string key = "\"device_mib\": {\"value\": 81559,";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  std::string without = text;
  const size_t end = without.find('}', at);
  without.erase(at, end + 2 - at);
  const Hardware hw = parse_hardware(without, "h100-no-driver.json");
  CHECK(hw.device_mib == 0);
  CHECK(hw.device_memory_bytes() == hw.hbm_bytes);
  std::string bad = text;
  bad.replace(at, key.size(), "\"device_mib\": {\"value\": -1,");
  CHECK_THROWS_WITH(parse_hardware(bad, "h100-bad.json"),
                    Catch::Contains("device_mib") && Catch::Contains("-1"));
}

TEST_CASE("a path loads that file and names it in errors", "[hardware]") {
  const std::string path = "tl_test_hardware.json";
  {
    std::ofstream out(path);
    out << edited_h200("\"name\": \"h200\"", "\"name\": \"my-h200\"");
  }
  CHECK(load_hardware(path).name == "my-h200");
  {
    std::ofstream out(path);
    out << edited_h200("\"bw\": {\"value\": 4.8e12", "\"bw\": {\"value\": -4.8e12");
  }
  try {
    load_hardware(path);
    FAIL("negative bandwidth accepted");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), path + ": hbm.bw.value"));
    CHECK(contains(e.what(), "expected a finite number >= 0"));
  }
  std::remove(path.c_str());
}

TEST_CASE("bad hardware files name the field, what was expected and what was found", "[hardware]") {
  CHECK(contains(error_of(edited_h200("\"fp8\"", "\"fp9\"")),
                 "bad.json: peak_flops.fp9: expected one of the fields"));
  CHECK(contains(error_of(edited_h200("\"value\": 4.8e12", "\"value\": \"fast\"")),
                 "hbm.bw.value: expected a number, found string"));
  CHECK(contains(
      error_of(edited_h200("\"source\": \"NVIDIA H200 Tensor Core GPU datasheet: GPU memory bandwidth",
                           "\"src\": \"NVIDIA H200 Tensor Core GPU datasheet: GPU memory bandwidth")),
      "hbm.bw.src"));
  CHECK(contains(error_of(edited_h200("\"why\": \"3.0 / 3.35", "\"because\": \"3.0 / 3.35")),
                 "efficiency.hbm.because"));
  CHECK(contains(error_of(edited_h200("\"gemm\": {\"value\": 0.7", "\"gemm\": {\"value\": 1.7")),
                 "efficiency.gemm.value: expected a fraction in (0, 1]"));
  CHECK(
      contains(error_of(edited_h200("\"nics_per_gpu\": {\"value\": 1", "\"nics_per_gpu\": {\"value\": 1.5")),
               "ib.nics_per_gpu.value: expected an integer >= 1"));
  CHECK(contains(error_of(edited_h200("\"overheads\"", "\"overheadz\"")),
                 "bad.json: overheadz: expected one of"));
  CHECK(contains(error_of("{\"name\": \"x\""), "bad.json: expected valid JSON"));
  CHECK(contains(error_of("[1, 2]"), "expected a JSON object at the top level, found array"));
}

TEST_CASE("a number beyond double and deep nesting are input errors (fuzz findings)", "[hardware]") {
  // nlohmann throws out_of_range (not parse_error) for 4.5e116666...: it escaped as std::terminate.
  CHECK(contains(error_of("{\"name\": 4.5e116666666666666666666666666}"),
                 "bad.json: expected valid JSON, found a parse error ([json.exception.out_of_range.406]"));
  CHECK(error_of(std::string(100'000, '[')) ==
        "bad.json: expected JSON nested at most 64 levels deep, found deeper nesting");
}

TEST_CASE("a missing field is reported as missing", "[hardware]") {
  std::string text = edited_h200("\"seed_bw\"", "\"seed_bw_unused\"");
  CHECK(contains(error_of(text), "ib.seed_bw_unused: expected one of the fields"));
  CHECK(contains(error_of("{\"name\": \"x\", \"description\": \"y\"}"),
                 "bad.json: peak_flops: expected a field 'peak_flops', found none"));
}

TEST_CASE("an unknown preset lists the known ones", "[hardware]") {
  try {
    load_hardware("h300");
    FAIL("unknown preset accepted");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "hardware 'h300': expected a preset (b200, b300, gb200, gb300, h100, h200)"));
  }
  CHECK_THROWS_AS(load_hardware("no/such/file.json"), InputError);
}

}  // namespace
}  // namespace tokenline
