// Runs the built `tokenline ledger` binary: aligned tables, the --json fields of issue 2, and exit code 2
// with one clear message for each kind of bad input.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Run {
  int rc = -1;
  std::string out;       // stdout and stderr together, less the warning lines
  std::string warnings;  // the "tokenline ledger: warning:" lines (stderr)
};

Run run(const std::string& args) {
  const std::string cmd = std::string(TOKENLINE_BIN) + " ledger " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string kWarning = "tokenline ledger: warning:";
  for (size_t at = r.out.find(kWarning); at != std::string::npos; at = r.out.find(kWarning)) {
    const size_t end = r.out.find('\n', at);
    r.warnings += r.out.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
    r.out.erase(at, end == std::string::npos ? std::string::npos : end + 1 - at);
  }
  return r;
}

std::string data(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/" + name;
}

}  // namespace

TEST_CASE("ledger decode --json carries each op's work, time and source", "[ledger_cli]") {
  const Run r = run("decode --parallel dp8-ep8 --batch 32 --context 131072 --ideal --json");
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"] == "glm-5.3");
  CHECK(j["kv_layout"] == "fp8_ds_mla");
  CHECK(j["parallel"] == "dp8-ep8");
  CHECK(j["phase"] == "decode");
  CHECK(j["batch"] == 32);
  CHECK(j["instance_batch"] == 256);
  CHECK(j["per_token_layer_bytes"]["kv"] == 656);
  CHECK(j["per_token_layer_bytes"]["indexer"] == 132);
  CHECK(j["ops"].size() >= 14);
  for (const char* key : {"name", "layers", "flops", "hbm_bytes"}) CHECK(j["ops"][0].contains(key));
  for (const char* key : {"name", "kind", "group", "count", "bytes_each", "bytes_total"}) {
    CHECK(j["collectives"][0].contains(key));
  }
  for (const char* key : {"collective_bytes", "collective_count", "weight_read_bytes", "kv_read_bytes",
                          "indexer_read_bytes", "flops"}) {
    CHECK(j["totals"].contains(key));
  }
  for (const char* key : {"total", "weights", "kv", "indexer", "comm", "launch", "compute"}) {
    CHECK(j["time_s"].contains(key));
  }
  CHECK(j["layers"]["moe"] == 75);
  CHECK(j["layers"]["indexer_shared"] == 57);
  CHECK(j["marginal_per_token"]["weight_read_bytes"].get<double>() ==
        Approx(j["totals"]["weight_read_bytes"].get<double>() / 32));
  CHECK(j["batch_limit"].size() >= 4);
  CHECK(j["kv_capacity"].contains("free_bytes"));
  CHECK(j["kv_capacity"].contains("max_concurrent_requests"));
  // The dispatch message of one rank: 32 x 8 x 6144 B (FP8).
  bool found = false;
  for (const auto& c : j["collectives"]) {
    if (c["name"] == "dispatch") {
      found = true;
      CHECK(c["bytes_each"].get<double>() == 32.0 * 8 * 6144);
      CHECK(c["count"] == 75);
    }
  }
  CHECK(found);
  CHECK(run("decode --parallel dp8-ep8 --batch 32 --context 131072 --ideal --json").out ==
        r.out);  // deterministic
}

TEST_CASE("ledger prefill --json lists the chunks and the TTFT, pd gives transfer bytes per link",
          "[ledger_cli]") {
  const Run p = run("prefill --parallel tp8-ep8 --context 131072 --chunk 32768 --json");
  REQUIRE(p.rc == 0);
  const auto j = nlohmann::json::parse(p.out);
  REQUIRE(j["chunks"].size() == 4);
  CHECK(j["chunks"][3]["prefix"] == 98304);
  CHECK(j["chunks"][3]["indexer_flops"].get<double>() > j["chunks"][0]["indexer_flops"].get<double>());
  CHECK(j["totals"]["ttft_s"].get<double>() > 0);
  const Run pd = run("pd --context 1048576 --json");
  REQUIRE(pd.rc == 0);
  const auto t = nlohmann::json::parse(pd.out);
  CHECK(t["transfer_bytes"]["kv"].get<double>() == 656.0 * 78 * 1048576);
  CHECK(t["transfer_bytes"]["indexer"].get<double>() == 132.0 * 21 * 1048576);
  CHECK(t["time_s"]["ib"].get<double>() > t["time_s"]["nvlink"].get<double>());
}

