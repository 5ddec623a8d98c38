#include "cost/engine_behavior_json.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {
EngineBehavior parse(const std::string& engine_object) {
  return parse_engine_behavior("{\"timing\": {\"ignored\": 1}, \"engine\": " + engine_object + "}", "p.json");
}
}  // namespace

TEST_CASE("An empty engine object is SGLang's defaults, name picks another base", "[engine_behavior][json]") {
  const EngineBehavior b = parse("{}");
  CHECK(b.engine == "sglang");
  CHECK(b.admission == Admission::kEstimate);
  CHECK(b.ratio.init == 0.7);
  CHECK(parse("{\"name\": \"vllm\"}").admission == Admission::kIncremental);
  CHECK(parse("{\"name\": \"seed\"}").kv_placement == KvPlacement::kShardedOverTp);
}

TEST_CASE("Fields take bare values, {value, source} or auto", "[engine_behavior][json]") {
  const EngineBehavior b = parse(R"({
    "name": "sglang", "version": "0.5.9", "description": "x",
    "kv_cache_dtype": {"value": "fp8_e4m3", "source": "--kv-cache-dtype"},
    "kv_placement": "sharded",
    "mem_fraction_static": {"value": 0.8, "source": "--mem-fraction-static"},
    "device_memory_bytes": "auto",
    "chunked_prefill_size": 4096, "chunk_split_over_dp": {"value": false, "source": "s"},
    "cuda_graph_max_bs": {"value": "auto", "source": "s"},
    "max_running_requests": 256, "mixed_steps": true, "plan_ahead": true, "admission": "incremental",
    "reserved_memory_mib": {"base": 256, "floor": {"value": 0, "source": "s"}},
    "new_token_ratio": {"init": 0.5, "min_factor": 0.2, "decay_steps": 100, "retract_decode_steps": 10,
                        "clip_max_new_tokens": 2048, "dp_attention_conservativeness": 0.5}
  })");
  CHECK_FALSE(b.kv_layout_auto);
  CHECK(b.kv_layout == KvLayout::kFp8E4m3);
  CHECK(b.kv_placement == KvPlacement::kShardedOverTp);
  CHECK(b.mem_fraction_static == 0.8);
  CHECK(b.device_memory_bytes == 0);
  CHECK(b.chunked_prefill_size == 4096);
  CHECK_FALSE(b.chunk_split_over_dp);
  CHECK(b.cuda_graph_max_bs == 0);
  CHECK(b.max_running_requests == 256);
  CHECK(b.mixed_steps);
  CHECK(b.plan_ahead);
  CHECK(b.admission == Admission::kIncremental);
  CHECK(b.reserve.base_mib == 256);
  CHECK(b.reserve.floor_mib == 0);
  CHECK(b.reserve.per_chunk_token_mib == 1.5);  // absent: the base's
  CHECK(b.ratio.init == 0.5);
  CHECK(b.ratio.decay_steps == 100);
  CHECK(b.ratio.clip_max_new_tokens == 2048);
  CHECK(b.ratio.dp_attention_conservativeness == 0.5);
}

TEST_CASE("Bad engine objects: one message naming the file, the field, expected and found",
          "[engine_behavior][json]") {
  auto fails = [](const std::string& text, const char* field, const char* found) {
    INFO(text);
    CHECK_THROWS_WITH(parse_engine_behavior(text, "p.json"),
                      Catch::Contains("p.json") && Catch::Contains(field) && Catch::Contains(found));
  };
  fails(R"({"engine": {"mem_fraction_static": 1.5}})", "engine: mem_fraction_static", "1.5");
  fails(R"({"engine": {"mem_fraction_static": "lots"}})", "engine: mem_fraction_static", "\"lots\"");
  fails(R"({"engine": {"startup_memory_mib": -1}})", "engine: startup_memory_mib", "-1");
  fails(R"({"engine": {"startup_memory_mib": "auto"}})", "engine: startup_memory_mib", "\"auto\"");
  fails(R"({"engine": {"admission": "eager"}})", "engine: admission", "'eager'");
  fails(R"({"engine": {"mixed_steps": 1}})", "engine: mixed_steps", "1");
  fails(R"({"engine": {"chunked_prefill_size": 8192.5}})", "engine: chunked_prefill_size", "8192.5");
  fails(R"({"engine": {"mem_fraction": 0.9}})", "engine: mem_fraction", "unknown field");
  fails(R"({"engine": {"new_token_ratio": {"init": 2}}})", "new_token_ratio: init", "2");
  fails(R"({"engine": {"new_token_ratio": {"decay": 2}}})", "new_token_ratio: decay", "unknown field");
  fails(R"({"engine": {"name": "tgi"}})", "engine: name", "'tgi'");
  fails(R"({"engine": {"kv_cache_dtype": "int4"}})", "engine: kv_cache_dtype", "'int4'");
  fails(R"({"engine": {"cuda_graph_max_bs": {"source": "s"}}})", "engine: cuda_graph_max_bs",
        "without \"value\"");
  fails(R"({"engine": 3})", "engine", "3");
  fails(R"({"timing": {}})", "p.json", "engine");
  fails("{not json", "p.json", "parse error");
}

