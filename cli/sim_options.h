// What the commands that run a simulation share of CLI11 (cli/sim_command.cpp): the flags as given.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tokenline::cli {

// The subcommand's name and the flags the user gave, each with its value(s) as typed, in the order the
// command declares them; --out and --help left out. `tokenline <these> --out DIR` runs the same job.
std::vector<std::string> given_arguments(const CLI::App& cmd);

}  // namespace tokenline::cli