TEST_CASE("ledger prints aligned tables with a configuration header", "[ledger_cli]") {
  const Run r = run("decode --parallel tp8 --batch 256");
  REQUIRE(r.rc == 0);
  CHECK(r.out.rfind("tokenline ledger decode | glm-5.3 | 8 x h200 | tp8", 0) == 0);
  CHECK(r.out.find("attn_allreduce") != std::string::npos);
  CHECK(r.out.find("Time on the busiest GPU") != std::string::npos);
  // Every row of the operator table has the header's width.
  const size_t head = r.out.find("op    ");
  REQUIRE(head != std::string::npos);
  const size_t width = r.out.find('\n', head) - head;
  const size_t row = r.out.find("\nrmsnorm");
  REQUIRE(row != std::string::npos);
  CHECK(r.out.find('\n', row + 1) - (row + 1) == width);
}

TEST_CASE("ledger rejects bad input with exit code 2 and one message naming what and where", "[ledger_cli]") {
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"decode --model glm-6", "--model"},
      {"decode --hardware h999", "h999"},
      {"decode --parallel dp3-ep3", "256 experts"},
      {"decode --parallel tp8-pp2", "--parallel"},
      {"decode --batch 0", "--batch"},
      {"decode --context 0", "--context"},
      {"decode --context 2000000", "--context"},
      {"prefill --context 1048577", "--context"},
      {"decode --gpus 4 --parallel tp8", "--gpus"},
      {"decode --kv-layout fp4", "--kv-layout"},
      {"decode --model " + data("truncated.json"), "truncated.json: expected valid JSON"},
      {"decode --model " + data("missing_field.json"), "kv_lora_rank"},
      {"decode --model " + data("wrong_type.json"), "hidden_size"},
      {"decode --profile no-such-profile", "--profile"},
      {"decode --profile h200-sglang --profile-set warp_speed=2", "warp_speed"},
      {"decode --profile-set overlap_schedule=0", "--profile-set"},
      {"decode --profile h200-sglang --ideal", "--ideal"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Run r = run(c.args);
    CHECK(r.rc == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
    CHECK(r.out.find("terminate") == std::string::npos);
  }
}

TEST_CASE("ledger warns when the instance's KV cache cannot hold what the step prices", "[ledger_cli]") {
  // Llama-3.1-70B on 8 x H200 tp8 at 100K context holds a few dozen requests, not 1,000 (issue 45).
  const Run over = run("decode --model llama-3.1-70b --parallel tp8 --batch 1000 --context 100000");
  CHECK(over.rc == 0);
  CHECK(over.warnings.find("tokenline ledger: warning: the KV cache of 8 x h200 tp8") != std::string::npos);
  CHECK(over.warnings.find("not the 1000 of --batch 1000") != std::string::npos);
  const Run fits = run("decode --model llama-3.1-70b --parallel tp8 --batch 8 --context 100000");
  CHECK(fits.rc == 0);
  CHECK(fits.warnings.empty());
  const Run json = run("decode --model llama-3.1-70b --parallel tp8 --batch 1000 --context 100000 --json");
  CHECK(nlohmann::json::parse(json.out)["kv_warning"].get<std::string>().find("1000") != std::string::npos);
  const Run prompt = run("prefill --model llama-3.1-8b --parallel tp1 --context 100000 --hardware h100");
  CHECK(prompt.rc == 0);
  CHECK(prompt.warnings.empty());
  const Run no_room = run("prefill --model llama-3.1-70b --parallel tp2 --context 100000 --hardware h100");
  CHECK(no_room.warnings.find("warning:") != std::string::npos);
}

