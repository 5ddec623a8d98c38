// csv_fields: one line of a plain CSV file (no quoting: tokenline's own tables and the e2e point files) split
// at every comma into its fields; an empty line is one empty field, a trailing comma one more empty field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

inline std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  size_t begin = 0;
  while (true) {
    const size_t end = line.find(',', begin);
    fields.emplace_back(line.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return fields;
    begin = end + 1;
  }
}

}  // namespace tokenline
