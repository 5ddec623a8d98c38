// profile_load_error: the InputError message of loading a profile directory, or "" when it loads.
#pragma once

#include <filesystem>
#include <string>

#include "common/input_error.h"
#include "cost/op_profile.h"

namespace tokenline {

inline std::string profile_load_error(const std::filesystem::path& dir) {
  try {
    load_op_profile(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tokenline
