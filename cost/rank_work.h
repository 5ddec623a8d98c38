// RankWork: one attention rank's work in one step, summed over its sequences (step_cost's summary, what
// each TimeSource prices). Private to cost/.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "cost/term.h"
#include "engine/model/ledger.h"

namespace tokenline {

struct CostModel;

// One rank's work, summed over its sequences.
struct RankWork {
  double tokens = 0;
  double lm_tokens = 0;      // tokens whose logits are computed
  double decode_tokens = 0;  // tokens of decoding sequences (MTP drafts follow them)
  int64_t max_drafts = 0;    // most MTP drafts verified by one decoding sequence (new_tokens - 1)
  double attn_keys = 0;      // sum over tokens of the keys each attends to (top-k capped when sparse)
  double kv_read_keys = 0;   // keys read from the main KV cache
  double idx_pairs = 0;      // (query, key) pairs the indexer scores
  double idx_read_keys = 0;  // keys read from the indexer cache (once per query tile)
  // what an op profile needs besides the totals above
  double decode_seqs = 0;
  double decode_keys = 0;  // sum over decode sequences of the keys their last token attends to
  double prefill_seqs = 0;
  double prefill_tokens = 0;
  double prefill_pairs = 0;      // causal (query, key) pairs of the prefill chunks
  int64_t max_prefill_keys = 0;  // most keys one prefill sequence holds after its chunk (prefix + chunk)
  // Window layers (ModelConfig::window_tokens; 0 without): the same sums over at most W keys per query.
  double win_attn_keys = 0;      // sum over tokens of the keys each attends to
  double win_kv_read_keys = 0;   // keys read from the window KV (once per query tile)
  double win_decode_keys = 0;    // sum over decode sequences of the keys their last token attends to
  double win_prefill_pairs = 0;  // (query, key) pairs of the prefill chunks
  // DeepSeek-V4 (kCompressed), per CSA and per HCA layer beside its window (win_* above): the compressed
  // entries each token attends to (CSA: at most the indexer's top-k) and reads, and the CSA indexer's
  // (query, compressed key) pairs and keys read.
  double csa_attn_keys = 0;
  double csa_kv_read_keys = 0;
  double csa_idx_pairs = 0;
  double csa_idx_read_keys = 0;
  double hca_attn_keys = 0;
  double hca_kv_read_keys = 0;
  // MiniMax-M3's block-sparse layers (ModelConfig::block_sparse), per layer: the keys each token attends to
  // (at most the top-k blocks' tokens) and reads (its own blocks: no tile shares them), the indexer's
  // (query, key) pairs (only where the context exceeds the top-k: below it every block is taken), its index
  // keys read (once per query tile), and the decode sequences' attended keys (as win_decode_keys).
  double bs_attn_keys = 0;
  double bs_kv_read_keys = 0;
  double bs_idx_pairs = 0;
  double bs_idx_read_keys = 0;
  double bs_decode_keys = 0;
  double bs_prefill_pairs = 0;
  // Step-wide, over every attention-DP rank (step_cost fills them; 0: this rank's own tokens): what an
  // engine that gathers every rank's hidden states around the MLP moves (SGLang's DP gather).
  double dp_max_tokens = 0;  // most tokens on one rank
  double dp_sum_tokens = 0;  // tokens of all ranks
  bool dp_extend = false;    // some rank runs a prefill chunk (SGLang's is_extend_in_batch)
};

// Sums one rank's sequences (step_cost.cpp).
RankWork summarize(const CostModel& cm, std::span<const SeqWork> seqs);

// One busy rank's terms at cm's roofline, as step_cost hands them to the time source (step_cost.cpp); and
// the routed experts' over all_tokens of every rank. What a time source pricing ops from another GPU's
// profile compares that GPU's measured times with (time_source_transfer.cpp).
void roofline_rank_terms(const CostModel& cm, const RankWork& w, double expert_imbalance,
                         std::array<Term, kOpCount>& out);
void roofline_expert_term(const CostModel& cm, double all_tokens, double expert_imbalance, Term& t);

}  // namespace tokenline
