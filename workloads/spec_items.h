// The key=value items of a generator spec ("synthetic:", "synthetic-sessions:"), split once for both.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tokenline {

// "n=1000,input=lognormal:mean=2000,sigma=1" -> {{"n","1000"}, {"input","lognormal:mean=2000,sigma=1"}}.
// An item that is not a key=value item continues the previous value only where that key is one of
// comma_keys (length distributions), so "n=10,foo=3" blames foo, not n. InputError on `spec` (e.g.
// "synthetic") naming the item: an unknown key, an item that is no key=value, a key given twice.
std::vector<std::pair<std::string, std::string>> split_spec_items(
    std::string_view text, std::string_view spec, std::span<const std::string_view> keys,
    std::span<const std::string_view> comma_keys);

}  // namespace tokenline
