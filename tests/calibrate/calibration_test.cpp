// `tokenline calibrate` run as a separate process on a two-point CSV of a small Llama-8B deployment.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/calibrate/calibrate_process.h"
#include "tests/traces/test_dir.h"

using tokenline::testing::read_all;
using tokenline::testing::TestDir;
namespace fs = std::filesystem;

namespace {

using Run = tokenline::testing::CalibrateRun;

Run calibrate(const std::string& args, const TestDir& dir) {
  return tokenline::testing::run_calibrate(args, dir);
}

// Two aggregated Llama-3.1-8B TP1 points with short requests (the figures are made up: the test checks the
// mechanics, not the fidelity).
void write_points(const std::string& path) {
  std::ofstream out(path);
  out << "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,attention_dp_size,moe_tp_"
         "size,"
         "moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
         "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,,1,1,40,8\n"
         "4,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,512,16,bfloat16,2,,1,1,50,9\n";
}

std::string models_dir(const TestDir& dir) {
  fs::create_directories(dir.file("models"));
  fs::copy_file(std::string(TOKENLINE_MODEL_TEST_DATA) + "/llama-3.1-8b.json",
                dir.file("models/meta-llama--Meta-Llama-3.1-8B_config.json"));
  return dir.file("models");
}

// Writes `csv` as the test's points file and runs calibrate on it with the test's models and `args`.
Run calibrate_csv(const TestDir& dir, const std::string& csv, const std::string& args) {
  std::ofstream(dir.file("points.csv")) << csv;
  return calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" + models_dir(dir) +
                       "' --out '" + dir.file("out") + "' " + args,
                   dir);
}

}  // namespace

TEST_CASE("calibrate --no-fit prints every point and the MAPE per model and mode", "[calibration]") {
  TestDir dir("calibrate-nofit");
  write_points(dir.file("points.csv"));
  const Run r = calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" + models_dir(dir) +
                              "' --out '" + dir.file("out") + "' --no-fit --min-requests 4 --jobs 2",
                          dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Llama-3.1-8B-Instruct") != std::string::npos);
  CHECK(r.out.find("tp2") != std::string::npos);
  CHECK(r.out.find("TPOT_MAPE") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  REQUIRE(j["before"].size() == 1);
  CHECK(j["before"][0]["points"] == 2);
  CHECK(j["before"][0]["failed"] == 0);
  CHECK(j["before"][0]["tpot_mape"].get<double>() > 0);
  CHECK_FALSE(j["before"][0].contains("layout"));
  // The model ran two deployments (tp1, tp2): a table and a JSON list per deployment as well.
  REQUIRE(j["before_by_deployment"].size() == 2);
  CHECK(j["before_by_deployment"][0]["layout"] == "tp1");
  CHECK(j["before_by_deployment"][1]["layout"] == "tp2");
  CHECK(j["before_by_deployment"][1]["points"] == 1);
  const size_t first_table = r.out.find("TTFT_MAPE");
  CHECK(r.out.find("TTFT_MAPE", first_table + 1) != std::string::npos);  // the per-deployment table
  CHECK_FALSE(fs::exists(dir.file("out/runs/0")));  // runs are removed unless --keep-runs
}

TEST_CASE("calibrate reports a row run with MTP drafts apart from its layout's plain runs", "[calibration]") {
  TestDir dir("calibrate-mtp-layout");
  const Run r =
      calibrate_csv(dir,
                    "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,"
                    "attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms,sim_args\n"
                    "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,,1,1,40,8,\n"
                    "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,,1,1,40,6,--mtp=1\n"
                    "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,,1,1,40,8,"
                    "--mtp 2 --mtp 0\n",
                    "--no-fit --min-requests 4 --jobs 2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("tp1+mtp1") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  REQUIRE(j["before_by_deployment"].size() == 2);
  CHECK(j["before_by_deployment"][0]["layout"] == "tp1");  // the last --mtp wins: 0 is a plain run
  CHECK(j["before_by_deployment"][0]["points"] == 2);
  CHECK(j["before_by_deployment"][1]["layout"] == "tp1+mtp1");
}

TEST_CASE("calibrate --sim-args reaches every point's sim run", "[calibration]") {
  TestDir dir("calibrate-simargs");
  write_points(dir.file("points.csv"));
  const std::string base = "--points '" + dir.file("points.csv") + "' --models-dir '" + models_dir(dir) +
                           "' --no-fit --min-requests 4 --jobs 2 --out '";
  const Run plain = calibrate(base + dir.file("plain") + "'", dir);
  const Run chunked = calibrate(base + dir.file("chunked") + "' --sim-args '--chunk 64'", dir);
  const Run bad = calibrate(base + dir.file("bad") + "' --sim-args '--mixed-steps maybe'", dir);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(chunked.exit_code == 0);
  const auto ttft = [&](const char* out) {
    return nlohmann::json::parse(
               read_all(dir.file(std::string(out) + "/calibration.json")))["before"][0]["ttft_mape"]
        .get<double>();
  };
  CHECK(ttft("chunked") != ttft("plain"));  // 256- and 512-token prompts now take 4 and 8 steps
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("bad/calibration.json")));
  CHECK(j["before"][0]["failed"] == 2);  // the bad option reached sim, which refused it
}

