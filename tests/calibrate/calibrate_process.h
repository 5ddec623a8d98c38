// `tokenline calibrate ARGS` run as a separate process (the binary the build made), its exit code and
// both streams kept: the calibrate tests' one way of running the command.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "tests/traces/test_dir.h"

namespace tokenline::testing {

struct CalibrateRun {
  int exit_code = -1;
  std::string out, err;
};

inline CalibrateRun run_calibrate(const std::string& args, const TestDir& dir) {
  const std::string command = std::string("'") + TOKENLINE_BINARY + "' calibrate " + args + " >'" +
                              dir.file("stdout") + "' 2>'" + dir.file("stderr") + "'";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(dir.file("stdout")),
          read_all(dir.file("stderr"))};
}

}  // namespace tokenline::testing
