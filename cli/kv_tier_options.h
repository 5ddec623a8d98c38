// The host KV tier's flags of `tokenline sim`, `run` and `serve` (engine/core/kv_tier.h), named after SGLang
// HiCache's (python/sglang/srt/server_args.py, v0.5.x): --kv-host (--enable-hierarchical-cache),
// --kv-host-ratio (--hicache-ratio), --kv-host-gb (--hicache-size), --kv-write-policy
// (--hicache-write-policy), and, in sim only, --kv-load-overlap (how loads overlap the forward; SGLang always
// loads layer by layer; the CPU engine's copies block). Parsed here, judged before any output is written,
// applied to each instance's KvConfig.
#pragma once

#include <string>

#include "cost/tier_transfer.h"
#include "engine/core/kv_manager.h"

namespace CLI {
class App;
}

namespace tokenline {

struct CostModel;

struct KvTierFlags {
  bool host = false;      // --kv-host: on with SGLang's defaults (ratio 2.0)
  double host_ratio = 0;  // --kv-host-ratio: host pages = ratio x HBM pages (0: unset)
  double host_gb = 0;     // --kv-host-gb: host GB per attention rank, overrides the ratio (0: unset)
  std::string write_policy = "write_through";
  std::string load_overlap = "layer";
  bool enabled() const { return host || host_ratio > 0 || host_gb > 0; }
};

// load_overlap: also --kv-load-overlap (the simulator's; the real engine's copies block the step).
void add_kv_tier_options(CLI::App& cmd, KvTierFlags& flags, bool load_overlap = true);
// Throws InputError naming the flag for a bad value (before any output is touched).
void check_kv_tier_flags(const KvTierFlags& flags);
// The host tier of one instance's KV, sized from its HBM pool and the page's bytes; throws InputError when
// the hardware has no host link or the prefix cache is off.
void apply_kv_tier(const KvTierFlags& flags, const CostModel& cm, KvConfig& kv);
// The same sizing for the real engine (no host link to price: its copies are measured); throws InputError
// when the prefix cache is off.
void size_host_tier(const KvTierFlags& flags, KvConfig& kv);
TierLoadOverlap parse_load_overlap(const std::string& text);

}  // namespace tokenline