// The engine blocks of the shipped profiles (topologies/profiles/h200-{sglang,vllm}/profile.json, "engine").
TEST_CASE("The h200-sglang and h200-vllm profiles' engine blocks parse to the built-in behaviours",
          "[engine_behavior][json]") {
  const std::shared_ptr<OpProfile> sp = load_op_profile("h200-sglang");
  REQUIRE(sp->has_engine);
  const EngineBehavior& s = sp->engine;
  const EngineBehavior d = sglang_behavior();
  CHECK(s.engine == "sglang");
  CHECK(s.admission == d.admission);
  CHECK(s.mixed_steps == d.mixed_steps);
  CHECK(s.kv_placement == d.kv_placement);
  // SGLang's "auto", per GPU: BF16 on the SM90 GPUs for every model tokenline reads (DSA models included)
  CHECK(s.kv_layout_auto);
  REQUIRE(s.kv_auto_by_gpu.size() == 2);
  CHECK(s.kv_auto_by_gpu[0] == std::pair<std::string, KvLayout>{"h100", KvLayout::kBf16});
  CHECK(s.kv_auto_by_gpu[1] == std::pair<std::string, KvLayout>{"h200", KvLayout::kBf16});
  CHECK(s.mem_fraction_static == 0);
  CHECK(s.chunked_prefill_size == 0);
  CHECK(s.ratio.init == d.ratio.init);
  CHECK(s.ratio.min_factor == d.ratio.min_factor);
  CHECK(s.ratio.decay_steps == d.ratio.decay_steps);
  CHECK(s.reserve.per_chunk_token_mib == d.reserve.per_chunk_token_mib);
  // The device as the engine reads it (143,771 MiB), not the datasheet's 141 GB, less what start-up holds.
  CHECK(s.device_memory_bytes == 143771.0 * 1024 * 1024);
  CHECK(s.startup_memory_bytes == 3186.0 * 1024 * 1024);
  CHECK_FALSE(s.plan_ahead);  // SGLang plans ahead; the profile keeps it off, and says why
  const std::shared_ptr<OpProfile> vp = load_op_profile("h200-vllm");
  REQUIRE(vp->has_engine);
  const EngineBehavior& v = vp->engine;
  CHECK(v.admission == Admission::kIncremental);
  CHECK(v.mem_fraction_static == 0.9);
  CHECK(v.max_running_requests == 1024);
  CHECK(v.device_memory_bytes == s.device_memory_bytes);
  CHECK(v.startup_memory_bytes == s.startup_memory_bytes);
}

TEST_CASE("A run stores the --kv-layout flag's KV, else the engine's dtype, else the model's",
          "[engine_behavior]") {
  const EngineBehavior fp8 = parse(R"({"kv_cache_dtype": "fp8_e4m3"})");
  const EngineBehavior automatic = parse(R"({"kv_cache_dtype": "auto"})");
  const Hardware h200 = load_hardware("h200");
  const Hardware b200 = load_hardware("b200");
  CHECK(run_kv_layout(&fp8, KvLayout::kBf16, "", h200) == KvLayout::kFp8E4m3);
  CHECK(run_kv_layout(&automatic, KvLayout::kFp8DsMla, "", h200) == KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(nullptr, KvLayout::kFp8DsMla, "", h200) == KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(&fp8, KvLayout::kFp8DsMla, "bf16", h200) == KvLayout::kBf16);
  CHECK_THROWS_AS(run_kv_layout(&fp8, KvLayout::kBf16, "int4", h200), InputError);
  // The built-in h200-sglang profile: BF16 on the H200 whatever the model's own layout.
  const auto sglang = load_op_profile("h200-sglang");
  CHECK(run_kv_layout(profile_engine(sglang.get()), KvLayout::kFp8DsMla, "", h200) == KvLayout::kBf16);
  // The same block on a B200 (SM100): SGLang's auto there is the model's layout (FP8 for a DSA model).
  CHECK(run_kv_layout(profile_engine(sglang.get()), KvLayout::kFp8DsMla, "", b200) == KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(profile_engine(sglang.get()), KvLayout::kBf16, "", b200) == KvLayout::kBf16);
}

