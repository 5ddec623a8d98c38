#include "workloads/spec_items.h"

#include <algorithm>

#include "common/input_error.h"

namespace tokenline {

std::vector<std::pair<std::string, std::string>> split_spec_items(
    std::string_view text, std::string_view spec, std::span<const std::string_view> keys,
    std::span<const std::string_view> comma_keys) {
  const auto is_one_of = [](std::span<const std::string_view> set, std::string_view k) {
    return std::find(set.begin(), set.end(), k) != set.end();
  };
  const auto where = [&](std::string_view key) { return std::string(spec) + ": " + std::string(key); };
  std::string key_list;
  for (std::string_view k : keys) key_list += (key_list.empty() ? "" : ", ") + std::string(k);
  std::vector<std::pair<std::string, std::string>> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (eq != std::string_view::npos && is_one_of(keys, key)) {
      for (const auto& [seen, value] : items)
        if (seen == key) throw InputError(where(key), "each key once", "'" + std::string(key) + "' twice");
      items.emplace_back(std::string(key), std::string(item.substr(eq + 1)));
    } else if (!items.empty() && !item.empty() && is_one_of(comma_keys, items.back().first)) {
      items.back().second += "," + std::string(item);
    } else if (eq != std::string_view::npos) {
      throw InputError(where(key), "one of the keys {" + key_list + "}",
                       "unknown key '" + std::string(key) + "'");
    } else {
      throw InputError(std::string(spec), "key=value items with keys {" + key_list + "}",
                       "'" + std::string(item) + "'");
    }
    start = end + 1;
  }
  return items;
}

}  // namespace tokenline