TEST_CASE("ledger --profile names each op's time source in tables and JSON", "[ledger_cli]") {
  const Run table =
      run("decode --model deepseek-v3 --parallel tp8 --batch 16 --context 1535 --profile h200-sglang");
  REQUIRE(table.rc == 0);
  CHECK(table.out.find("profile h200-sglang") != std::string::npos);
  const size_t row = table.out.find("\nexpert_gemm");
  REQUIRE(row != std::string::npos);
  const std::string line = table.out.substr(row + 1, table.out.find('\n', row + 1) - row - 1);
  CHECK(line.find("profile") != std::string::npos);
  const Run js =
      run("decode --model deepseek-v3 --parallel tp8 --batch 16 --context 1535 --json --profile h200-sglang "
          "--profile-set sync_step_cpu_s=0.05,sync_step_cpu_per_request_s=0,overlap_schedule=0");
  REQUIRE(js.rc == 0);
  const auto j = nlohmann::json::parse(js.out);
  bool rmsnorm_roofline = false;
  for (const auto& op : j["ops"]) {
    if (op["name"] == "expert_gemm") CHECK(op["source"] == "profile");
    if (op["name"] == "rmsnorm") rmsnorm_roofline = op["source"] == "roofline";
  }
  CHECK(rmsnorm_roofline);
  for (const auto& c : j["collectives"]) CHECK(c["source"] == "profile");
  CHECK(j["time_s"]["overhead"].get<double>() == Approx(0.05));  // no overlap: all of it
  // 50 ms of CPU time on a ~22 ms step: the profiled share is what is left, well below 1
  const double total = j["time_s"]["total"].get<double>();
  CHECK(j["time_s"]["coverage"].get<double>() == Approx(j["time_s"]["profile"].get<double>() / total));
  CHECK(total > 0.05);
}

// A measured op with a roofline part on top of its rows (vLLM's DeepGEMM MoE row buffer on Hopper,
// moe_contiguous_align): marked "profile*" with a footnote in the table, its roofline seconds in the JSON,
// counted as activation time.
TEST_CASE("ledger says which part of a measured op the roofline priced", "[ledger_cli]") {
  const std::string args =
      "decode --model deepseek-v3 --parallel tp4-ep4 --gpus 4 --batch 4 --context 1023 "
      "--engine vllm --profile-set moe_contiguous_align=128";
  const Run table = run(args);
  REQUIRE(table.rc == 0);
  const size_t row = table.out.find("\nexpert_gemm");
  REQUIRE(row != std::string::npos);
  const std::string line = table.out.substr(row + 1, table.out.find('\n', row + 1) - row - 1);
  CHECK(line.find("profile*") != std::string::npos);
  CHECK(table.out.find("* expert_gemm: ") != std::string::npos);
  const Run js = run(args + " --json");
  REQUIRE(js.rc == 0);
  const auto j = nlohmann::json::parse(js.out);
  double roofline_s = 0;
  for (const auto& op : j["ops"])
    if (op["name"] == "expert_gemm") roofline_s = op.value("roofline_s", 0.0);
  CHECK(roofline_s > 0);
  CHECK(j["time_s"]["activations"].get<double>() >= roofline_s);
  const Run plain =
      run("decode --model deepseek-v3 --parallel tp4-ep4 --gpus 4 --batch 4 --context 1023 --engine vllm");
  REQUIRE(plain.rc == 0);
  CHECK(plain.out.find("profile*") == std::string::npos);
}

