#include "cli/kv_tier_options.h"

#include <CLI/CLI.hpp>
#include <cmath>

#include "common/input_error.h"
#include "common/number_text.h"
#include "cost/cost_model.h"

namespace tokenline {
namespace {

// SGLang server_args.py (v0.5.x): hicache_ratio = 2.0 when --enable-hierarchical-cache gives no size.
constexpr double kSglangHostRatio = 2.0;
constexpr double kMaxHostGb = 1e5;  // 100 TB per rank: far past any host

WritePolicy parse_write_policy(const std::string& text) {
  if (text == "write_through") return WritePolicy::kWriteThrough;
  if (text == "write_through_selective") return WritePolicy::kWriteThroughSelective;
  if (text == "write_back") return WritePolicy::kWriteBack;
  throw InputError("--kv-write-policy", "write_through | write_through_selective | write_back", text);
}

}  // namespace

TierLoadOverlap parse_load_overlap(const std::string& text) {
  if (text == "layer") return TierLoadOverlap::kLayer;
  if (text == "none") return TierLoadOverlap::kNone;
  throw InputError("--kv-load-overlap", "layer | none", text);
}

void add_kv_tier_options(CLI::App& cmd, KvTierFlags& flags, bool load_overlap) {
  cmd.add_flag("--kv-host", flags.host,
               "keep KV evicted from HBM in a host-DRAM tier and load prefix hits back (SGLang "
               "--enable-hierarchical-cache; size 2x the HBM pool, SGLang's --hicache-ratio default)");
  cmd.add_option(
      "--kv-host-ratio", flags.host_ratio,
      "host tier pages = this x HBM KV pages (SGLang --hicache-ratio, default 2.0); implies --kv-host");
  cmd.add_option(
      "--kv-host-gb", flags.host_gb,
      "host tier GB per attention rank, overriding the ratio (SGLang --hicache-size); implies --kv-host");
  cmd.add_option("--kv-write-policy", flags.write_policy,
                 "HBM -> host writes: write_through | write_through_selective | write_back (SGLang "
                 "--hicache-write-policy, default write_through)")
      ->capture_default_str();
  if (!load_overlap) return;
  cmd.add_option("--kv-load-overlap", flags.load_overlap,
                 "a host hit's load-back: layer (layer by layer under the forward, as SGLang HiCache) | none "
                 "(blocking)")
      ->capture_default_str();
}

void check_kv_tier_flags(const KvTierFlags& flags) {
  if (!std::isfinite(flags.host_ratio) || flags.host_ratio < 0 || flags.host_ratio > 1e3)
    throw InputError("--kv-host-ratio", "a ratio in [0, 1000]", number_text(flags.host_ratio));
  if (!std::isfinite(flags.host_gb) || flags.host_gb < 0 || flags.host_gb > kMaxHostGb)
    throw InputError("--kv-host-gb", "GB in [0, 100000]", number_text(flags.host_gb));
  parse_write_policy(flags.write_policy);
  parse_load_overlap(flags.load_overlap);
}

namespace {

std::string tier_flag(const KvTierFlags& flags) {
  return flags.host_gb > 0 ? "--kv-host-gb" : flags.host_ratio > 0 ? "--kv-host-ratio" : "--kv-host";
}

}  // namespace

void apply_kv_tier(const KvTierFlags& flags, const CostModel& cm, KvConfig& kv) {
  if (!flags.enabled()) return;
  if (kv.prefix_cache && cm.hardware.host_link_bw <= 0)
    throw InputError(tier_flag(flags), "hardware whose JSON gives a host_link",
                     cm.hardware.name + " without one");
  size_host_tier(flags, kv);
}

void size_host_tier(const KvTierFlags& flags, KvConfig& kv) {
  if (!flags.enabled()) return;
  const std::string flag = tier_flag(flags);
  if (!kv.prefix_cache) throw InputError(flag, "the prefix cache on", "--no-prefix-cache");
  const int64_t page_bytes = kv.transfer_bytes_per_page();
  if (flags.host_gb > 0) {
    kv.host.pages =
        page_bytes > 0 ? static_cast<int64_t>(flags.host_gb * 1e9 / static_cast<double>(page_bytes)) : 0;
  } else {
    const double ratio = flags.host_ratio > 0 ? flags.host_ratio : kSglangHostRatio;
    kv.host.pages = static_cast<int64_t>(ratio * static_cast<double>(kv.total_pages));
  }
  if (kv.host.pages <= 0)
    throw InputError(flag, "a host tier of at least one page",
                     "0 pages of " + std::to_string(page_bytes) + " B");
  kv.host.write_policy = parse_write_policy(flags.write_policy);
}

}  // namespace tokenline