TEST_CASE("calibrate: a row's sim_args reach its sim run, and --sim-args replaces an option they name",
          "[calibration]") {
  const auto points = [](const std::string& sim_args) {
    return "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,moe_tp_size,moe_ep_size,"
           "silicon_ttft_ms,silicon_tpot_ms,sim_args\n"
           "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,1,1,40,8," +
           sim_args +
           "\n"
           "4,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,512,16,bfloat16,2,1,1,50,9," +
           sim_args + "\n";
  };
  const auto before = [](const TestDir& dir) {
    return nlohmann::json::parse(read_all(dir.file("out/calibration.json")))["before"][0];
  };
  const std::string opts = "--no-fit --min-requests 4 --jobs 2";
  TestDir plain("calibrate-rowargs-plain"), rows("calibrate-rowargs-rows"), flag("calibrate-rowargs-flag");
  REQUIRE(calibrate_csv(plain, points(""), opts).exit_code == 0);
  REQUIRE(calibrate_csv(rows, points("--chunk 64"), opts).exit_code == 0);
  REQUIRE(calibrate_csv(flag, points(""), opts + " --sim-args '--chunk 64'").exit_code == 0);
  CHECK(before(rows)["ttft_mape"] == before(flag)["ttft_mape"]);  // the same sim runs
  CHECK(before(rows)["ttft_mape"] != before(plain)["ttft_mape"]);
  // A bad flag in the rows reaches sim, which refuses it; --sim-args naming the option replaces it.
  TestDir bad("calibrate-rowargs-bad"), fixed("calibrate-rowargs-fixed");
  CHECK(calibrate_csv(bad, points("--mixed-steps maybe"), opts).exit_code == 1);  // no point predicted
  CHECK(before(bad)["failed"] == 2);
  REQUIRE(calibrate_csv(fixed, points("--mixed-steps maybe"), opts + " --sim-args '--mixed-steps on'")
              .exit_code == 0);
  CHECK(before(fixed)["failed"] == 0);
  CHECK(before(fixed)["ttft_mape"] == before(plain)["ttft_mape"]);  // calibrate's own default was on
}

TEST_CASE("calibrate prints each failed run's reason, not only \"failed\"", "[calibration]") {
  TestDir dir("calibrate-failed-reason");
  const std::string csv =
      "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,moe_tp_size,moe_ep_size,"
      "silicon_ttft_ms,silicon_tpot_ms,sim_args\n"
      "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,1,1,40,8,--bogus-flag\n"
      "4,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,512,16,bfloat16,2,1,1,50,9,\n";
  const Run r = calibrate_csv(dir, csv, "--no-fit --min-requests 4 --jobs 2");
  CHECK(r.exit_code == 0);  // one point still predicted
  // The line sim printed before CLI11's "Run with --help" hint, not the hint and not only "failed".
  const std::string line = dir.file("points.csv") +
                           ":2 (Llama-3.1-8B-Instruct) failed before the fit: exit 2: The following argument "
                           "was not expected: --bogus-flag\n";
  CHECK(r.err.find(line) != std::string::npos);
  CHECK(r.err.find("Run with --help") == std::string::npos);
  CHECK(r.err.find("points.csv:3") == std::string::npos);  // the run that succeeded says nothing
}

