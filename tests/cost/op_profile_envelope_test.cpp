// apply_lower_envelope: the monotone rule for measured tables (issue 44), on small synthetic tables, through
// the loader, and on the shipped table that prompted it.
#include "cost/op_profile_envelope.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cost/op_profile.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

// An mla_decode table (kv_dtype | heads,batch,tokens,latency_ms) of the given rows.
struct MlaRow {
  const char* kv_dtype;
  double heads, batch, tokens, latency_ms;
};
ProfileTable mla_table(const std::vector<MlaRow>& rows) {
  ProfileTable t;
  t.file = "synthetic/mla_decode.csv";
  t.text_columns = 1;
  t.numeric_columns = 4;
  for (const MlaRow& r : rows) {
    t.text.emplace_back(r.kv_dtype);
    t.numbers.insert(t.numbers.end(), {r.heads, r.batch, r.tokens, r.latency_ms});
  }
  return t;
}

double latency(const ProfileTable& t, size_t row) {
  return t.at(row, t.numeric_columns - 1);
}

TEST_CASE("issue 44: a table row slower than a row of more work is lowered to it", "[op_profile][envelope]") {
  // batch 8, keys 2,048 .. 16,384, as h200-vllm's mla_decode: a spike at 4,096 in a flat floor, then growth.
  //   keys:    2048   4096   8192   16384
  //   ms:      0.15   0.76   0.14   0.30      ->   0.14   0.14   0.14   0.30
  ProfileTable t = mla_table({{"bfloat16", 8, 8, 2048, 0.15},
                              {"bfloat16", 8, 8, 4096, 0.76},
                              {"bfloat16", 8, 8, 8192, 0.14},
                              {"bfloat16", 8, 8, 16384, 0.30}});
  const EnvelopeChange change = apply_lower_envelope(t, ProfileTableKind::kMlaDecode);
  CHECK(change.rows == 2);
  CHECK(change.max_ratio == Approx(0.76 / 0.14));
  CHECK(latency(t, 0) == 0.14);
  CHECK(latency(t, 1) == 0.14);
  CHECK(latency(t, 2) == 0.14);
  CHECK(latency(t, 3) == 0.30);  // the largest work keeps its measurement
}

TEST_CASE("issue 44: the envelope spans batch and keys together, one shape at a time",
          "[op_profile][envelope]") {
  //            keys 64   keys 128
  //   batch 1   0.50      0.20        row (1, 64) is covered by (1, 128) and (2, 64) and (2, 128): min 0.20
  //   batch 2   0.30      0.40        row (2, 64) is covered by (2, 128) only: keeps 0.30
  // and 16 heads (another shape) at 0.01 never lowers the 8-head rows; fp8 rows neither.
  ProfileTable t = mla_table({{"bfloat16", 8, 1, 64, 0.50},
                              {"bfloat16", 8, 1, 128, 0.20},
                              {"bfloat16", 8, 2, 64, 0.30},
                              {"bfloat16", 8, 2, 128, 0.40},
                              {"bfloat16", 16, 2, 128, 0.01},
                              {"fp8", 8, 2, 128, 0.01}});
  const EnvelopeChange change = apply_lower_envelope(t, ProfileTableKind::kMlaDecode);
  CHECK(change.rows == 1);
  CHECK(latency(t, 0) == 0.20);
  CHECK(latency(t, 1) == 0.20);
  CHECK(latency(t, 2) == 0.30);
  CHECK(latency(t, 3) == 0.40);
  CHECK(latency(t, 4) == 0.01);
  CHECK(latency(t, 5) == 0.01);
}

TEST_CASE("issue 44: after the envelope no row of less work is slower, on random tables",
          "[op_profile][envelope]") {
  const uint32_t seed = 44;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ms(0.01, 2.0);
  std::vector<MlaRow> rows;
  for (double heads : {8.0, 16.0}) {
    for (double b = 1; b <= 64; b *= 2) {
      for (double x = 16; x <= 8192; x *= 4) {
        if (rng() % 5 != 0)
          rows.push_back({"bfloat16", heads, b, x, ms(rng)});  // ragged: some shapes missing
      }
    }
  }
  ProfileTable t = mla_table(rows);
  const ProfileTable measured = t;
  apply_lower_envelope(t, ProfileTableKind::kMlaDecode);
  for (size_t i = 0; i < t.rows(); ++i) {
    CHECK(latency(t, i) <= latency(measured, i));  // only ever lowered
    for (size_t j = 0; j < t.rows(); ++j) {
      if (t.at(i, 0) != t.at(j, 0) || t.at(j, 1) < t.at(i, 1) || t.at(j, 2) < t.at(i, 2)) continue;
      CHECK(latency(t, i) <= latency(t, j));  // j does no less work at the same shape
    }
  }
}

