// SPDX-License-Identifier: MIT
// nocflow command line. Exit codes: 0 success, 1 internal error, 2 bad input or usage,
// 3 a run's self-checks failed (lost flit, deadlock).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <systemc>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "noc/base/text_input.h"
#include "sim/cli/command.h"
#include "sim/output/build_id.h"

namespace {

/// "nocflow" or "nocflow COMMAND": where the parse stopped.
std::string parsed_command(const CLI::App& top) {
  const std::vector<CLI::App*> parsed = top.get_subcommands();
  return parsed.empty() ? "nocflow" : "nocflow " + parsed.front()->get_name();
}

/// An argument that reads as an option's name: `-x` or `--name`, not a number (`-5`) or `--`.
bool looks_like_option(const std::string& x) {
  return x.size() > 1 && x[0] == '-' && x != "--" && !std::isdigit(static_cast<unsigned char>(x[1])) &&
         x[1] != '.';
}

/// CLI11's parse errors in our words: an unknown option named with a guess, a repeated option,
/// a number that does not convert, a missing command.
std::string parse_error_message(const CLI::App& top, const CLI::Error& e) {
  const std::string what = e.what();
  const std::vector<CLI::App*> parsed = top.get_subcommands();
  const CLI::App& app = parsed.empty() ? top : *parsed.front();
  const std::string command = parsed_command(top);
  // An unknown option comes first, whatever CLI11 found: a misspelt required option
  // (`--netwrk`) is what made `--network` missing.
  std::vector<std::string> extras;
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {  // "... not expected: b --a" (CLI11 lists them last first)
    std::istringstream words(what.substr(what.find(": ") + 2));
    for (std::string w; words >> w;) extras.insert(extras.begin(), w);
  } else if (!parsed.empty()) {
    // Only what precedes `--` can be a misspelt option.
    for (const std::string& x : app.remaining()) {
      if (x == "--") break;
      extras.push_back(x);
    }
  }
  if (!extras.empty()) {
    std::vector<std::string> known;
    for (const CLI::Option* o : app.get_options())
      for (const std::string& n : o->get_lnames()) known.push_back("--" + n);
    for (const std::string& x : extras)
      if (const std::string name = x.substr(0, x.find('='));
          looks_like_option(x) && std::find(known.begin(), known.end(), name) == known.end()) {
        const std::string guess = nocflow::closest_name(name, known);
        return "unknown option '" + name + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?") +
               " (" + command + " --help lists them)";
      }
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      return "unexpected argument '" + extras.front() + "' (" + command +
             " takes options only, --name value; " + command + " --help lists them)";
  }
  const std::string at_most = ": At Most 1 required but received ";  // "--batch" + this + "2"
  if (const auto at = what.find(at_most); dynamic_cast<const CLI::ArgumentMismatch*>(&e) && at != std::string::npos)
    return what.substr(0, at) + ": given " + what.substr(at + at_most.size()) + " times; give it once";
  const std::string convert = "Could not convert: ";  // + "--cycles = 1e3"
  if (const auto eq = what.find(" = ");
      dynamic_cast<const CLI::ConversionError*>(&e) && what.rfind(convert, 0) == 0 && eq != std::string::npos)
    return what.substr(convert.size(), eq - convert.size()) + ": expected a whole number, got '" +
           what.substr(eq + 3) + "'";
  if (what == "A subcommand is required") {
    std::vector<std::string> commands;
    for (const CLI::App* sub : top.get_subcommands({})) commands.push_back(sub->get_name());
    for (const std::string& x : top.remaining())
      if (x.size() > 1 && x[0] == '-') {
        const std::string guess = nocflow::closest_name(x, {"--help", "--version"});
        return "unknown option '" + x + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?") +
               " (give a command first: " + nocflow::join(commands) + ")";
      }
    return "give a command: " + nocflow::join(commands);
  }
  return what;
}

}  // namespace

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
  app.set_version_flag("--version", "nocflow " + sim::nocflow_build());
  // CLI11's own parse errors read like ours, with where to look (once: an unknown option's
  // message already says it).
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    const std::string message = parse_error_message(*top, e);
    const bool points_to_help = message.find("--help") != std::string::npos;
    return "nocflow: error: " + elide_long_lines(message) +
           (points_to_help ? "" : " (" + parsed_command(*top) + " --help lists the options)") +
           "\n";
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
  sim::cli::require_decimal_integers(app);
  sim::cli::refuse_repeated_flags(app);

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
        std::cerr << "nocflow: error: "
                  << elide_long_lines(unknown_name_message("command", argv[1], commands)) << "\n";
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
  } catch (const QuietInputError&) {  // an MPI rank whose error rank 0 prints
    return 2;
  } catch (const QuietCheckError&) {
    return 3;
  } catch (const InputError& e) {
    std::cerr << "nocflow: error: " << elide_long_lines(e.what()) << "\n";
    return 2;
  } catch (const CheckError& e) {
    std::cerr << "nocflow: check failed: " << elide_long_lines(e.what()) << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "nocflow: internal error: " << elide_long_lines(e.what()) << "\n";
    return 1;
  }
}
