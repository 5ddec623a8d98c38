// apply_lower_envelope: the monotone rule for measured tables (op_profile_envelope.h).
//
// Why this envelope, and from above: timing noise in a kernel benchmark is one-sided. Clock ramps,
// contention, a cold cache or a launch stall add time to a measurement and nothing removes it, and an op at
// less work can always be run as the larger one would (padded), so the fastest time measured at no less work
// bounds it from above. The published tables bear this out (topologies/profiles/README.md has the counts): in
// h200-vllm's mla_decode (vLLM 0.14.0, BF16 KV, 8 heads per GPU) single rows at 0.76-1.1 ms stand in a
// 0.15 ms floor that their neighbours at more batch and more keys keep; the envelope removes the spikes and
// leaves the rising part of every curve as measured.
#include "cost/op_profile_envelope.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>

namespace tokenline {

std::vector<int> envelope_work_columns(ProfileTableKind kind) {
  switch (kind) {
    case ProfileTableKind::kGemm:    // m,n,k: m tokens; n and k are the weight's shape
    case ProfileTableKind::kMoe:     // tokens,hidden,inter,topk,experts,moe_tp,moe_ep
    case ProfileTableKind::kMlaBmm:  // tokens,heads
      return {0};
    case ProfileTableKind::kMlaDecode:  // heads,batch,tokens
    case ProfileTableKind::kMlaPrefill:
      return {1, 2};
    case ProfileTableKind::kGqaDecode:  // heads,kv_heads,head_dim,batch,tokens
    case ProfileTableKind::kGqaPrefill:
    case ProfileTableKind::kMlaModuleDecode:  // hidden,q_lora,heads,batch,tokens
      return {3, 4};
    case ProfileTableKind::kComm:  // gpus,bytes
      return {1};
    case ProfileTableKind::kDsa:  // hidden,heads,batch,tokens
      return {2, 3};
    case ProfileTableKind::kOps:  // batch,tokens
      return {0, 1};
    case ProfileTableKind::kGdn:  // k_heads,k_dim,v_heads,v_dim,conv,batch,tokens
      return {5, 6};
    case ProfileTableKind::kDsv4:  // hidden,heads,prefix,batch,tokens
    case ProfileTableKind::kMsa:
      return {2, 3, 4};
    case ProfileTableKind::kKda:  // heads,head_dim,conv,batch,tokens
      return {3, 4};
    case ProfileTableKind::kCount:
      break;
  }
  return {};
}

namespace {

// The rows of one shape: every text column and every non-work numeric column as a key.
std::map<std::string, std::vector<size_t>> rows_by_shape(const ProfileTable& t,
                                                         const std::vector<bool>& work) {
  std::map<std::string, std::vector<size_t>> groups;
  const int shape_numbers = t.numeric_columns - 1;  // latency_ms last
  for (size_t r = 0; r < t.rows(); ++r) {
    std::string key;
    for (int c = 0; c < t.text_columns; ++c) key.append(t.text_at(r, c)).push_back('\x1f');
    for (int c = 0; c < shape_numbers; ++c) {
      if (!work[size_t(c)]) key.append(std::to_string(int64_t(t.at(r, c)))).push_back('\x1f');
    }
    groups[key].push_back(r);
  }
  return groups;
}

}  // namespace

EnvelopeChange apply_lower_envelope(ProfileTable& t, ProfileTableKind kind) {
  EnvelopeChange change;
  const std::vector<int> columns = envelope_work_columns(kind);
  if (columns.empty() || t.numeric_columns < 2 || t.empty()) return change;
  std::vector<bool> work(size_t(t.numeric_columns), false);
  for (int c : columns) {
    if (c < t.numeric_columns - 1) work[size_t(c)] = true;
  }
  const int latency = t.numeric_columns - 1;
  // Computed from the measured latencies before any is replaced (one group's rows reach only their own).
  std::vector<std::pair<size_t, double>> lowered;
  for (const auto& [key, rows] : rows_by_shape(t, work)) {
    for (size_t i : rows) {
      double lowest = t.at(i, latency);
      for (size_t j : rows) {
        bool covers = true;  // row j does at least row i's work in every work column
        for (int c : columns) covers = covers && t.at(j, c) >= t.at(i, c);
        if (covers) lowest = std::min(lowest, t.at(j, latency));
      }
      if (lowest < t.at(i, latency)) lowered.emplace_back(i, lowest);
    }
  }
  for (const auto& [row, value] : lowered) {
    double& cell = t.numbers[row * size_t(t.numeric_columns) + size_t(latency)];
    if (value > 0) change.max_ratio = std::max(change.max_ratio, cell / value);
    cell = value;
    ++change.rows;
  }
  return change;
}

}  // namespace tokenline
