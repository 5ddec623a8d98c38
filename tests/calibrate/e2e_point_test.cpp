#include "calibrate/e2e_point.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/input_error.h"

using namespace tokenline;

namespace {

// The header and two rows of e2e-silicon.csv (aiconfigurator silicon_sample.csv, H200 SGLang): one
// aggregated DeepSeek-R1 TP8 point and one disaggregated DeepSeek-V3 point (decode dp8-ep8).
const char* kHeader =
    "concurrency,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_"
    "mode,"
    "batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size,prefill_num_"
    "workers,"
    "prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,prefill_moe_tp_size,prefill_moe_ep_size,"
    "decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size,decode_attention_dp_size,"
    "decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n";
const char* kAggRow =
    "4,sglang,0.5.9,deepseek-ai/"
    "DeepSeek-R1,h200_sxm,fp8,agg,1024,1024,fp8,fp8_block,4,8,1,1,8,1,,,,,,,,,,,,,,,"
    "367.5,10.29\n";
const char* kDisaggRow =
    "64,sglang,0.5.8.post1,deepseek-ai/"
    "DeepSeek-V3,h200_sxm,fp8,disagg,8192,1024,fp8,fp8_block,,,,,,,1,1,8,1,1,8,1,"
    "8,1,1,1,8,1,8,2026.29,34.69\n";

std::string with_cell(const std::string& row, int column, const std::string& value) {
  std::string out;
  int c = 0;
  size_t begin = 0;
  while (true) {
    const size_t end = row.find_first_of(",\n", begin);
    out += (c == column ? value : row.substr(begin, end - begin));
    if (row[end] == '\n') return out + "\n";
    out += ",";
    begin = end + 1;
    ++c;
  }
}

}  // namespace

TEST_CASE("An aggregated and a disaggregated row read into points", "[e2e_point]") {
  const auto points = parse_e2e_points(std::string(kHeader) + kAggRow + kDisaggRow, "e2e.csv");
  REQUIRE(points.size() == 2);
  const E2ePoint& a = points[0];
  CHECK(a.line == 2);
  CHECK(a.model_path == "deepseek-ai/DeepSeek-R1");
  CHECK(a.mode == E2eMode::kAggregated);
  CHECK(a.concurrency == 4);
  CHECK(a.isl == 1024);
  CHECK(a.agg.tp == 8);
  CHECK(a.agg.attention_dp == 1);
  CHECK(a.agg.moe_tp == 8);
  CHECK(a.gemm_quant_mode == "fp8");
  CHECK(a.ttft_ms == 367.5);
  CHECK(a.tpot_ms == 10.29);
  const E2ePoint& d = points[1];
  CHECK(d.line == 3);
  CHECK(d.mode == E2eMode::kDisaggregated);
  CHECK(d.prefill.tp == 8);
  CHECK(d.prefill.workers == 1);
  CHECK(d.decode.tp == 1);
  CHECK(d.decode.attention_dp == 8);
  CHECK(d.decode.moe_ep == 8);
}

TEST_CASE("Empty attention_dp_size and num_workers cells mean 1", "[e2e_point]") {
  const int prefill_workers = 18, decode_dp = 28;
  const std::string two = with_cell(with_cell(kDisaggRow, prefill_workers, "2"), decode_dp, "2");
  const auto given = parse_e2e_points(std::string(kHeader) + two, "e2e.csv");
  CHECK(given[0].prefill.workers == 2);
  CHECK(given[0].decode.attention_dp == 2);
  const std::string empty = with_cell(with_cell(kDisaggRow, prefill_workers, ""), decode_dp, "");
  const auto points = parse_e2e_points(std::string(kHeader) + empty, "e2e.csv");
  CHECK(points[0].prefill.workers == 1);
  CHECK(points[0].decode.attention_dp == 1);
}

