// The workload the CLI tests run for real and simulate: 16 requests in 3 prefix groups sharing two
// page_tokens-token blocks, prompts 40..69 tokens, 10..14 output tokens; 12 at time 0, then 4 at 20 ms
// (they join while steps execute). With 12 pages of 16 tokens the burst preempts.
#pragma once

#include <fstream>
#include <string>

namespace tokenline::testing {

inline void write_prefix_group_workload(const std::string& path, int page_tokens) {
  std::ofstream out(path);
  for (int i = 0; i < 16; ++i) {
    const int input = 40 + (i * 7) % 30, blocks = (input + page_tokens - 1) / page_tokens;
    out << "{\"arrival_s\": " << (i < 12 ? 0.0 : 0.02) << ", \"input_tokens\": " << input
        << ", \"output_tokens\": " << 10 + i % 5 << ", \"block_tokens\": " << page_tokens
        << ", \"hash_ids\": [";
    for (int b = 0; b < blocks; ++b)
      out << (b ? ", " : "") << (b < 2 ? 100 * (i % 3) + b : 10000 + 100 * i + b);
    out << "]}\n";
  }
}

}  // namespace tokenline::testing
