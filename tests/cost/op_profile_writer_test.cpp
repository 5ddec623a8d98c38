// write_own_profile: what it writes loads back through load_op_profile and load_hardware unchanged, and
// its keys depend on the grid only.
#include "cost/op_profile_writer.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "cost/op_profile.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

OwnProfileInfo info() {
  return OwnProfileInfo{.name = "cpu-glm-5.3-tiny-tp1",
                        .hardware = "cpu-host",
                        .backend = "cpu",
                        .model = "glm-5.3-tiny",
                        .parallel = "tp1",
                        .machine = "test (a CPU, 2 cores)",
                        .threads = 2,
                        .date = "2026-12-01T00:00:00Z",
                        .warmup = 1,
                        .repeats = 3,
                        .step_overhead_s = 2.5e-5};
}

OwnHardware hardware() {
  return OwnHardware{.gemm_flops = 3e10,
                     .memory_bw = 1e10,
                     .memory_bytes = 8e9,
                     .collective_bw = 2e9,
                     .collective_latency_s = 4e-6};
}

std::vector<OwnOpRow> rows() {
  return {{"sparse_mla", true, 4, 64, 0.25},   {"a_proj", false, 1, 16, 1.5},
          {"a_proj", true, 4, 64, 0.75},       {"a_proj", true, 1, 64, 0.5},
          {"sparse_mla", true, 1, 64, 0.125},  {"a_proj", true, 1, 512, 0.5},
          {"a_proj", true, 1, 64, 0.25, true}, {"a_proj", false, 1, 16, 1.25, true}};
}

}  // namespace

TEST_CASE("an own profile round-trips through the loader", "[op_profile_writer]") {
  const fs::path dir = fs::temp_directory_path() / ("tl_own_profile_roundtrip-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::vector<OwnOpRow> r = rows();
  sort_own_rows(r, {"a_proj", "sparse_mla"});
  write_own_profile(dir.string(), info(), hardware(), r);
  const auto p = load_op_profile(dir.string());
  CHECK(p->name == "cpu-glm-5.3-tiny-tp1");
  CHECK(p->hardware == "cpu-host");
  CHECK(p->engine_name == "tokenline");
  CHECK(p->measured_model == "glm-5.3-tiny");
  CHECK(p->measured_parallel == "tp1");
  CHECK(p->param(TimingParam::kStepCpuOverheadS) == Approx(2.5e-5));
  CHECK(p->param(TimingParam::kOverlapSchedule) == 0);
  const ProfileTable& t = p->table(ProfileTableKind::kOps);
  REQUIRE(t.rows() == r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    CHECK(t.text_at(i, 0) == r[i].op);
    CHECK(t.text_at(i, 1) == own_row_phase(r[i]));
    CHECK(t.at(i, 0) == double(r[i].batch));
    CHECK(t.at(i, 1) == double(r[i].tokens));
    CHECK(t.at(i, 2) == Approx(r[i].latency_ms));
  }
  const Hardware hw = load_hardware((dir / "hardware.json").string());
  CHECK(hw.name == "cpu-host");
  CHECK(hw.peak_flops_bf16 == Approx(3e10));
  CHECK(hw.hbm_bw == Approx(1e10));
}

TEST_CASE("own rows sort into op order, alone rows last, decode first, then batch and tokens",
          "[op_profile_writer]") {
  std::vector<OwnOpRow> r = rows();
  sort_own_rows(r, {"a_proj", "sparse_mla"});
  CHECK(own_ops_csv(r) ==
        "op,phase,batch,tokens,latency_ms\n"
        "a_proj,decode,1,64,0.500000\n"
        "a_proj,decode,1,512,0.500000\n"
        "a_proj,decode,4,64,0.750000\n"
        "a_proj,prefill,1,16,1.500000\n"
        "a_proj,decode-alone,1,64,0.250000\n"
        "a_proj,prefill-alone,1,16,1.250000\n"
        "sparse_mla,decode,1,64,0.125000\n"
        "sparse_mla,decode,4,64,0.250000\n");
  // The same grid with other measurements: the same keys (every column but latency_ms).
  std::vector<OwnOpRow> other = rows();
  for (OwnOpRow& x : other) x.latency_ms *= 3;
  sort_own_rows(other, {"a_proj", "sparse_mla"});
  for (size_t i = 0; i < r.size(); ++i) {
    CHECK(other[i].op == r[i].op);
    CHECK(other[i].batch == r[i].batch);
    CHECK(other[i].tokens == r[i].tokens);
    CHECK(own_row_phase(other[i]) == std::string(own_row_phase(r[i])));
  }
}

}  // namespace tokenline
