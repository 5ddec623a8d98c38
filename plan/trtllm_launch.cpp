#include "plan/trtllm_launch.h"

#include "engine/model/ledger.h"

namespace tokenline {
namespace {

// The extra LLM API options of one server role: attention DP where the layout has it, chunked context where
// the plan's chunk is below a prompt (TensorRT-LLM's default runs each prompt whole), KV for PD transfer.
std::string options_line(const Parallel& p, bool pd, const std::string& file) {
  std::string y = "enable_chunked_prefill: true\\n";
  if (p.dp()) y += "enable_attention_dp: true\\n";
  if (pd) y += "cache_transceiver_config:\\n  backend: DEFAULT\\n";
  return "printf '" + y + "' > " + file;
}

std::string server_line(const Parallel& p, const Candidate& c, const std::string& model_path,
                        const std::string& file) {
  std::string s = "trtllm-serve " + model_path + " --backend pytorch --tp_size " + std::to_string(p.gpus());
  if (p.ep > 1) s += " --ep_size " + std::to_string(p.ep);
  s += " --max_num_tokens " + std::to_string(c.chunk_tokens);
  s += " --max_batch_size " + std::to_string(c.max_running);
  s += " --extra_llm_api_options " + file;
  return s;
}

std::string count_note(int32_t n, const std::string& what, const Parallel& p) {
  std::string s = "# " + std::to_string(n) + " " + what + (n == 1 ? "" : "s") + " of";
  const int nodes = (p.gpus() + kNvlinkDomainGpus - 1) / kNvlinkDomainGpus;
  if (nodes > 1)
    s += " " + std::to_string(nodes) + " nodes each (launched with mpirun / srun, one rank per GPU)";
  return s + ":";
}

}  // namespace

std::vector<std::string> trtllm_launch_lines(const Candidate& c, const std::string& model_path) {
  std::vector<std::string> lines;
  if (!c.pd) {
    lines.push_back(count_note(c.instances, "server", c.layout));
    lines.push_back(options_line(c.layout, false, "extra.yaml"));
    lines.push_back(server_line(c.layout, c, model_path, "extra.yaml"));
    if (c.instances > 1)
      lines.push_back("# a round-robin load balancer in front of the " + std::to_string(c.instances) +
                      " servers' URLs");
    return lines;
  }
  lines.push_back(count_note(c.prefill_instances, "context server", c.prefill));
  lines.push_back(options_line(c.prefill, true, "ctx.yaml"));
  lines.push_back(server_line(c.prefill, c, model_path, "ctx.yaml"));
  lines.push_back(count_note(c.instances, "generation server", c.layout));
  lines.push_back(options_line(c.layout, true, "gen.yaml"));
  lines.push_back(server_line(c.layout, c, model_path, "gen.yaml"));
  lines.push_back(
      "# trtllm-serve disaggregated -c disagg.yaml: its context_servers and generation_servers list the "
      "servers' URLs (TensorRT-LLM's disaggregated serving)");
  return lines;
}

}  // namespace tokenline