// aiconfigurator writes 0 in a dense model's attention-DP and MoE columns (silicon_sample.csv's GB200
// TensorRT-LLM Qwen3-32B rows: attention_dp_size, moe_tp_size and moe_ep_size 0): read as empty, 1; a
// negative size is still refused.
TEST_CASE("A 0 in the attention-DP and MoE size columns means unset, as an empty cell", "[e2e_point]") {
  const int attention_dp = 14, moe_tp = 15, moe_ep = 16, decode_moe_ep = 30;
  const std::string zeros =
      with_cell(with_cell(with_cell(kAggRow, attention_dp, "0"), moe_tp, "0"), moe_ep, "0");
  const auto points = parse_e2e_points(std::string(kHeader) + zeros, "e2e.csv");
  CHECK(points[0].agg.attention_dp == 1);
  CHECK(points[0].agg.moe_tp == 1);
  CHECK(points[0].agg.moe_ep == 1);
  const auto pd =
      parse_e2e_points(std::string(kHeader) + with_cell(kDisaggRow, decode_moe_ep, "0"), "e2e.csv");
  CHECK(pd[0].decode.moe_ep == 1);
  CHECK_THROWS_WITH(parse_e2e_points(std::string(kHeader) + with_cell(kAggRow, moe_ep, "-1"), "e2e.csv"),
                    "e2e.csv:2: moe_ep_size: expected an integer >= 0, found '-1'");
  // tp_size stays a positive count.
  CHECK_THROWS_WITH(parse_e2e_points(std::string(kHeader) + with_cell(kAggRow, 12, "0"), "e2e.csv"),
                    "e2e.csv:2: tp_size: expected a positive integer, found '0'");
}

TEST_CASE("A disaggregated row without num_workers does not record its deployment", "[e2e_point]") {
  const int prefill_workers = 18, decode_workers = 25;
  const auto given = parse_e2e_points(std::string(kHeader) + kAggRow + kDisaggRow, "e2e.csv");
  CHECK(deployment_recorded(given[0]));
  CHECK(deployment_recorded(given[1]));
  for (int column : {prefill_workers, decode_workers}) {
    const auto points = parse_e2e_points(std::string(kHeader) + with_cell(kDisaggRow, column, ""), "e2e.csv");
    CHECK_FALSE(deployment_recorded(points[0]));
    CHECK(points[0].prefill.workers == 1);  // still simulated, as one worker each
    CHECK(points[0].decode.workers == 1);
  }
}

TEST_CASE("A sim_args column gives a row its deployment's engine flags", "[e2e_point]") {
  const std::string header = std::string(kHeader).insert(std::string(kHeader).size() - 1, ",sim_args");
  const std::string row =
      std::string(kDisaggRow)
          .insert(std::string(kDisaggRow).size() - 1, ",--mem-fraction 0.82  --max-running 256");
  const auto points = parse_e2e_points(header + row + with_cell(row, 33, ""), "e2e.csv");
  REQUIRE(points.size() == 2);
  CHECK(points[0].sim_args == std::vector<std::string>{"--mem-fraction", "0.82", "--max-running", "256"});
  CHECK(points[1].sim_args.empty());
  CHECK(parse_e2e_points(std::string(kHeader) + kAggRow, "e2e.csv")[0].sim_args.empty());  // no column
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 33, "0.82 --mem-fraction"), "e2e.csv"),
                    "e2e.csv:2: sim_args: expected `tokenline sim` options starting with --, found '0.82'");
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 33, "--chunk '8192'"), "e2e.csv"),
                    "e2e.csv:2: sim_args: expected words split at spaces, unquoted, found ''8192''");
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 33, "--chunk 8192 --concurrency=8"), "e2e.csv"),
                    "e2e.csv:2: sim_args: expected engine flags (the row's other columns set --concurrency), "
                    "found '--concurrency=8'");
}

