#include "calibrate/sim_point.h"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include "calibrate/process_pool.h"
#include "common/input_error.h"
#include "traces/request_compare.h"
#include "traces/request_row.h"

namespace tokenline {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string pd_layouts(const E2ePoint& p, const std::string& where) {
  std::string list;
  for (int i = 0; i < p.prefill.workers; ++i)
    list += (list.empty() ? "" : ",") + parallel_name(p.prefill, where + " prefill");
  for (int i = 0; i < p.decode.workers; ++i) list += "," + parallel_name(p.decode, where + " decode");
  return list;
}

// An option ("--name" or "--name=value") and the words after it up to the next option.
struct OptionGroup {
  std::string name;
  std::vector<std::string> words;
};

std::vector<OptionGroup> option_groups(const std::vector<std::string>& args) {
  std::vector<OptionGroup> groups;
  for (const std::string& a : args) {
    if (a.rfind("--", 0) == 0 || groups.empty()) groups.push_back({a.substr(0, a.find('=')), {}});
    groups.back().words.push_back(a);
  }
  return groups;
}

// The engine's flags in layers, later ones replacing an earlier layer's option of the same name (sim
// refuses an option given twice); every --profile-set merges into one, in layer order, a later name
// replacing an earlier one (sim refuses a name given twice too).
std::vector<std::string> layered_options(std::initializer_list<const std::vector<std::string>*> layers) {
  std::vector<OptionGroup> kept;
  std::vector<std::pair<std::string, std::string>> sets_by_name;  // name, "name=value"
  const auto add_sets = [&](const std::string& sets) {
    std::istringstream items(sets);
    for (std::string item; std::getline(items, item, ',');) {
      if (item.empty()) continue;
      const std::string name = item.substr(0, item.find('='));
      std::erase_if(sets_by_name, [&](const auto& kv) { return kv.first == name; });
      sets_by_name.emplace_back(name, item);
    }
  };
  for (const std::vector<std::string>* layer : layers) {
    for (OptionGroup& g : option_groups(*layer)) {
      if (g.name == "--profile-set") {
        const size_t eq = g.words[0].find('=');
        if (eq != std::string::npos) add_sets(g.words[0].substr(eq + 1));
        for (size_t i = 1; i < g.words.size(); ++i) add_sets(g.words[i]);
        continue;
      }
      std::erase_if(kept, [&](const OptionGroup& k) { return k.name == g.name; });
      kept.push_back(std::move(g));
    }
  }
  std::vector<std::string> out;
  for (OptionGroup& g : kept) out.insert(out.end(), g.words.begin(), g.words.end());
  std::string profile_sets;
  for (const auto& [name, item] : sets_by_name) profile_sets += (profile_sets.empty() ? "" : ",") + item;
  if (!profile_sets.empty()) out.insert(out.end(), {"--profile-set", profile_sets});
  return out;
}

// A synthetic length spec: fixed, or uniform from the shortest length the row's client drew to `tokens`.
std::string length_distribution(int64_t tokens, double range_ratio) {
  const int64_t low = shortest_length(tokens, range_ratio);
  if (low >= tokens) return "fixed:" + std::to_string(tokens);
  return "uniform:" + std::to_string(low) + ":" + std::to_string(tokens);
}

}  // namespace

std::string option_value(const std::vector<std::string>& args, const std::string& option) {
  std::string value;
  for (const OptionGroup& g : option_groups(args)) {
    if (g.name != option) continue;
    const size_t eq = g.words[0].find('=');
    value = eq != std::string::npos ? g.words[0].substr(eq + 1) : g.words.size() > 1 ? g.words[1] : "";
  }
  return value;
}

std::string parallel_name(const E2eLayout& l, const std::string& where) {
  const int gpus = l.tp * l.attention_dp;
  if (l.moe_ep > 1 && l.moe_tp * l.moe_ep != gpus) {
    throw InputError(where + ": moe_tp_size x moe_ep_size",
                     "the instance's GPUs, tp x attention_dp = " + std::to_string(gpus),
                     std::to_string(l.moe_tp) + " x " + std::to_string(l.moe_ep));
  }
  std::string name;
  if (l.attention_dp > 1) name = "dp" + std::to_string(l.attention_dp);
  if (l.tp > 1 || l.attention_dp == 1) name += (name.empty() ? "tp" : "-tp") + std::to_string(l.tp);
  if (l.moe_ep > 1) name += "-ep" + std::to_string(l.moe_ep);
  return name;
}