// A row whose layout does not divide its model (aiconfigurator's GB200 DeepSeek-R1 rows at tp_size 72; here
// Llama-3.1-8B's 32 heads over TP 3) fails alone, with the reason and the row, and the others run.
TEST_CASE("calibrate: a row whose layout does not divide the model fails alone", "[calibration]") {
  TestDir dir("calibrate-bad-layout");
  const std::string csv =
      "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,moe_tp_size,moe_ep_size,"
      "silicon_ttft_ms,silicon_tpot_ms\n"
      "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,3,1,0,40,8\n"
      "4,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,512,16,bfloat16,2,0,0,50,9\n";
  const Run r = calibrate_csv(dir, csv, "--no-fit --min-requests 4 --jobs 2");
  INFO(r.err);
  CHECK(r.exit_code == 0);  // the second row still predicted
  CHECK(r.err.find(dir.file("points.csv") + ":2 (Llama-3.1-8B-Instruct) failed before the fit: exit 2: ") !=
        std::string::npos);
  CHECK(r.err.find("a TP size dividing the model's 32 heads, found tp3") != std::string::npos);
  CHECK(r.err.find("points.csv:3") == std::string::npos);
}

TEST_CASE("calibrate --fit moves a named parameter inside its bounds and says so", "[calibration]") {
  TestDir dir("calibrate-fit");
  write_points(dir.file("points.csv"));
  const std::string common =
      "--points '" + dir.file("points.csv") + "' --models-dir '" + models_dir(dir) +
      "' --min-requests 4 --jobs 2 --fit kernel_launch_s --fit-tolerance 0.2 --sweeps 1";
  const Run r = calibrate(common + " --out '" + dir.file("out") + "'", dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("fit_TPOT") != std::string::npos);
  CHECK(r.out.find("leave-one-model-out") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  const nlohmann::json& p = j["parameters"]["kernel_launch_s"];
  CHECK(p["value"].get<double>() >= 0.5e-6);
  CHECK(p["value"].get<double>() <= 30e-6);
  CHECK(p["lower"] == 0.5e-6);
  CHECK(p["why"].get<std::string>().find("roofline") != std::string::npos);
  const nlohmann::json hw = nlohmann::json::parse(read_all(dir.file("out/hardware.json")));
  CHECK(hw["overheads"]["kernel_launch_s"]["value"] == p["value"]);
  // The same inputs give the same fit: the search is deterministic.
  const Run again = calibrate(common + " --out '" + dir.file("out2") + "'", dir);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == r.out);
  CHECK(read_all(dir.file("out2/calibration.json")) == read_all(dir.file("out/calibration.json")));
}

// The search starts where the profile stands, an embedded profile as a directory (h200-sglang's floor).
TEST_CASE("calibrate --fit starts from the profile's own value of a timing parameter", "[calibration]") {
  TestDir dir("calibrate-start");
  write_points(dir.file("points.csv"));
  const Run r =
      calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" + models_dir(dir) +
                    "' --min-requests 4 --jobs 2 --profile h200-sglang --fit step_floor_per_layer_s "
                    "--sweeps 0 --no-lomo --out '" +
                    dir.file("out") + "'",
                dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("start step_floor_per_layer_s=0.0001718") != std::string::npos);
}

// Leave-one-model-out fits start from the format's default, not from the profile's value: the search keeps
// its start where the objective is flat, and h200-sglang's per-request term was fitted with Llama's points -
// left out, a model no other point identifies it on would get it back unchanged. With --sweeps 0 each fit
// is its start, so the table shows where the fits began.
TEST_CASE("calibrate: leave-one-model-out fits start blind, from the format's default", "[calibration]") {
  TestDir dir("calibrate-lomo-start");
  const std::string models = models_dir(dir);
  fs::copy_file(std::string(TOKENLINE_MODEL_TEST_DATA) + "/mistral-7b-v0.3.json",
                dir.file("models/mistralai--Mistral-7B-v0.3_config.json"));
  std::ofstream(dir.file("points.csv"))
      << "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,attention_dp_size,moe_tp_"
         "size,"
         "moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
         "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,,1,1,40,8\n"
         "2,mistralai/Mistral-7B-v0.3,bf16,agg,256,16,bfloat16,1,,1,1,40,8\n";
  const Run r =
      calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" + models +
                    "' --min-requests 4 --jobs 2 --profile h200-sglang --fit step_cpu_per_request_s "
                    "--sweeps 0 --out '" +
                    dir.file("out") + "'",
                dir);
  INFO(r.out + r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("start step_cpu_per_request_s=4.377e-05") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  REQUIRE(j["leave_one_model_out"].size() == 2);
  for (const nlohmann::json& l : j["leave_one_model_out"]) CHECK(l["values"]["step_cpu_per_request_s"] == 0);
}

