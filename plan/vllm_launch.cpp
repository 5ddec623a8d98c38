#include "plan/vllm_launch.h"

#include "cost/step_cost.h"

namespace tokenline {
namespace {

// vLLM's KV connector for disaggregated prefill (NIXL moves the prefill server's KV to the decode server).
constexpr const char* kPdConnector = R"('{"kv_connector":"NixlConnector","kv_role":"kv_both"}')";

std::string server_line(const Parallel& p, const Candidate& c, const std::string& model_path, bool pd) {
  std::string s = "vllm serve " + model_path + " --tensor-parallel-size " + std::to_string(p.tp);
  if (p.dp()) s += " --data-parallel-size " + std::to_string(p.dp_attention);
  if (p.ep > 1) s += " --enable-expert-parallel";
  s += " --max-num-batched-tokens " + std::to_string(c.chunk_tokens);
  s += " --max-num-seqs " + std::to_string(c.max_running);
  if (pd) s += std::string(" --kv-transfer-config ") + kPdConnector;
  return s;
}

std::string count_note(int32_t n, const std::string& what, const Parallel& p) {
  std::string s = "# " + std::to_string(n) + " " + what + (n == 1 ? "" : "s") + " of";
  const int nodes = (p.gpus() + kNvlinkDomainGpus - 1) / kNvlinkDomainGpus;
  if (nodes > 1)
    s += " " + std::to_string(nodes) + " nodes each (a Ray cluster over them: vLLM's multi-node serving)";
  return s + ":";
}

}  // namespace

std::vector<std::string> vllm_launch_lines(const Candidate& c, const std::string& model_path) {
  std::vector<std::string> lines;
  if (!c.pd) {
    lines.push_back(count_note(c.instances, "server", c.layout));
    lines.push_back(server_line(c.layout, c, model_path, false));
    if (c.instances > 1)
      lines.push_back("# a round-robin load balancer in front of the " + std::to_string(c.instances) +
                      " servers' URLs");
    return lines;
  }
  lines.push_back(count_note(c.prefill_instances, "prefill server", c.prefill));
  lines.push_back(server_line(c.prefill, c, model_path, true));
  lines.push_back(count_note(c.instances, "decode server", c.layout));
  lines.push_back(server_line(c.layout, c, model_path, true));
  lines.push_back(
      "# a proxy that sends each request to a prefill server (max_tokens 1), then to a decode server with "
      "its "
      "KV handle: vLLM's examples/online_serving/disaggregated_serving");
  return lines;
}

}  // namespace tokenline
