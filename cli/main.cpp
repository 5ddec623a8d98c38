// The `tokenline` binary: one CLI11 app whose subcommands register themselves (command.h).
// Exit codes: 0 success, 2 bad input (InputError, a command-line error), 1 anything else; every exception
// ends here as one "tokenline: ..." line, none escapes as a signal.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/preset_names.h"
#include "common/input_error.h"

namespace tokenline::cli {
namespace {

std::map<std::string, AddCommandFn>& registry() {
  static std::map<std::string, AddCommandFn> commands;  // ordered: --help lists them by name
  return commands;
}

// A mistyped flag (CLI11 leaves it among the remaining arguments): the closest flag of the command that
// was parsed, within a third of its length (at least 2 edits).
void suggest_flags(const CLI::App& app) {
  for (const CLI::App* cmd : app.get_subcommands()) {
    for (const std::string& given : cmd->remaining()) {
      if (given.rfind("--", 0) != 0) continue;
      const std::string flag = given.substr(0, given.find('='));
      std::string best;
      size_t best_distance = std::max<size_t>(2, flag.size() / 3) + 1;
      for (const CLI::Option* o : cmd->get_options()) {
        for (const std::string& name : o->get_lnames()) {
          const size_t d = edit_distance(flag, "--" + name);
          if (d < best_distance) {
            best_distance = d;
            best = "--" + name;
          }
        }
      }
      if (!best.empty())
        std::fprintf(stderr, "tokenline %s: %s: did you mean %s?\n", cmd->get_name().c_str(), flag.c_str(),
                     best.c_str());
    }
  }
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
  app.parse_complete_callback([&app] { tokenline::cli::require_finite_numbers(app); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0) tokenline::cli::suggest_flags(app);
    return rc == 0 ? 0 : 2;
  } catch (const tokenline::InputError& e) {
    std::fprintf(stderr, "tokenline: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "tokenline: out of memory (internal error: an input limit should have refused this "
                 "run first)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenline: internal error: %s\n", tokenline::printable_text(e.what()).c_str());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "tokenline: internal error: an unknown exception\n");
    return 1;
  }
  return 0;
}