TEST_CASE("Protocol columns say how a row's client measured it", "[e2e_point]") {
  const std::string header = std::string(kHeader).insert(
      std::string(kHeader).size() - 1, ",warmup_per_client,requests_per_client,length_range_ratio");
  const std::string row = std::string(kDisaggRow).insert(std::string(kDisaggRow).size() - 1, ",0,10,0.8");
  const auto points = parse_e2e_points(
      header + row + with_cell(with_cell(with_cell(row, 33, ""), 34, ""), 35, ""), "e2e.csv");
  REQUIRE(points.size() == 2);
  CHECK(points[0].warmup_per_client == 0);  // 0 is a count: no warm-up, not "calibrate's"
  CHECK(points[0].requests_per_client == 10);
  CHECK(points[0].length_range_ratio == 0.8);
  CHECK_FALSE(points[1].warmup_per_client.has_value());  // empty cells: calibrate's protocol
  CHECK_FALSE(points[1].requests_per_client.has_value());
  CHECK(points[1].length_range_ratio == 1);
  const E2ePoint plain = parse_e2e_points(std::string(kHeader) + kAggRow, "e2e.csv")[0];  // no columns
  CHECK_FALSE(plain.warmup_per_client.has_value());
  CHECK(plain.length_range_ratio == 1);
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 33, "-1"), "e2e.csv"),
                    "e2e.csv:2: warmup_per_client: expected an integer >= 0, found '-1'");
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 34, "0"), "e2e.csv"),
                    "e2e.csv:2: requests_per_client: expected a positive integer, found '0'");
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 35, "1.2"), "e2e.csv"),
                    "e2e.csv:2: length_range_ratio: expected a number in (0, 1], found '1.2'");
  CHECK_THROWS_WITH(parse_e2e_points(header + with_cell(row, 35, "0"), "e2e.csv"),
                    "e2e.csv:2: length_range_ratio: expected a number in (0, 1], found '0'");
}

// silicon_sample.csv's provenance column names an InferenceX run two ways (its database dump, its exported
// results); aiconfigurator's own sweeps ran aiperf, calibrate's default.
TEST_CASE("An InferenceX row's silicon_data_source gives its client's protocol", "[e2e_point]") {
  const auto after = inferencex_protocol(
      "db-dump/2026-04-27; config_id=81; silicon_concurrency=4; measured=2026-03-25T00:00:00.000Z; "
      "workflow_run_id=337; lmsysorg/sglang:v0.5.9-cu130");
  REQUIRE(after);
  CHECK(after->warmup_per_client == 2);
  CHECK(after->requests_per_client == 10);
  CHECK(after->length_range_ratio == 0.8);
  // Exported results; measured before InferenceX added the warm-up (2026-01-21T17:53:38Z): none.
  const auto before = inferencex_protocol(
      "source_file=2026-04-06.csv; model=Llama-3.1-70B; silicon_concurrency=8; "
      "measured=2025-10-29T00:00:00.000Z; "
      "wip=False");
  REQUIRE(before);
  CHECK(before->warmup_per_client == 0);
  CHECK(inferencex_protocol("db-dump/2026-04-27; measured=2026-01-21T17:53:37Z")->warmup_per_client == 0);
  CHECK(inferencex_protocol("db-dump/2026-04-27; measured=2026-01-21T17:53:38Z")->warmup_per_client == 2);
  CHECK(inferencex_protocol("db-dump/2026-04-27; measured=2026-01-22")->warmup_per_client == 2);
  // Not InferenceX, or no time to place it: calibrate's default protocol.
  CHECK_FALSE(
      inferencex_protocol("source_file=/home/u/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.0.0rc3/"
                          "Qwen_Qwen3-32B.csv; silicon_concurrency=8; measured=2026-03-17"));
  CHECK_FALSE(inferencex_protocol("db-dump/2026-04-27; config_id=81"));
  CHECK_FALSE(inferencex_protocol(""));
  // Read into a point whose protocol columns are empty; columns that are given win.
  const std::string header = std::string(kHeader).insert(
      std::string(kHeader).size() - 1,
      ",warmup_per_client,requests_per_client,length_range_ratio,silicon_data_source");
  const std::string source = "db-dump/2026-04-27; measured=2026-03-25T00:00:00.000Z";
  const std::string inferred = std::string(kAggRow).insert(std::string(kAggRow).size() - 1, ",,,," + source);
  const std::string given = std::string(kAggRow).insert(std::string(kAggRow).size() - 1, ",0,20,," + source);
  const auto points = parse_e2e_points(header + inferred + given, "e2e.csv");
  CHECK(points[0].client_from_source);
  CHECK(points[0].warmup_per_client == 2);
  CHECK(points[0].requests_per_client == 10);
  CHECK(points[0].length_range_ratio == 0.8);
  CHECK_FALSE(points[1].client_from_source);
  CHECK(points[1].warmup_per_client == 0);
  CHECK(points[1].requests_per_client == 20);
  CHECK(points[1].length_range_ratio == 1);
}

