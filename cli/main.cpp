// The `tokenline` binary: one CLI11 app whose subcommands register themselves (command.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "cli/command.h"
#include "common/input_error.h"

namespace tokenline::cli {
namespace {

std::map<std::string, AddCommandFn>& registry() {
  static std::map<std::string, AddCommandFn> commands;  // ordered: --help lists them by name
  return commands;
}

}  // namespace

CommandRegistration::CommandRegistration(const char* name, AddCommandFn add) {
  registry()[name] = add;
}

}  // namespace tokenline::cli

int main(int argc, char** argv) {
  CLI::App app{"tokenline: LLM serving deployments, simulated and run"};
  app.require_subcommand(1);
  for (const auto& [name, add] : tokenline::cli::registry()) add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const tokenline::InputError& e) {
    std::fprintf(stderr, "tokenline: %s\n", e.what());
    return 2;
  }
  return 0;
}
