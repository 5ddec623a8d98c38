#include "engine/runtime/model_runner.h"

#include <algorithm>
#include <cassert>
#include <thread>

#include "engine/runtime/forward_pass.h"
#include "engine/runtime/host_kv_pool.h"
#include "engine/runtime/rank_cpus.h"
#include "engine/runtime/rank_threads.h"
#include "engine/runtime/rank_weights.h"
#include "engine/runtime/speculation.h"
#include "kernels/cpu/local_communicator.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/kernel_set.h"

namespace tokenline {

struct ModelRunner::Ranks {
  std::unique_ptr<cpu::LocalGroup> ep_group;                // every rank, when ep > 1
  std::vector<std::unique_ptr<cpu::LocalGroup>> tp_groups;  // per attention group, when tp > 1
  std::vector<std::unique_ptr<RankWeights>> weights;        // per rank
  std::vector<std::unique_ptr<ForwardPass>> passes;         // per rank
  std::vector<ForwardOutput> outputs;                       // per rank
  std::vector<ForwardInput> inputs;                         // per attention group
  std::vector<std::vector<EntryRows>> entries;              // per group, in batch order
  std::vector<std::vector<int32_t>> next_ids;               // per group, per row (-1: not yet known)
  std::vector<std::vector<EntryResult>> results;            // per rank, per entry of its group
  std::vector<DraftInput> drafts;                           // per rank: the MTP layer's rows
  std::unique_ptr<RankThreads> threads;                     // when there is more than one rank
  std::vector<std::unique_ptr<HostKvPool>> host;            // per rank, with a host KV tier
};

namespace {

const KernelSet& kernels_of(const RunnerConfig& config) {
  return config.kernels != nullptr ? *config.kernels : cpu_kernel_set();
}

bool divides(int32_t parts, int64_t n) {
  return parts > 0 && n % parts == 0;
}

}  // namespace

bool backend_runs_model(const ModelShape& s, const KernelSet* kernels) {
  const KernelSet& k = kernels != nullptr ? *kernels : cpu_kernel_set();
  return !s.gqa || (k.gqa_attention != nullptr && k.gdn_recurrence != nullptr);
}

std::string runner_layout_error(const ModelShape& s, const RunnerConfig& c) {
  const int32_t ranks = c.dp_ranks * c.tp;
  const int64_t shared_inter = int64_t{s.moe_inter} * s.shared_experts;
  if (c.dp_ranks < 1 || c.tp < 1) return "dp and tp of at least 1";
  if (!divides(c.tp, s.heads) || !divides(c.tp, s.dense_inter) || !divides(c.tp, shared_inter) ||
      !divides(c.tp, s.vocab)) {
    return "tp dividing the heads (" + std::to_string(s.heads) + "), dense and shared intermediate sizes (" +
           std::to_string(s.dense_inter) + ", " + std::to_string(shared_inter) + ") and the vocabulary (" +
           std::to_string(s.vocab) + ")";
  }
  if (c.ep != 1 && c.ep != ranks) return "ep 1 or every GPU rank (" + std::to_string(ranks) + ")";
  if (c.ep > 1 && !divides(c.ep, s.experts))
    return "ep dividing the " + std::to_string(s.experts) + " experts";
  if (c.ep == 1 && !divides(c.tp, s.moe_inter))
    return "tp dividing the expert size " + std::to_string(s.moe_inter);
  if (ranks > 1 && !kernels_of(c).host_memory) return "one GPU rank on this backend (in-process collectives)";
  if (c.mtp_draft_tokens < 0) return "a count of MTP draft tokens >= 0";
  if (c.mtp_draft_tokens > 0 && s.mtp_layers == 0) return "a model with an MTP layer for MTP drafts";
  if (s.gqa) {
    if (c.tp != 1 || c.ep != 1) return "tp1 and ep1 (one GPU rank per attention group) for a GQA model";
    if (!backend_runs_model(s, c.kernels))
      return std::string("a backend with GQA and Gated DeltaNet kernels (cpu), not ") + kernels_of(c).name;
    if (c.host_pages > 0) return "no host KV tier for a GQA model";
    if (s.mixer_layers(LayerMixer::kSlidingWindow) > 0 && c.window_pages <= 0)
      return "window pages for the sliding-window layers";
    if (s.mixer_layers(LayerMixer::kGatedDeltaNet) > 0 && c.state_slots <= 0)
      return "state slots for the Gated DeltaNet layers";
  }
  return "";
}

ModelRunner::ModelRunner(ModelShape shape, const ModelWeights& weights, const RunnerConfig& config,
                         Clock& clock)
    : shape_(std::move(shape)), config_(config), clock_(clock), ranks_(std::make_unique<Ranks>()) {
  assert(runner_layout_error(shape_, config_).empty());
  const KernelSet& k = kernels_of(config_);
  const int32_t ranks = config_.dp_ranks * config_.tp;
  Ranks& r = *ranks_;
  if (config_.ep > 1) r.ep_group = std::make_unique<cpu::LocalGroup>(ranks);
  for (int32_t d = 0; d < config_.dp_ranks && config_.tp > 1; ++d)
    r.tp_groups.push_back(std::make_unique<cpu::LocalGroup>(config_.tp));
  for (int32_t g = 0; g < ranks; ++g) {
    const int32_t d = g / config_.tp, t = g % config_.tp;
    ForwardConfig fc{.shard = {.tp = config_.tp, .tp_rank = t, .ep = config_.ep, .ep_rank = g},
                     .comms = {.tp = config_.tp > 1 ? &r.tp_groups[static_cast<size_t>(d)]->rank(t) : nullptr,
                               .ep = r.ep_group ? &r.ep_group->rank(g) : nullptr},
                     .total_pages = config_.total_pages,
                     .page_tokens = config_.page_tokens,
                     .window_pages = config_.window_pages,
                     .state_slots = config_.state_slots};
    r.weights.push_back(std::make_unique<RankWeights>(shape_, weights, fc.shard, k));
    r.passes.push_back(std::make_unique<ForwardPass>(shape_, *r.weights.back(), k, fc));
    if (config_.host_pages > 0)
      r.host.push_back(std::make_unique<HostKvPool>(k, r.passes.back()->kv_regions(), config_.host_pages));
  }
  r.outputs.resize(static_cast<size_t>(ranks));
  r.inputs.resize(static_cast<size_t>(config_.dp_ranks));
  r.entries.resize(static_cast<size_t>(config_.dp_ranks));
  r.next_ids.resize(static_cast<size_t>(config_.dp_ranks));
  r.results.resize(static_cast<size_t>(ranks));
  r.drafts.resize(static_cast<size_t>(ranks));
  if (ranks > 1) {
    const std::vector<int> cpus = allowed_cpus();
    const int64_t cores =
        std::max<int64_t>(1, cpus.empty() ? std::thread::hardware_concurrency() : int64_t(cpus.size()));
    r.threads = std::make_unique<RankThreads>(ranks, cpus, std::max<int64_t>(1, cores / ranks));  // its share
  }
}

ModelRunner::~ModelRunner() = default;

const std::vector<float>& ModelRunner::last_logits(int32_t group) const {
  return ranks_->outputs[static_cast<size_t>(group * config_.tp)].logits;
}

void ModelRunner::set_prompt(RequestId id, std::vector<int32_t> token_ids) {
  tokens_[id] = std::move(token_ids);
}

void ModelRunner::forget(RequestId id) {
  tokens_.erase(id);
  drafts_.erase(id);
}

const std::vector<int32_t>* ModelRunner::tokens(RequestId id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

// Flattens one group's batch: each entry's new tokens (positions context .. context + new - 1) read from
// its token list - a decode's drafts after its last token - its page ids cut to the pages those positions
// need, and its sampling rows (a last prefill chunk's last row; every row of a decode).
bool ModelRunner::build_input(const Batch& batch, const BatchPages& pages, int32_t group) {
  if (pages.indptr.size() != batch.entries.size() + 1) return false;
  if (shape_.mixer_layers(LayerMixer::kSlidingWindow) > 0 &&
      pages.window_indptr.size() != batch.entries.size() + 1)
    return false;
  if (shape_.mixer_layers(LayerMixer::kGatedDeltaNet) > 0 && pages.state_slots.size() != batch.entries.size())
    return false;
  const auto gi = static_cast<size_t>(group);
  ForwardInput& input = ranks_->inputs[gi];
  std::vector<EntryRows>& entries = ranks_->entries[gi];
  std::vector<int32_t>& next_ids = ranks_->next_ids[gi];
  input.clear();
  if (!pages.window_indptr.empty()) input.window_indptr.push_back(0);
  entries.clear();
  next_ids.clear();
  const auto page_tokens = static_cast<int64_t>(config_.page_tokens);
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    const BatchEntry& e = batch.entries[i];
    auto it = tokens_.find(e.id);
    const int64_t end = e.context_tokens + e.new_tokens, drafts = e.draft_tokens;
    auto draft = drafts_.find(e.id);
    if (it == tokens_.end() || static_cast<int64_t>(it->second.size()) < end - drafts ||
        (drafts > 0 && (draft == drafts_.end() || static_cast<int64_t>(draft->second.size()) < drafts)))
      return false;
    const int64_t need_pages = (end + page_tokens - 1) / page_tokens;
    const auto first_page = pages.indices.begin() + pages.indptr[i];
    if (pages.indptr[i + 1] - pages.indptr[i] < need_pages) return false;
    const std::vector<int32_t>& known = it->second;
    auto token_at = [&](int64_t p) {
      const int64_t from_end = p - (end - drafts);
      if (drafts > 0 && from_end >= 0) return draft->second[static_cast<size_t>(from_end)];
      return p < static_cast<int64_t>(known.size()) ? known[static_cast<size_t>(p)] : -1;
    };
    const bool decode = e.phase == Phase::kDecode;
    EntryRows rows{.id = e.id,
                   .row0 = static_cast<int32_t>(input.token_ids.size()),
                   .rows = static_cast<int32_t>(e.new_tokens),
                   .drafts = static_cast<int32_t>(drafts),
                   .decode = decode};
    if (decode || e.last_chunk) rows.sample0 = static_cast<int32_t>(input.sample_rows.size());
    for (int64_t p = e.context_tokens; p < end; ++p) {
      if (decode || (e.last_chunk && p == end - 1))
        input.sample_rows.push_back(static_cast<int32_t>(input.token_ids.size()));
      input.token_ids.push_back(token_at(p));
      next_ids.push_back(p + 1 < end || !decode ? token_at(p + 1) : -1);
      input.seq.push_back(static_cast<int32_t>(i));
      input.pos.push_back(static_cast<int32_t>(p));
    }
    if (e.last_chunk && !decode) next_ids.back() = -1;  // what follows the prompt is what this step samples
    entries.push_back(rows);
    input.indices.insert(input.indices.end(), first_page,
                         first_page + static_cast<std::ptrdiff_t>(need_pages));
    input.indptr.push_back(static_cast<int32_t>(input.indices.size()));
    input.last_page_len.push_back(static_cast<int32_t>(end - (need_pages - 1) * page_tokens));
    if (!pages.window_indptr.empty()) {  // the window layers' pages: the core's ring, whole
      input.window_indices.insert(input.window_indices.end(),
                                  pages.window_indices.begin() + pages.window_indptr[i],
                                  pages.window_indices.begin() + pages.window_indptr[i + 1]);
      input.window_indptr.push_back(static_cast<int32_t>(input.window_indices.size()));
      input.window_first.push_back(pages.window_first[i]);
    }
    if (!pages.state_slots.empty()) {
      input.state_slot.push_back(pages.state_slots[i]);
      input.state_reset.push_back(e.context_tokens == 0 ? 1 : 0);
    }
    input.max_context = std::max(input.max_context, static_cast<int32_t>(end));
  }
  return true;
}

// Runs the active ranks: on this thread when there is one rank, else each on its own rank thread
// (rank_threads.h: kept between steps, bound to its share of the CPUs), timed by its own fork of the clock;
// this clock then sleeps until the last rank's end. start_s[g]: when rank g began, on this clock.
void ModelRunner::run_ranks(const std::vector<bool>& active, std::vector<double>& start_s) {
  Ranks& r = *ranks_;
  const auto ranks = static_cast<int32_t>(r.passes.size());
  // One rank's whole step: the main model, verification of its drafts, the MTP layer.
  auto step = [&](int32_t g, Clock& clock) {
    const auto i = static_cast<size_t>(g), d = static_cast<size_t>(g / config_.tp);
    r.passes[i]->run(r.inputs[d], clock, r.outputs[i]);
    const bool mtp = config_.mtp_draft_tokens > 0;
    verify_step(r.entries[d], r.next_ids[d], r.outputs[i].sampled, mtp, r.results[i], r.drafts[i]);
    if (mtp) r.passes[i]->draft(r.inputs[d], r.drafts[i], config_.mtp_draft_tokens, clock, r.outputs[i]);
  };
  if (ranks == 1) {
    start_s[0] = clock_.now_s();
    if (active[0]) step(0, clock_);
    return;
  }
  std::vector<std::unique_ptr<Clock>> clocks;
  std::vector<double> end_s(static_cast<size_t>(ranks), 0.0);
  for (int32_t g = 0; g < ranks; ++g) {
    clocks.push_back(clock_.fork());
    start_s[static_cast<size_t>(g)] = clocks.back()->now_s();
  }
  r.threads->run(active, [&](int32_t g) {
    const auto i = static_cast<size_t>(g);
    step(g, *clocks[i]);
    end_s[i] = clocks[i]->now_s();
  });
  clock_.sleep_until_s(*std::max_element(end_s.begin(), end_s.end()));
}

// The group's first rank's whole-step totals per op, laid back to back in ledger order (as the sim's
// cost backends do); collectives on the comm stream.
void ModelRunner::append_spans(int32_t group, double start_s, StepOutcome& outcome) const {
  const ForwardOutput& out = ranks_->outputs[static_cast<size_t>(group * config_.tp)];
  int64_t t_ns = to_whole_ns(start_s);
  for (int i = 0; i < kRunOpCount; ++i) {
    const int64_t d_ns = to_whole_ns(out.op_s[static_cast<size_t>(i)]);
    if (d_ns <= 0) continue;
    const auto op = static_cast<RunOp>(i);
    outcome.ops.push_back(OpSpan{.name = shape_.op_name(op),
                                 .stream = is_collective(op) ? Stream::kComm : Stream::kCompute,
                                 .rank = group,
                                 .start_s = ns_to_s(t_ns),
                                 .duration_s = ns_to_s(d_ns)});
    t_ns += d_ns;
  }
}

StepOutcome ModelRunner::execute(const StepBatches& step) {
  Ranks& r = *ranks_;
  StepOutcome outcome;
  const auto ranks = static_cast<int32_t>(r.passes.size());
  std::vector<bool> active(static_cast<size_t>(ranks), false);
  for (int32_t d = 0; d < config_.dp_ranks; ++d) {
    const auto di = static_cast<size_t>(d);
    const bool busy = di < step.ranks.size() && !step.ranks[di].empty();
    r.inputs[di].clear();
    r.entries[di].clear();
    r.next_ids[di].clear();
    if (busy) {
      [[maybe_unused]] const bool ok =
          di < step.pages.size() && build_input(step.ranks[di], step.pages[di], d);
      assert(ok && "a batch entry without its tokens, drafts or pages: set_prompt / the page table first");
    }
    // Under EP an idle group still runs (empty) so that the other ranks' dispatch and combine complete.
    for (int32_t t = 0; t < config_.tp; ++t)
      active[static_cast<size_t>(d * config_.tp + t)] = busy || r.ep_group != nullptr;
  }
  const double step_start_s = clock_.now_s();
  apply_tier_copies(step, outcome);
  std::vector<double> start_s(static_cast<size_t>(ranks), 0.0);
  run_ranks(active, start_s);
  if (config_.mtp_draft_tokens > 0) outcome.accepted_drafts.resize(static_cast<size_t>(config_.dp_ranks));
  for (int32_t d = 0; d < config_.dp_ranks; ++d) {
    const auto di = static_cast<size_t>(d), first = static_cast<size_t>(d * config_.tp);
    if (r.inputs[di].token_ids.empty()) continue;
    apply_results(d, outcome);
    if (config_.op_detail) append_spans(d, start_s[first] - step_start_s, outcome);
  }
  outcome.duration_s = ns_to_s(to_whole_ns(clock_.now_s() - step_start_s));
  return outcome;
}

// Each group's host-tier copies on each of its ranks (every rank holds its own KV slice), in the core's
// order; a run of copies of one kind is timed as a whole.
void ModelRunner::apply_tier_copies(const StepBatches& step, StepOutcome& outcome) {
  Ranks& r = *ranks_;
  if (r.host.empty()) {
    for ([[maybe_unused]] const std::vector<TierCopy>& copies : step.tier_copies)
      assert(copies.empty() && "host-tier copies for a runner without host_pages");
    return;
  }
  double load_s = 0, store_s = 0;
  const size_t groups = std::min(step.tier_copies.size(), static_cast<size_t>(config_.dp_ranks));
  for (size_t d = 0; d < groups; ++d) {
    const std::span<const TierCopy> copies(step.tier_copies[d]);
    for (size_t i = 0; i < copies.size();) {
      size_t j = i;
      while (j < copies.size() && copies[j].kind == copies[i].kind) ++j;
      const double t0 = clock_.now_s();
      for (int32_t t = 0; t < config_.tp; ++t)
        r.host[d * static_cast<size_t>(config_.tp) + static_cast<size_t>(t)]->apply(copies.subspan(i, j - i));
      (copies[i].kind == TierCopy::Kind::kLoad ? load_s : store_s) += clock_.now_s() - t0;
      i = j;
    }
  }
  outcome.tier_load_s = load_s;
  outcome.tier_store_s = store_s;
  outcome.tier_stall_s = load_s + store_s;
}

// The group's first rank's results: emitted tokens appended, the next drafts kept, accepted counts.
void ModelRunner::apply_results(int32_t group, StepOutcome& outcome) {
  Ranks& r = *ranks_;
  const auto first = static_cast<size_t>(group * config_.tp);
  const std::vector<EntryRows>& entries = r.entries[static_cast<size_t>(group)];
  const std::vector<EntryResult>& results = r.results[first];
  const std::vector<std::vector<int32_t>>& drafted = r.outputs[first].drafts;
  const auto k = static_cast<size_t>(config_.mtp_draft_tokens);
  size_t next_draft = 0;
  const std::vector<float>& logits = r.outputs[first].logits;
  const auto vocab = static_cast<size_t>(shape_.vocab);
  for (size_t i = 0; i < entries.size(); ++i) {
    std::vector<int32_t>& tokens = tokens_[entries[i].id];
    if (chooser_ != nullptr && k == 0 && results[i].emitted.size() == 1 && entries[i].sample0 >= 0) {
      const std::span<const float> row(logits.data() + static_cast<size_t>(entries[i].sample0) * vocab,
                                       vocab);
      r.results[first][i].emitted[0] = chooser_->choose(entries[i].id, row, results[i].emitted[0]);
    }
    tokens.insert(tokens.end(), results[i].emitted.begin(), results[i].emitted.end());
    if (k == 0) continue;
    outcome.accepted_drafts[static_cast<size_t>(group)].push_back(results[i].accepted);
    if (results[i].emitted.empty()) continue;
    // Where the chain stopped early (the entry's pages ended), the newest draft repeats: verification
    // is lossless whatever is proposed, so a padded draft only costs its acceptance.
    std::vector<int32_t> next = drafted[next_draft++];
    next.resize(k, next.back());
    drafts_[entries[i].id] = std::move(next);
  }
}

void ModelRunner::set_drafts(RequestId id, std::vector<int32_t> tokens) {
  drafts_[id] = std::move(tokens);
}

}  // namespace tokenline