// With --profile the memory section is the profile engine's, as sim and plan size it: SGLang keeps the
// whole MLA latent on every TP rank of the 143,771 MiB it reads (688,070 tokens per GPU, as
// tests/cost/memory_test.cpp derives); without, the seed's sharded KV on 141 GB (8x the tokens, less
// a fraction's worth).
TEST_CASE("ledger --profile sizes KV under the profile's engine, without under the seed's", "[ledger_cli]") {
  const std::string args = "decode --model deepseek-v3 --parallel tp8 --batch 16 --context 1535 --json";
  const Run sg = run(args + " --profile h200-sglang");
  const Run seed = run(args);
  REQUIRE(sg.rc == 0);
  REQUIRE(seed.rc == 0);
  const auto a = nlohmann::json::parse(sg.out)["kv_capacity"];
  const auto b = nlohmann::json::parse(seed.out)["kv_capacity"];
  CHECK(a["engine"] == "sglang 0.5.9");
  CHECK(b["engine"] == "seed");
  CHECK(a["tokens_per_rank"] == 688070);
  CHECK(a["bytes_per_token"].get<double>() == 8 * b["bytes_per_token"].get<double>());
  CHECK(b["usable_hbm_bytes"].get<double>() == Approx(0.9 * 1.41e11));
  const Run table =
      run("decode --model deepseek-v3 --parallel tp8 --batch 16 --context 1535 --profile h200-sglang");
  CHECK(table.out.find("Memory per GPU (sglang 0.5.9's memory rules)") != std::string::npos);
  CHECK(table.out.find("KV capacity: 688070 tokens (10751 pages of 64)") != std::string::npos);
}

TEST_CASE("ledger --engine prices from <hardware>-<engine> and names it", "[ledger_cli]") {
  const Run r =
      run("decode --model llama-3.1-70b --hardware h100 --engine vllm --parallel tp4 --batch 8 "
          "--context 2048 --json");
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["hardware"] == "h100");
  CHECK(j["profile"] == "h100-vllm");
  CHECK(j["time_s"]["coverage"].get<double>() > 0.5);
  // Issue 43: B300's own TensorRT-LLM profile (1.3.0rc20 tables); the transfer only by name.
  const Run own = run("decode --hardware b300 --engine trtllm --json");
  REQUIRE(own.rc == 0);
  CHECK(nlohmann::json::parse(own.out)["profile"] == "b300-trtllm");
  const Run moved = run("decode --hardware b300 --profile transfer:b200-trtllm --json");
  REQUIRE(moved.rc == 0);
  CHECK(moved.out.find("transfer:b200-trtllm") != std::string::npos);
}

TEST_CASE("ledger reads a checkpoint's weight format, and --weights-format overrides it", "[ledger_cli]") {
  const std::string kimi = data("hf/kimi-k2.5/config.json");
  Run r = run("decode --model " + kimi + " --parallel tp8 --json");
  REQUIRE(r.rc == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["weights"]["format"] == "int4-g32");
  CHECK(j["weights"]["source"] == "quantization_config");
  CHECK(j["left_out"].get<std::string>().find("vision_config") != std::string::npos);
  const double int4_gb = j["weights_per_gpu"]["total_bytes"].get<double>();
  r = run("decode --model " + kimi + " --parallel tp8 --json --weights-format fp8-block128");
  REQUIRE(r.rc == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["weights"]["format"] == "fp8-block128");
  CHECK(j["weights"]["source"] == "--weights-format");
  CHECK(j["weights_per_gpu"]["total_bytes"].get<double>() >
        1.5 * int4_gb);  // experts: 1 B per parameter, not 0.5625
  // A preset's header is as it was: no weights block.
  r = run("decode --json");
  REQUIRE(r.rc == 0);
  CHECK_FALSE(nlohmann::json::parse(r.out).contains("weights"));
  r = run("decode --weights-format int3");
  CHECK(r.rc == 2);
  CHECK(r.out.find("--weights-format: expected a weight format") != std::string::npos);
}

