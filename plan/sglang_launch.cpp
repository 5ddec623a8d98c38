#include "plan/sglang_launch.h"

#include "cost/step_cost.h"

namespace tokenline {
namespace {

// One server of layout p: its parallelism flags, and the per-rank knobs scaled to SGLang's per-server ones.
std::string server_line(const Parallel& p, const Candidate& c, const std::string& model_path,
                        const std::string& role, MoeComm moe_comm) {
  std::string s = "python3 -m sglang.launch_server --model-path " + model_path;
  s += " --tp-size " + std::to_string(p.gpus());
  if (p.dp()) s += " --dp-size " + std::to_string(p.dp_attention) + " --enable-dp-attention";
  if (p.ep > 1) s += " --ep-size " + std::to_string(p.ep);
  // server_args.py moe_a2a_backend defaults to "none" (no all-to-all); DeepEP's is asked for by name.
  if (p.ep > 1 && moe_comm == MoeComm::kAllToAll) s += " --moe-a2a-backend deepep";
  s += " --chunked-prefill-size " + std::to_string(c.chunk_tokens * p.dp_attention);
  s += " --max-running-requests " + std::to_string(static_cast<int64_t>(c.max_running) * p.dp_attention);
  if (!role.empty()) s += " --disaggregation-mode " + role;
  const int nodes = (p.gpus() + kNvlinkDomainGpus - 1) / kNvlinkDomainGpus;
  if (nodes > 1) {
    s += " --nnodes " + std::to_string(nodes) + " --node-rank <0.." + std::to_string(nodes - 1) +
         "> --dist-init-addr <first-node>:5000";
  }
  return s;
}

std::string count_note(int32_t n, const std::string& what) {
  return "# " + std::to_string(n) + " " + what + (n == 1 ? "" : "s") + " of:";
}

}  // namespace

std::vector<std::string> sglang_launch_lines(const Candidate& c, const std::string& model_path,
                                             MoeComm moe_comm) {
  std::vector<std::string> lines;
  if (!c.pd) {
    lines.push_back(count_note(c.instances, "server"));
    lines.push_back(server_line(c.layout, c, model_path, "", moe_comm));
    if (c.instances > 1) {
      lines.push_back("python3 -m sglang_router.launch_router --worker-urls <server-1-url> ... <server-" +
                      std::to_string(c.instances) + "-url>");
    }
    return lines;
  }
  lines.push_back(count_note(c.prefill_instances, "prefill server"));
  lines.push_back(server_line(c.prefill, c, model_path, "prefill", moe_comm));
  lines.push_back(count_note(c.instances, "decode server"));
  lines.push_back(server_line(c.layout, c, model_path, "decode", moe_comm));
  lines.push_back(
      "python3 -m sglang_router.launch_router --pd-disaggregation --prefill <prefill-url> 8998 --decode "
      "<decode-url>  # 8998: the prefill servers' default --disaggregation-bootstrap-port");
  return lines;
}

}  // namespace tokenline
