// The options every command that runs the core shares (tokenline sim, quickstart, run, serve): the
// scheduler's (--policy, --reservation), placement (--router, --dp-assign), outputs (--trace-detail) and
// counts, validated into native values in one place. Each parser throws InputError naming the option,
// what was expected and what was found.
#pragma once

#include <cstdint>
#include <string>

#include "cost/engine_behavior.h"
#include "engine/core/kv_manager.h"
#include "engine/core/placement.h"
#include "engine/core/scheduler.h"
#include "engine/model/model_config.h"
#include "traces/output_config.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tokenline::cli {

SchedulePolicy parse_policy(const std::string& v);  // --policy fcfs | lpm | priority
// The core's KV policy that realises an engine's admission (cost/engine_behavior.h).
ReservationPolicy reservation_of(Admission admission);
// --reservation whole | incremental | estimate: Admission's names (parse_admission), one table for both.
ReservationPolicy parse_reservation(const std::string& v);
TraceDetail parse_detail(const std::string& v);  // --trace-detail none | step | op
// --router, --dp-assign: round-robin | least-load | prefix-aware | room (engine/core/placement.h's names).
PlacementPolicy parse_placement_option(const std::string& v, const char* option);
void require_positive(int64_t value, const char* option);
// --mtp N on a model without an MTP layer: InputError naming --mtp (its drafts would be priced as free; a
// separate draft model, EAGLE's, is not modelled).
void check_mtp_layers(int64_t mtp_drafts, const ModelConfig& model);
// Throws InputError "<option>: expected at most <most> (a documented input limit), found <value>".
void require_at_most(int64_t value, int64_t most, const char* option);

// Every floating-point flag given on the command line (CLI11 type FLOAT, all subcommands) is finite:
// CLI11 reads "nan", "inf" and "1e999" as numbers, and no flag means any of them. InputError names the flag.
// Runs before any command's callback (main's parse_complete_callback).
void require_finite_numbers(const CLI::App& app);

// MTP draft tokens per decode step: SGLang's EAGLE/MTP setups draft 1-4 tokens; beyond 8 nothing stands.
inline constexpr int32_t kMaxMtpDrafts = 8;

}  // namespace tokenline::cli