TEST_CASE("calibrate: a bad CSV cell is one message naming file, line and column, exit 2", "[calibration]") {
  TestDir dir("calibrate-bad");
  const Run r =
      calibrate_csv(dir,
                    "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,attention_dp_"
                    "size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
                    "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,one,,1,1,40,8\n",
                    "--no-fit");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "tokenline: " + dir.file("points.csv") + ":2: tp_size: expected a positive integer, found 'one'\n");
  const Run missing = calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" +
                                    dir.file("none") + "' --out '" + dir.file("out") + "' --no-fit",
                                dir);
  CHECK(missing.exit_code == 2);
  write_points(dir.file("good.csv"));
  const Run no_profile =
      calibrate("--points '" + dir.file("good.csv") + "' --models-dir '" + dir.file("models") + "' --out '" +
                    dir.file("out") + "' --fit step_cpu_overhead_s",
                dir);
  CHECK(no_profile.exit_code == 2);
  CHECK(no_profile.err.find("--fit step_cpu_overhead_s: expected --profile") != std::string::npos);
}

TEST_CASE("calibrate --fit refuses a file with no recorded deployment, exit 2, before any simulation",
          "[calibration]") {
  TestDir dir("calibrate-unrecorded");
  const Run r =
      calibrate_csv(dir,
                    "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,prefill_num_workers,"
                    "prefill_tp_size,decode_num_workers,decode_tp_size,silicon_ttft_ms,silicon_tpot_ms\n"
                    "2,meta-llama/Llama-3.1-8B-Instruct,bf16,disagg,256,16,bfloat16,,1,,1,40,8\n",
                    "--fit kernel_launch_s");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(dir.file("points.csv") + ": expected at least one point to fit on whose deployment is "
                                            "recorded") != std::string::npos);
  CHECK(r.out.empty());  // no point was simulated or printed
}

// The second row's 64 clients would complete 64 / (0.02 + 15 x 0.002) = 1,280 requests/s of 4,096-token
// prompts on one GPU: far more than an H200 prefills.
TEST_CASE("calibrate sets apart a row whose measured rate needs more prefill than its instance has",
          "[calibration]") {
  const std::string csv =
      "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,attention_dp_size,moe_tp_size,"
      "moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
      "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,16,bfloat16,1,,1,1,40,8\n"
      "64,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,4096,16,bfloat16,1,,1,1,20,2\n";
  {
    TestDir dir("calibrate-overloaded");
    const Run r = calibrate_csv(dir, csv, "--no-fit");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("line 3: prefill load ") != std::string::npos);
    CHECK(r.out.find("line 2: prefill load") == std::string::npos);
    CHECK(r.out.find("1280.0 requests/s measured") != std::string::npos);
    CHECK(r.out.find("set apart") != std::string::npos);
    CHECK(r.out.find(" agg!  ") != std::string::npos);
    const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
    REQUIRE(j["before"].size() == 2);
    CHECK(j["before"][1]["prefill_overloaded"] == true);
  }
  {
    TestDir dir("calibrate-overloaded-kept");
    const Run r = calibrate_csv(dir, csv, "--no-fit --keep-overloaded");
    CHECK(r.out.find("(kept: --keep-overloaded)") != std::string::npos);
    CHECK(r.out.find(" agg!  ") == std::string::npos);
  }
}

