// SPDX-License-Identifier: MIT
// nocflow command line. Exit codes: 0 success, 1 internal error, 2 bad input or usage,
// 3 a run's self-checks failed (lost flit, deadlock).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <systemc>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "sim/cli/command.h"

// SystemC's banner is printed before sc_main runs, so main() silences it first.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

extern "C" int sc_main(int argc, char** argv) {
  using namespace nocflow;

  CLI::App app{"nocflow: cycle-level simulator of many-PE neural-network accelerators on a "
               "network-on-chip, with a partition optimizer"};
  app.name("nocflow");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nocflow ") + NOCFLOW_VERSION);
  // CLI11's own parse errors read like ours.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "nocflow: error: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });
  sim::cli::Action action;
  sim::cli::add_version_command(app, action);
  sim::cli::add_config_command(app, action);
  sim::cli::add_inspect_command(app, action);
  sim::cli::add_traffic_command(app, action);
  sim::cli::add_optimize_command(app, action);
  sim::cli::add_simulate_command(app, action);
  sim::cli::add_validate_command(app, action);
  sim::cli::add_sweep_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A mistyped command reaches CLI11 as an extra argument: name it and the commands.
    if (argc > 1 && argv[1][0] != '-') {
      std::vector<std::string> commands;
      for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
      if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
        std::cerr << "nocflow: error: " << unknown_name_message("command", argv[1], commands)
                  << "\n";
        return 2;
      }
    }
    app.exit(e);
    return 2;
  }
  // An option given an empty value (`--hw "$HW"` with HW unset) is a mistake, never "not given".
  for (const CLI::App* sub : app.get_subcommands())
    for (const CLI::Option* opt : sub->get_options())
      if (opt->count() > 0 && opt->get_type_size() > 0)
        for (const std::string& value : opt->results())
          if (value.empty()) {
            std::cerr << "nocflow: error: " << opt->get_name() << ": empty value\n";
            return 2;
          }
  try {
    return action ? action() : 0;
  } catch (const InputError& e) {
    std::cerr << "nocflow: error: " << e.what() << "\n";
    return 2;
  } catch (const CheckError& e) {
    std::cerr << "nocflow: check failed: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "nocflow: internal error: " << e.what() << "\n";
    return 1;
  }
}
