#include "plan/sim_invocation.h"

namespace tokenline {
namespace {

bool shell_safe(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s) {
    const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                       ch == '-' || ch == '_' || ch == '.' || ch == '/' || ch == ',' || ch == '=' ||
                       ch == ':';
    if (!plain) return false;
  }
  return true;
}

std::string quoted(const std::string& s) {
  if (shell_safe(s)) return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

std::vector<std::string> sim_arguments(const PlanTarget& t, const Candidate& c, const std::string& time_scale,
                                       const std::string& out_dir) {
  std::vector<std::string> a = {"sim", "--model", t.model};
  if (!t.cluster.empty()) {
    a.insert(a.end(), {"--cluster", t.cluster});
  } else {
    a.insert(a.end(), {"--hardware", t.hardware});
  }
  // Named even when it is plan's default (the embedded Mooncake head): sim's own default is another workload.
  a.insert(a.end(), {"--workload", t.workload.empty() ? std::string("default") : t.workload});
  a.insert(a.end(), {"--parallel", c.parallel_arg()});
  if (c.pd) {
    a.insert(a.end(), {"--pd", c.pd_arg()});
  } else {
    a.insert(a.end(), {"--instances", std::to_string(c.instances)});
  }
  a.insert(a.end(), {"--chunk", std::to_string(c.chunk_tokens), "--max-running",
                     std::to_string(c.max_running), "--time-scale", time_scale});
  if (t.max_requests > 0) a.insert(a.end(), {"--max-requests", std::to_string(t.max_requests)});
  if (t.seed != 0) a.insert(a.end(), {"--seed", std::to_string(t.seed)});
  if (!t.slo.empty()) a.insert(a.end(), {"--slo", t.slo});
  // Without a profile (plan --roofline, or no profile of any GPU) plan prices by the roofline, its ledger
  // pruning too; sim would pick a shipped profile.
  if (!t.profile.empty()) {
    a.insert(a.end(), {"--profile", t.profile});
  } else {
    a.push_back("--roofline");
  }
  if (!t.profile_set.empty()) a.insert(a.end(), {"--profile-set", t.profile_set});
  if (!t.weights_format.empty()) a.insert(a.end(), {"--weights-format", t.weights_format});
  a.insert(a.end(), {"--out", out_dir});
  return a;
}

std::string sim_command_line(const std::vector<std::string>& arguments) {
  std::string line = "tokenline";
  for (const std::string& a : arguments) line += " " + quoted(a);
  return line;
}

}  // namespace tokenline