TEST_CASE("issue 44: each table kind's work columns are sizes, not its shape", "[op_profile][envelope]") {
  CHECK(envelope_work_columns(ProfileTableKind::kGemm) == std::vector<int>{0});          // m, not n or k
  CHECK(envelope_work_columns(ProfileTableKind::kMoe) == std::vector<int>{0});           // tokens
  CHECK(envelope_work_columns(ProfileTableKind::kComm) == std::vector<int>{1});          // bytes, not gpus
  CHECK(envelope_work_columns(ProfileTableKind::kGqaDecode) == std::vector<int>{3, 4});  // batch, tokens
  CHECK(envelope_work_columns(ProfileTableKind::kDsa) == std::vector<int>{2, 3});        // batch, tokens
  CHECK(envelope_work_columns(ProfileTableKind::kMlaModuleDecode) == std::vector<int>{3, 4});
  CHECK(envelope_work_columns(ProfileTableKind::kGdn) == std::vector<int>{5, 6});  // batch, tokens
}

TEST_CASE("issue 44: a profile's tables are monotone in work as loaded", "[op_profile][envelope]") {
  SECTION("a directory's GEMM rows: m = 1 measured slower than m = 4 prices as m = 4") {
    const fs::path dir = fs::temp_directory_path() / ("tl_envelope_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "profile.json")
        << R"({"name": "t", "hardware": "h200", "engine_name": "vllm", "tables": {"gemm": "gemm.csv"}})";
    std::ofstream(dir / "gemm.csv") << "dtype,m,n,k,latency_ms\n"
                                       "fp8_block,1,4096,4096,0.094\n"
                                       "fp8_block,4,4096,4096,0.034\n"
                                       "fp8_block,4,8192,4096,0.020\n"  // another n: another shape
                                       "fp8_block,16,4096,4096,0.050\n";
    const auto p = load_op_profile(dir.string());
    const ProfileTable& g = p->table(ProfileTableKind::kGemm);
    REQUIRE(g.rows() == 4);
    CHECK(latency(g, 0) == 0.034);
    CHECK(latency(g, 1) == 0.034);
    CHECK(latency(g, 2) == 0.020);
    CHECK(latency(g, 3) == 0.050);
    fs::remove_all(dir);
  }
  // Until issue 44's MLA decode rule (scripts/build-profile build_mla) this was 8 heads, batch 8: 4,096 keys
  // measured 0.764 ms beside 8,192 at 0.143; SGLang's row of that shape (0.024 ms) is now h200-vllm's. A
  // spike SGLang measured no row for remains: 64 heads, 131,072 keys, batch 64 at 5.81 ms beside batch 128
  // at 4.44.
  SECTION("h200-vllm's mla_decode at 64 heads, 131,072 keys: batch 64 no slower than batch 128") {
    const auto p = load_op_profile("h200-vllm");
    const ProfileTable& t = p->table(ProfileTableKind::kMlaDecode);
    double at_64 = -1, at_128 = -1;
    for (size_t r = 0; r < t.rows(); ++r) {
      if (t.text_at(r, 0) != "bfloat16" || t.at(r, 0) != 64 || t.at(r, 2) != 131072) continue;
      if (t.at(r, 1) == 64) at_64 = latency(t, r);
      if (t.at(r, 1) == 128) at_128 = latency(t, r);
    }
    REQUIRE(at_128 > 0);
    CHECK(at_64 <= at_128);  // measured 5.808 and 4.436 ms (vLLM 0.14.0's rows)
    CHECK(at_64 < 5);
  }
  // A table a flag selects (SGLang's --moe-runner-backend, vLLM's and TensorRT-LLM's --moe-backend) prices in
  // place of the moe table, so it loads under the same rule: applying the envelope again changes no row.
  SECTION("every shipped profile's selectable MoE tables are as the envelope leaves them") {
    int tables = 0;
    for (const std::string& name : embedded_profile_names()) {
      const auto p = load_op_profile(name);
      for (const auto* selectable : {&p->moe_runner_tables, &p->moe_backend_tables}) {
        for (const auto& [backend, table] : *selectable) {
          INFO(name << " " << backend);
          ProfileTable again = table;
          apply_lower_envelope(again, ProfileTableKind::kMoe);
          CHECK(again.numbers == table.numbers);
          ++tables;
        }
      }
    }
    CHECK(tables > 0);
  }
}

}  // namespace
}  // namespace tokenline
