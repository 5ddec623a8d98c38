#include "engine/runtime/speculation.h"

#include <cassert>

namespace tokenline {

void verify_step(std::span<const EntryRows> entries, std::span<const int32_t> next_ids,
                 std::span<const int32_t> sampled, bool mtp, std::vector<EntryResult>& results,
                 DraftInput& draft) {
  results.assign(entries.size(), EntryResult{});
  draft.clear();
  for (size_t i = 0; i < entries.size(); ++i) {
    const EntryRows& e = entries[i];
    EntryResult& res = results[i];
    // Rows whose next token the model confirmed: a prefill chunk's rows, a decode's first 1 + accepted.
    int32_t known_rows = e.rows;
    if (e.decode) {
      const auto s = sampled.subspan(static_cast<size_t>(e.sample0), static_cast<size_t>(1 + e.drafts));
      // Row j + 1's input token is draft j + 1; it stands when row j's sample chose it.
      while (res.accepted < e.drafts &&
             s[static_cast<size_t>(res.accepted)] == next_ids[static_cast<size_t>(e.row0 + res.accepted)]) {
        ++res.accepted;
      }
      res.emitted.assign(s.begin(), s.begin() + 1 + res.accepted);
      known_rows = 1 + res.accepted;
    } else if (e.sample0 >= 0) {
      res.emitted.push_back(sampled[static_cast<size_t>(e.sample0)]);
    }
    if (!mtp) continue;
    for (int32_t j = 0; j < known_rows; ++j) {
      const int32_t row = e.row0 + j;
      // Inside the prompt the next token is the input's; at the end it is what this step emitted.
      const bool emitted_next = e.decode || j == e.rows - 1;
      const int32_t next = emitted_next && !res.emitted.empty()
                               ? res.emitted[static_cast<size_t>(e.decode ? j : 0)]
                               : next_ids[static_cast<size_t>(row)];
      if (next < 0) break;  // a prefill chunk's last row before the prompt's end is known; never here
      draft.rows.push_back(row);
      draft.next_ids.push_back(next);
    }
    if (!res.emitted.empty()) draft.draft_rows.push_back(static_cast<int32_t>(draft.rows.size()) - 1);
  }
}

}  // namespace tokenline
