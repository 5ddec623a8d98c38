#include "calibrate/fit_parameter.h"

#include "common/input_error.h"

namespace tokenline {

const std::vector<FitParameter>& fit_parameters() {
  static const std::vector<FitParameter> all = {
      {"kernel_launch_s", FitTarget::kHardware, "overheads", "kernel_launch_s", 0.5e-6, 30e-6, true,
       "the fixed cost of each kernel in a step (launch gap, tail effects, small-kernel floor) that a "
       "roofline "
       "does not see; bounds: 0.5 us (back-to-back CUDA graph replay) to 30 us (eager launch with Python "
       "scheduling in between)",
       0},
      {"collective_launch_s", FitTarget::kHardware, "overheads", "collective_launch_s", 1e-6, 50e-6, true,
       "the fixed cost of each collective (synchronisation, protocol) above its bytes / bandwidth; bounds: 1 "
       "us "
       "(one NVLink hop) to 50 us (NCCL in eager mode on 8 GPUs)",
       0},
      {"gemm_efficiency", FitTarget::kHardware, "efficiency", "gemm", 0.2, 1.0, false,
       "achieved / peak FLOP/s of GEMMs while no measured profile prices them; bounds: small-M FP8 GEMMs "
       "reach "
       "~20% of peak, 1.0 is the datasheet",
       0},
      {"attention_efficiency", FitTarget::kHardware, "efficiency", "attention", 0.2, 1.0, false,
       "achieved / peak FLOP/s of attention kernels while no measured profile prices them", 0},
      {"hbm_efficiency", FitTarget::kHardware, "efficiency", "hbm", 0.4, 1.0, false,
       "achieved / peak HBM bandwidth of memory-bound kernels while no measured profile prices them; bounds: "
       "decode GEMVs and paged attention reach 40-95% of peak",
       0},
      {"step_cpu_overhead_s", FitTarget::kProfileSet, "timing", "step_cpu_overhead_s", 0.0, 5e-3, false,
       "the scheduler's CPU time per step (batch preparation, sampling bookkeeping, detokenisation) that no "
       "kernel table measures; with overlap scheduling a step costs max(GPU, CPU); bounds: 0 to 5 ms "
       "(SGLang's "
       "per-step Python scheduler stays in the low milliseconds at hundreds of requests)",
       0.0},
      {"step_cpu_per_request_s", FitTarget::kProfileSet, "timing", "step_cpu_per_request_s", 0.0, 100e-6,
       false,
       "the scheduler's CPU time per request in a step (sampling output processing, detokenisation and "
       "streaming messages, per-request batch bookkeeping); with overlap scheduling a step costs max(GPU, "
       "CPU), so it shows only where the GPU step is short for its batch (small models, high TP, hundreds "
       "of requests); bounds: 0 to 100 us (SGLang's Python loop spends tens of us per request per step)",
       0.0},
      {"sync_step_cpu_s", FitTarget::kProfileSet, "timing", "sync_step_cpu_s", 0.0, 10e-3, false,
       "vLLM without async scheduling (overlap_schedule 0): the serial CPU time per step while the GPU "
       "idles, "
       "from one step's sampled-token sync to the next step's first launch (schedule, update_from_output, "
       "the workers' input preparation); read in place of step_cpu_overhead_s; bounds: 0 to 10 ms (public "
       "nsys readings of vLLM V1's inter-step gap: 1-6 ms at 32-256 requests)",
       0.0},
      {"sync_step_cpu_per_request_s", FitTarget::kProfileSet, "timing", "sync_step_cpu_per_request_s", 0.0,
       100e-6, false,
       "vLLM without async scheduling: the serial CPU time per request in a step (the per-request share of "
       "that gap); read in place of step_cpu_per_request_s; bounds: 0 to 100 us",
       0.0},
      {"request_latency_s", FitTarget::kProfileSet, "timing", "request_latency_s", 0.0, 0.3, false,
       "the mean of a request's time outside the engine's steps, drawn per request (exponential) and never "
       "a queue: the HTTP server, tokenization and hand-off to the scheduler, and the first token's way "
       "back (detokenization, streaming); it adds to TTFT and to each client's cycle; bounds: 0 to 300 ms",
       0.0},
      {"first_token_latency_s", FitTarget::kProfileSet, "timing", "first_token_latency_s", 0.0, 0.5, false,
       "the time between the step that produces a request's first token and the client receiving it, "
       "while the request decodes on: the serving path's first response (HTTP server, tokenization, "
       "detokenization, the stream's first chunk) that no step contains; it adds to TTFT only, so "
       "it does not take requests out of the engine's batch as request_latency_s does; bounds: 0 to 500 ms",
       0.0},
      {"pd_first_token_latency_s", FitTarget::kProfileSet, "timing", "pd_first_token_latency_s", 0.0, 0.5,
       false,
       "disaggregated runs only: what a disaggregated request's first token costs beyond an aggregated one's "
       "path, its prefill, its KV on the link and its first decode step - Dynamo's front end and request "
       "plane, SGLang's PD bootstrap and the decode worker's transfer polling; it adds to TTFT only; bounds: "
       "0 to 500 ms",
       0.0},
      {"pd_handoff_per_token_s", FitTarget::kProfileSet, "timing", "pd_handoff_per_token_s", 0.0, 100e-6,
       false,
       "disaggregated runs only: the time a hand-off holds its prefill rank's KV sender per prompt token "
       "before the KV leaves (NIXL transfer descriptors posted one per token and layer with page size 1, "
       "one request after another); bounds: 0 to 100 us per token (1.6 us per descriptor of a 61-layer "
       "model, 0.8 s for an 8,192-token prompt)",
       0.0},
      {"step_floor_per_layer_s", FitTarget::kProfileSet, "timing", "step_floor_per_layer_s", 0.0, 400e-6,
       false,
       "the shortest a step's GPU time runs per decoder layer: a decode step at a few requests is a chain of "
       "some 20 small kernels per layer (norms, RoPE, activation quantization, top-k, expert alignment, "
       "residual adds besides the tabled GEMMs, attention, MoE and all-reduce), each with a latency floor "
       "the tables' rows do not add up to; the step costs max(its ops, layers x floor); bounds: 0 to 400 us",
       0.0},
      {"eager_host_per_mla_layer_s", FitTarget::kProfileSet, "timing", "eager_host_per_mla_layer_s", 0.0,
       5e-3, false,
       "a step that holds a context chunk runs outside a CUDA graph (TensorRT-LLM's PyTorch backend captures "
       "generation-only steps by default) and the host launches each MLA decoder layer's kernels one by one: "
       "the step lasts at least its MLA layers x this; bounds: 0 to 5 ms a layer",
       0.0},
      {"eager_launch_gap_s", FitTarget::kProfileSet, "timing", "eager_launch_gap_s", 1e-6, 20e-6, true,
       "CPU time to launch one kernel outside a CUDA graph (prefill and large decode batches); bounds: 1 us "
       "(C++ launch) to 20 us (Python-side launch with argument packing)",
       4e-6},
  };
  return all;
}

std::vector<FitParameter> parse_fit_list(std::string_view names) {
  std::string known;
  for (const FitParameter& p : fit_parameters()) known += (known.empty() ? "" : ", ") + p.name;
  std::vector<FitParameter> out;
  size_t begin = 0;
  while (begin <= names.size()) {
    size_t end = names.find(',', begin);
    if (end == std::string_view::npos) end = names.size();
    const std::string_view name = names.substr(begin, end - begin);
    const FitParameter* found = nullptr;
    for (const FitParameter& p : fit_parameters()) {
      if (p.name == name) found = &p;
    }
    if (found == nullptr) throw InputError("--fit", "names from " + known, "'" + std::string(name) + "'");
    for (const FitParameter& p : out) {
      if (p.name == name) throw InputError("--fit", "each name once", "'" + std::string(name) + "' twice");
    }
    out.push_back(*found);
    begin = end + 1;
  }
  return out;
}

}  // namespace tokenline
