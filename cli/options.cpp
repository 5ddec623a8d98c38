#include "cli/options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "common/input_error.h"

namespace tokenline::cli {

SchedulePolicy parse_policy(const std::string& v) {
  if (v == "fcfs") return SchedulePolicy::kFcfs;
  if (v == "lpm") return SchedulePolicy::kLongestPrefixMatch;
  if (v == "priority") return SchedulePolicy::kPriority;
  throw InputError("--policy", "fcfs, lpm or priority", "'" + v + "'");
}

ReservationPolicy reservation_of(Admission admission) {
  switch (admission) {
    case Admission::kWholeRequest:
      return ReservationPolicy::kWholeRequest;
    case Admission::kIncremental:
      return ReservationPolicy::kIncremental;
    case Admission::kEstimate:
      return ReservationPolicy::kEstimate;
  }
  return ReservationPolicy::kWholeRequest;
}

ReservationPolicy parse_reservation(const std::string& v) {
  return reservation_of(parse_admission(v, "--reservation"));
}

TraceDetail parse_detail(const std::string& v) {
  for (const TraceDetail d : {TraceDetail::kNone, TraceDetail::kStep, TraceDetail::kOp})
    if (v == to_string(d)) return d;
  throw InputError("--trace-detail", "none, step or op", "'" + v + "'");
}

PlacementPolicy parse_placement_option(const std::string& v, const char* option) {
  if (const std::optional<PlacementPolicy> p = parse_placement(v)) return *p;
  throw InputError(option, placement_choices(), "'" + v + "'");
}

void require_positive(int64_t value, const char* option) {
  if (value <= 0) throw InputError(option, "a positive integer", std::to_string(value));
}

void check_mtp_layers(int64_t mtp_drafts, const ModelConfig& model) {
  if (mtp_drafts <= 0 || model.mtp_layers > 0) return;
  throw InputError("--mtp",
                   "0 for a model without an MTP layer (its config's num_nextn_predict_layers or "
                   "mtp_num_hidden_layers is 0; a separate draft model, such as EAGLE3's, is not modelled)",
                   std::to_string(mtp_drafts) + " for '" + model.name + "'");
}

void require_at_most(int64_t value, int64_t most, const char* option) {
  if (value > most)
    throw InputError(
        option,
        "at most " + std::to_string(most) + " (an input limit, README \"Hostile and careless input\")",
        std::to_string(value));
}

void require_finite_numbers(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_type_name().find("FLOAT") == std::string::npos) continue;
    for (const std::string& text : opt->results()) {
      if (!std::isfinite(std::strtod(text.c_str(), nullptr)))
        throw InputError(opt->get_name(), "a finite number", "'" + text + "'");
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) require_finite_numbers(*sub);
}

}  // namespace tokenline::cli
