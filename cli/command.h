// Subcommand registry of the `tokenline` binary. Each subcommand lives in its own <name>_command.cpp,
// compiled straight into the executable, and registers itself with a static CommandRegistration, so that
// main.cpp never changes when a subcommand is added. CLI11 stays out of this header (it costs ~5 s per TU).
#pragma once

namespace CLI {
class App;
}

namespace tokenline::cli {

// add: declares the subcommand, its options and its callback on `app`. The callback returns normally on
// success; it throws InputError for bad input (main prints it and exits 2) and may call std::exit on
// other fatal conditions.
using AddCommandFn = void (*)(CLI::App& app);

struct CommandRegistration {
  CommandRegistration(const char* name, AddCommandFn add);
};

}  // namespace tokenline::cli