TEST_CASE("a drawn length's shortest is numpy's int(r x L) but at least 1 and its mean lies halfway to L",
          "[e2e_point]") {
  CHECK(shortest_length(1024, 0.8) == 819);
  CHECK(shortest_length(8192, 0.8) == 6553);
  CHECK(shortest_length(1024, 1) == 1024);
  CHECK(shortest_length(1, 0.5) == 1);
  CHECK(mean_length(1024, 0.8) == 921.5);
  CHECK(mean_length(100, 1) == 100);
}

TEST_CASE("Bad e2e rows name file, line and column with what was expected and found", "[e2e_point]") {
  const std::string h = kHeader;
  CHECK_THROWS_WITH(parse_e2e_points(h + kAggRow + with_cell(kAggRow, 0, "four"), "e2e.csv"),
                    "e2e.csv:3: concurrency: expected a positive integer, found 'four'");
  CHECK_THROWS_WITH(parse_e2e_points(h + with_cell(kAggRow, 12, ""), "e2e.csv"),
                    "e2e.csv:2: tp_size: expected a positive integer, found an empty cell");
  CHECK_THROWS_WITH(parse_e2e_points(h + with_cell(kAggRow, 6, "mixed"), "e2e.csv"),
                    "e2e.csv:2: mode: expected agg or disagg, found 'mixed'");
  CHECK_THROWS_WITH(
      parse_e2e_points(h + with_cell(kAggRow, 32, "-3"), "e2e.csv"),
      "e2e.csv:2: silicon_tpot_ms: expected a number of milliseconds in (0, 8.64e7], found '-3'");
  // inf printed "-nan%" errors; 1e308 made every error 100%; a count past int32 wrapped.
  CHECK_THROWS_WITH(
      parse_e2e_points(h + with_cell(kAggRow, 31, "inf"), "e2e.csv"),
      "e2e.csv:2: silicon_ttft_ms: expected a number of milliseconds in (0, 8.64e7], found 'inf'");
  CHECK_THROWS_WITH(parse_e2e_points(h + with_cell(kAggRow, 31, "nan"), "e2e.csv"),
                    Catch::StartsWith("e2e.csv:2: silicon_ttft_ms: expected a number of milliseconds"));
  CHECK_THROWS_WITH(parse_e2e_points(h + with_cell(kAggRow, 32, "1e308"), "e2e.csv"),
                    Catch::StartsWith("e2e.csv:2: silicon_tpot_ms: expected a number of milliseconds"));
  CHECK_THROWS_WITH(parse_e2e_points(h + with_cell(kAggRow, 0, "4294967297"), "e2e.csv"),
                    "e2e.csv:2: concurrency: expected an integer at most 2147483647, found '4294967297'");
  CHECK_THROWS_WITH(parse_e2e_points(h + "4,sglang\n", "e2e.csv"),
                    Catch::StartsWith("e2e.csv:2: expected 33 comma-separated fields"));
  CHECK_THROWS_WITH(parse_e2e_points("concurrency,mode\n4,agg\n", "e2e.csv"),
                    Catch::StartsWith("e2e.csv:2: model_path: expected a column 'model_path'"));
  CHECK_THROWS_WITH(parse_e2e_points(h, "e2e.csv"), "e2e.csv: expected at least one data row, found none");
  CHECK_THROWS_WITH(read_e2e_points("no/such/e2e.csv"),
                    Catch::StartsWith("no/such/e2e.csv: expected a readable"));
}