int64_t request_count(const E2ePoint& p, const SimPointOptions& o) {
  const int64_t per_client = p.warmup_per_client.value_or(o.warmup_per_client) +
                             p.requests_per_client.value_or(o.requests_per_client);
  return std::max<int64_t>(per_client * p.concurrency, o.min_requests);
}

int64_t warmup_count(const E2ePoint& p, const SimPointOptions& o) {
  return int64_t{p.warmup_per_client.value_or(o.warmup_per_client)} * p.concurrency;
}

std::vector<std::string> sim_arguments(const E2ePoint& p, const std::string& model_config,
                                       const std::string& out_dir, const SimPointOptions& o) {
  const std::string where = "line " + std::to_string(p.line);
  std::vector<std::string> a = {"sim", "--model", model_config, "--hardware", o.hardware};
  if (p.mode == E2eMode::kAggregated) {
    a.insert(a.end(), {"--parallel", parallel_name(p.agg, where)});
  } else {
    a.insert(a.end(), {"--parallel", pd_layouts(p, where), "--pd",
                       std::to_string(p.prefill.workers) + "P" + std::to_string(p.decode.workers) + "D"});
  }
  const std::string workload = "synthetic:n=" + std::to_string(request_count(p, o)) +
                               ",input=" + length_distribution(p.isl, p.length_range_ratio) +
                               ",output=" + length_distribution(p.osl, p.length_range_ratio);
  a.insert(a.end(), {"--workload", workload, "--concurrency", std::to_string(p.concurrency), "--seed", "0"});
  if (warmup_count(p, o) > 0) a.insert(a.end(), {"--warmup", std::to_string(warmup_count(p, o))});
  std::vector<std::string> benchmark_flags;  // aiconfigurator's generator's, unless the row says otherwise
  if (p.mode == E2eMode::kAggregated && o.mixed_steps) benchmark_flags = {"--mixed-steps", "on"};
  if (o.prefill_margin >= 0)
    benchmark_flags.insert(benchmark_flags.end(),
                           {"--max-prefill-tokens", std::to_string(p.isl + o.prefill_margin)});
  // A row's --profile-set values are terms of the profile the run prices with; a run without one (the
  // roofline) has no such terms, so they stay out (sim refuses --profile-set without --profile).
  const std::vector<OptionGroup> extra = option_groups(o.extra_args);
  const bool priced_by_profile =
      std::any_of(extra.begin(), extra.end(), [](const OptionGroup& g) { return g.name == "--profile"; });
  std::vector<std::string> row_flags;
  for (OptionGroup& g : option_groups(p.sim_args)) {
    if (g.name == "--profile-set" && !priced_by_profile) continue;
    row_flags.insert(row_flags.end(), g.words.begin(), g.words.end());
  }
  for (std::string& w : layered_options({&benchmark_flags, &row_flags, &o.extra_args}))
    a.push_back(std::move(w));
  a.insert(a.end(), {"--out", out_dir});
  return a;
}

SimPrediction read_prediction(const std::string& out_dir, int exit_code, const std::string& log_path,
                              int64_t warmup) {
  constexpr double kMs = 1e3;
  SimPrediction r;
  if (exit_code != 0) {
    r.error = "exit " + std::to_string(exit_code) + ": " + log_reason(read_text(log_path));
    return r;
  }
  try {
    double ttft_s = 0, tpot_s = 0;
    int64_t with_tpot = 0;
    for (const RecordedRequest& q : read_requests_csv(out_dir + "/requests.csv")) {
      if (q.id < warmup || q.status != "completed") continue;
      ++r.completed;
      ttft_s += q.first_token_s - q.arrival_s;
      if (q.generated_tokens < 2) continue;
      tpot_s += request_tpot_s(q.first_token_s, q.finish_s, q.generated_tokens);
      ++with_tpot;
    }
    r.ok = r.completed > 0;
    if (!r.ok) r.error = "no measured request completed: " + log_reason(read_text(log_path));
    r.ttft_ms = r.ok ? ttft_s / double(r.completed) * kMs : 0;
    r.tpot_ms = with_tpot > 0 ? tpot_s / double(with_tpot) * kMs : 0;
  } catch (const InputError& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace tokenline