TEST_CASE("calibrate --loho prices the points by the nearest other GPU's profile, none of this GPU's",
          "[calibration][transfer]") {
  // A copy of h100-trtllm whose per-layer floor (10 ms) no real step has: if any of the left-out GPU's
  // profile leaked into the leave-one-hardware-out prediction, its TPOT would carry it.
  TestDir dir("calibrate-loho");
  const fs::path leaky = dir.file("h100-leaky");
  fs::copy(fs::path(TOKENLINE_SOURCE_DIR) / "topologies/profiles/h100-trtllm", leaky);
  nlohmann::json p = nlohmann::json::parse(read_all((leaky / "profile.json").string()));
  p["timing"]["step_floor_per_layer_s"]["value"] = 0.01;
  std::ofstream((leaky / "profile.json").string()) << p.dump(2);
  write_points(dir.file("points.csv"));
  const std::string base = "--points '" + dir.file("points.csv") + "' --models-dir '" + models_dir(dir) +
                           "' --no-fit --min-requests 4 --jobs 2 --hardware h100 ";
  const Run r =
      calibrate(base + "--profile '" + leaky.string() + "' --loho --out '" + dir.file("out") + "'", dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("leave-one-hardware-out (h100's points priced by h200-trtllm") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  const nlohmann::json& h = j["leave_one_hardware_out"];
  CHECK(h["hardware"] == "h100");
  CHECK(h["engine"] == "trtllm");
  CHECK(h["transferred_from"] == "h200-trtllm");
  REQUIRE(h["predicted"].size() == 1);
  CHECK(h["predicted"][0]["failed"] == 0);
  CHECK(h["in_sample"][0]["tpot_mape"].get<double>() > 10);  // 32 layers x 10 ms against 8-9 ms measured
  CHECK(h["predicted"][0]["tpot_mape"].get<double>() < 1);
  // The prediction is the transferred source's, exactly: the same points priced by it in sample.
  const Run t = calibrate(base + "--profile transfer:h200-trtllm --out '" + dir.file("direct") + "'", dir);
  REQUIRE(t.exit_code == 0);
  const nlohmann::json d = nlohmann::json::parse(read_all(dir.file("direct/calibration.json")));
  CHECK(d["before"][0]["tpot_mape"] == h["predicted"][0]["tpot_mape"]);
  CHECK(d["before"][0]["ttft_mape"] == h["predicted"][0]["ttft_mape"]);
  // Without a profile there is no engine to transfer: exit 2 naming the flag.
  const Run none = calibrate(base + "--loho --out '" + dir.file("none") + "'", dir);
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--loho") != std::string::npos);
}

TEST_CASE("issue 44: one row of each model of the B200 vLLM fit set runs on b200-vllm",
          "[calibration][vllm]") {
  // calibrate/points/e2e-b200-vllm.csv (the rows vLLM's CPU terms are fitted on): the first row of each
  // model_path, with its own flags and client, through calibrate as the fit runs them; none may fail.
  TestDir dir("calibrate-b200-vllm");
  const fs::path points = fs::path(TOKENLINE_SOURCE_DIR) / "calibrate/points";
  std::ifstream in((points / "e2e-b200-vllm.csv").string());
  std::string header, line;
  REQUIRE(std::getline(in, header));
  const size_t model_column = [&] {
    size_t column = 0;
    for (size_t at = 0; at < header.find("model_path"); ++at) column += header[at] == ',';
    return column;
  }();
  std::set<std::string> models;
  std::ofstream out(dir.file("points.csv"));
  out << header << "\n";
  while (std::getline(in, line)) {
    size_t from = 0;
    for (size_t c = 0; c < model_column; ++c) from = line.find(',', from) + 1;
    const std::string model = line.substr(from, line.find(',', from) - from);
    if (models.insert(model).second) out << line << "\n";
  }
  out.close();
  REQUIRE(models.size() == 6);
  const Run r =
      calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" + (points / "models").string() +
                    "' --hardware b200 --engine vllm --no-fit --min-requests 8 --jobs 2 --out '" +
                    dir.file("out") + "'",
                dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  REQUIRE(j["before"].size() == 6);
  for (const nlohmann::json& g : j["before"]) {
    INFO(g.dump());
    CHECK(g["failed"] == 0);
    CHECK(g["points"] == 1);
    CHECK(g["tpot_mape"].get<double>() < 1);  // priced, not a stray: within 2x of the measured TPOT
  }
}

TEST_CASE(
    "issue 43: the B200 SGLang disaggregated fit set's 4-client rows run as their recipes deployed them",
    "[calibration]") {
  TestDir dir("calibrate-b200-disagg");
  const std::string source = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/points";
  std::ifstream in(source + "/e2e-b200-sglang-disagg.csv");
  std::string line;
  std::getline(in, line);
  std::string csv = line + "\n";  // the header, then the rows of 4 clients
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("4,", 0) == 0) {
      csv += line + "\n";
      ++rows;
    }
  }
  REQUIRE(rows == 2);  // 1,024- and 8,192-token prompts, each 1 prefill + 1 decode worker of TP8 with EP8
  std::ofstream(dir.file("points.csv")) << csv;
  const Run r =
      calibrate("--points '" + dir.file("points.csv") + "' --models-dir '" + source + "/models' --out '" +
                    dir.file("out") + "' --no-fit --hardware b200 --profile b200-sglang --jobs 1",
                dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("1Ptp8-ep8/1Dtp8-ep8") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(read_all(dir.file("out/calibration.json")));
  REQUIRE(j["before"].size() == 1);
  CHECK(j["before"][0]["mode"] == "disagg");
  CHECK(j["before"][0]["points"] == 2);
  CHECK(j["before"][0]["failed"] == 0);
}