TEST_CASE("issue 44: the ledger names Nemotron 3 Super's latent MoE and Gemma 4's per-kind attention shapes",
          "[ledger_cli]") {
  const Run super =
      run("decode --model nemotron-3-super-120b-a12b-fp8 --parallel tp8 --batch 8 --context 4096");
  REQUIRE(super.rc == 0);
  CHECK(super.out.find("512 experts (top 22) in a 1024-wide latent") != std::string::npos);
  CHECK(super.out.find("latent_proj") != std::string::npos);
  CHECK(super.out.find("mamba2_scan") != std::string::npos);
  const Run gemma = run("decode --model gemma-4-31b --parallel tp2 --batch 8 --context 4096");
  REQUIRE(gemma.rc == 0);
  CHECK(gemma.out.find("attention 10 full + 50 sliding-window of 1024 tokens") != std::string::npos);
  CHECK(gemma.out.find("full layers 32 x 512 queries, 4 x 512 KV (keys as values)") != std::string::npos);
  CHECK(gemma.out.find("latent_proj") == std::string::npos);
}

// Issue 44: the ledger names the full-attention op by its layers' kind and shows the indexer only where the
// model has one (cli/ledger_command.cpp ledger_op_name).
TEST_CASE("issue 44: a ledger's attention row is named by its layer kind, the indexer shown only with one",
          "[ledger_cli]") {
  struct Case {
    const char* args;
    const char* attention;
    bool indexer;
  };
  for (const Case& c : {Case{"--model llama-3.1-70b --gpus 8", "full_attention", false},
                        Case{"--model gpt-oss-120b --gpus 8", "full_attention", false},
                        Case{"--model deepseek-v3 --gpus 8", "mla_attention", false},
                        Case{"--model glm-5.3 --gpus 8", "sparse_mla", true}}) {
    INFO(c.args);
    for (const char* phase : {"decode --batch 4 --context 4096", "prefill --context 2048 --chunk 1024"}) {
      INFO(phase);
      const Run text = run(std::string(phase) + " " + c.args);
      REQUIRE(text.rc == 0);
      CHECK(text.out.find(std::string("\n") + c.attention + " ") != std::string::npos);
      CHECK((text.out.find("sparse_mla") != std::string::npos) == c.indexer);
      CHECK((text.out.find("index GB") != std::string::npos) == c.indexer);
      CHECK((text.out.find("indexer") != std::string::npos) == c.indexer);
      CHECK((text.out.find("idx PFLOP") != std::string::npos) == (c.indexer && phase[0] == 'p'));
      const Run js = run(std::string(phase) + " " + c.args + " --json");
      REQUIRE(js.rc == 0);
      const auto j = nlohmann::json::parse(js.out);
      bool named = false;
      for (const auto& op : j["ops"]) named = named || op["name"] == c.attention;
      CHECK(named);
      CHECK(j["per_token_layer_bytes"].contains("indexer"));  // the JSON's fields stay, whatever the model
    }
    const Run pd = run(std::string("pd --context 4096 ") + c.args);
    REQUIRE(pd.rc == 0);
    CHECK((pd.out.find("\nindexer ") != std::string::npos) == c.indexer);
  }
}

TEST_CASE("ledger prefill's default chunk is at most the model's context, a --chunk beyond it refused",
          "[cli][ledger]") {
  const std::string model = " --model " + data("hf/nemotron-h-56b") + " --hardware h200 --gpus 8";
  const Run d =
      run("prefill" + model + " --context 4096");  // Nemotron-H-56B-Base-8K: 8,192 tokens of context
  CHECK(d.rc == 0);
  CHECK_THAT(d.out, Catch::Contains("| chunk 8192 |"));
  const Run big = run("prefill" + model + " --context 4096 --chunk 32768");
  CHECK(big.rc == 2);
  CHECK_THAT(big.out, Catch::Contains("--chunk") && Catch::Contains("found 32768"));
}
