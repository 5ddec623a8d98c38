// Speculation: greedy verification of MTP drafts and the MTP layer's rows for one group's step. The main
// model sampled every row of a decode entry ([last token, draft 1..k]); the longest prefix of drafts that
// equals the model's own choices is accepted, so the emitted tokens are exactly those of decoding
// without drafts (greedy speculative decoding is lossless). Pure functions over host data.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/batch.h"
#include "engine/runtime/forward_pass.h"

namespace tokenline {

// Where one batch entry sits in its group's ForwardInput.
struct EntryRows {
  RequestId id = 0;
  int32_t row0 = 0, rows = 0;  // its token rows
  int32_t sample0 = -1;        // its first sampling row (index into sample_rows), -1 when it samples none
  int32_t drafts = 0;          // decode: MTP drafts among its rows (rows = 1 + drafts)
  bool decode = false;
};

struct EntryResult {
  std::vector<int32_t> emitted;  // tokens the request gains this step
  int32_t accepted = 0;          // drafts accepted (decode)
};

// next_ids[row]: the token after each row where the input already knows it (inside a prompt), else -1.
// Fills one result per entry and, when mtp, the MTP layer's rows: every row whose next token is now
// known, with the last row of each entry that emitted tokens drafting.
void verify_step(std::span<const EntryRows> entries, std::span<const int32_t> next_ids,
                 std::span<const int32_t> sampled, bool mtp, std::vector<EntryResult>& results,
                 DraftInput& draft);

}  // namespace tokenline