// TensorRT-LLM's KvCacheConfig.dtype "auto" keeps the checkpoint's kv_cache_quant_algo; SGLang's and
// vLLM's auto is the model's dtype whatever the checkpoint says.
TEST_CASE("TensorRT-LLM's auto stores the checkpoint's FP8 KV, SGLang's and vLLM's do not",
          "[engine_behavior]") {
  const Hardware h200 = load_hardware("h200");
  const EngineBehavior trt = trtllm_behavior();
  CHECK(run_kv_layout(&trt, KvLayout::kBf16, "", h200, "FP8") == KvLayout::kFp8E4m3);
  CHECK(run_kv_layout(&trt, KvLayout::kFp8DsMla, "", h200, "FP8") == KvLayout::kFp8DsMla);  // already FP8
  CHECK(run_kv_layout(&trt, KvLayout::kBf16, "", h200, "") == KvLayout::kBf16);
  CHECK(run_kv_layout(&trt, KvLayout::kBf16, "", h200, "NVFP4") == KvLayout::kBf16);    // no NVFP4 GQA layout
  CHECK(run_kv_layout(&trt, KvLayout::kBf16, "bf16", h200, "FP8") == KvLayout::kBf16);  // the flag wins
  for (const char* name : {"h200-trtllm", "b200-trtllm"}) {
    const auto p = load_op_profile(name);
    CHECK(run_kv_layout(profile_engine(p.get()), KvLayout::kBf16, "", h200, "FP8") == KvLayout::kFp8E4m3);
  }
  for (const char* name : {"h200-sglang", "h200-vllm", "b200-vllm"}) {
    const auto p = load_op_profile(name);
    CHECK(run_kv_layout(profile_engine(p.get()), KvLayout::kBf16, "", h200, "FP8") == KvLayout::kBf16);
  }
}

TEST_CASE("kv_cache_dtype's auto_by_gpu names what auto is per GPU, only beside auto",
          "[engine_behavior][json]") {
  const EngineBehavior b =
      parse(R"({"kv_cache_dtype": {"value": "auto", "auto_by_gpu": {"h200": "bf16"}, "source": "s"}})");
  CHECK(run_kv_layout(&b, KvLayout::kFp8DsMla, "", load_hardware("h200")) == KvLayout::kBf16);
  CHECK(run_kv_layout(&b, KvLayout::kFp8DsMla, "", load_hardware("h100")) == KvLayout::kFp8DsMla);
  CHECK(run_kv_layout(&b, KvLayout::kFp8DsMla, "fp8_e4m3", load_hardware("h200")) == KvLayout::kFp8E4m3);
  CHECK_THROWS_AS(parse(R"({"kv_cache_dtype": {"value": "bf16", "auto_by_gpu": {"h200": "bf16"}}})"),
                  InputError);
  CHECK_THROWS_AS(parse(R"({"kv_cache_dtype": {"value": "auto", "auto_by_gpu": {"h200": "int4"}}})"),
                  InputError);
  CHECK_THROWS_AS(parse(R"({"kv_cache_dtype": {"value": "auto", "auto_by_gpu": ["h200"]}})"), InputError);
}

TEST_CASE("Issue 43: TensorRT-LLM's batch waiting and attention-DP balancing in the engine block",
          "[engine_behavior][json][trtllm]") {
  const EngineBehavior b = parse(R"({"name": "trtllm",
    "batch_wait_timeout_iters": {"value": 40, "source": "s"}, "batch_wait_max_tokens_ratio": 0.8,
    "attention_dp_balance": true, "attention_dp_timeout_iters": 60, "attention_dp_batching_wait_iters": 0,
    "dp_assign": "room"})");
  CHECK(b.dp_assign == PlacementPolicy::kRoom);
  CHECK(b.batch_wait_timeout_iters == 40);
  CHECK(b.batch_wait_max_tokens_ratio == 0.8);
  CHECK(b.attention_dp_balance);
  CHECK(b.attention_dp_timeout_iters == 60);
  CHECK(b.attention_dp_batching_wait_iters == 0);
  CHECK_THROWS_WITH(parse(R"({"batch_wait_max_tokens_ratio": 1.5})"),
                    Catch::Contains("engine: batch_wait_max_tokens_ratio") && Catch::Contains("1.5"));
  CHECK_THROWS_WITH(parse(R"({"dp_assign": "random"})"),
                    Catch::Contains("engine: dp_assign") && Catch::Contains("'random'"));
  CHECK_THROWS_WITH(parse(R"({"attention_dp_timeout_iters": -1})"),
                    Catch::Contains("engine: attention_dp_timeout_iters") && Catch::Contains("-1"));
  // The shipped trtllm profiles state TensorRT-LLM's defaults: both off.
  for (const char* name : {"h200-trtllm", "b200-trtllm", "h100-trtllm"}) {
    INFO(name);
    const std::shared_ptr<OpProfile> p = load_op_profile(name);
    const EngineBehavior d = trtllm_behavior();
    CHECK(p->engine.batch_wait_timeout_iters == d.batch_wait_timeout_iters);
    CHECK(p->engine.batch_wait_max_tokens_ratio == d.batch_wait_max_tokens_ratio);
    CHECK(p->engine.attention_dp_balance == d.attention_dp_balance);
    CHECK(p->engine.attention_dp_timeout_iters == d.attention_dp_timeout_iters);
    CHECK(p->engine.attention_dp_batching_wait_iters == d.attention_dp_batching_wait_iters);
    CHECK(p->engine.dp_assign == PlacementPolicy::kLeastLoad);
  }
}
