// SPDX-License-Identifier: MIT
// `nocflow version`, `nocflow config`, and the helpers every command shares.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/limits.h"
#include "noc/base/names.h"
#include "optimizer/frontend/zoo.h"
#include "optimizer/passes/autodiff.h"
#include "sim/cli/command.h"
#include "sim/config/hw_loader.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"
#include "sim/system/program.h"

namespace nocflow::sim::cli {

void HwOptions::add_to(CLI::App& cmd, bool required) {
  auto* hw = cmd.add_option("--hw", file, "hardware config YAML (see configs/README.md)")->type_name("FILE");
  if (required) hw->required();
  cmd.add_option("--set", overrides,
                 "override a config key, e.g. --set router.vcs=2 (repeatable, one key each time)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

HwSpec HwOptions::load() const { return load_hw_config(file, overrides); }

std::string network_help() {
  return "zoo:NAME (" + join(optimizer::zoo_names()) + "), a network .yaml or an .onnx model";
}

CLI::Option* NetworkOptions::add_to(CLI::App& cmd) {
  auto* option = cmd.add_option("--network", network, network_help())
                     ->required()
                     ->type_name("X");
  cmd.add_option("--batch", batch, kBatchHelp)->check(in_range(1, kMaxBatch));
  cmd.add_option("--passes", passes,
                 "graph passes before partitioning: default | none | a,b (see inspect); a replay "
                 "of a plan (--plan) takes the plan's")
      ->capture_default_str();
  cmd.add_option("--train", train,
                 "partition the training graph (forward, autodiff's backward, weight updates by "
                 "this optimizer: sgd, momentum, adam)")
      ->type_name("OPTIMIZER")
      ->check(one_of("optimizer", optimizer::optimizer_names()));
  return option;
}

optimizer::TabulationProgress tabulation_progress(const std::string& what,
                                                  std::shared_ptr<ProgressThrottle> throttle) {
  return [throttle = std::move(throttle), what](const optimizer::TabulationStatus& s) {
    const double seconds = throttle->due();
    if (seconds < 0) return;
    std::cerr << "  ... tabulating " << what << ": " << s.edges_done << " of " << s.edges
              << " edges, " << fixed(s.entries_done / 1e6, 1) << " of " << fixed(s.entries / 1e6, 1)
              << " M table entries, " << duration_text(seconds);
    // The time left at this pace (an entry takes longer the more transfers it routes).
    if (s.entries_done > 0)
      std::cerr << ", ~" << duration_text(seconds * (s.entries - s.entries_done) / s.entries_done)
                << " left";
    std::cerr << std::endl;
  };
}

void report_pipeline_progress(optimizer::PipelineOptions& o, const std::string& cost_model,
                              bool mesh) {
  auto throttle = std::make_shared<ProgressThrottle>();
  const std::string unit = mesh ? " mesh rows" : " crossbar ports";
  o.band_progress = [=](int units) {
    return tabulation_progress(cost_model + " for a band of " + std::to_string(units) + unit,
                               throttle);
  };
  o.priced_progress = [=](int priced) {
    if (const double seconds = throttle->due(); seconds >= 0)
      std::cerr << "  ... " << priced << " (layer range," << unit << ") stage costs solved, "
                << fixed(seconds) << " s" << std::endl;
  };
}

namespace {

/// A sweep's folder (sweep.yaml beside its results.csv or inputs.txt) is refused: writing this
/// run's config.resolved.yaml there would make `sweep --resume` take the sweep's machine for changed.
void refuse_sweep_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  const fs::path d(dir);
  if (fs::is_regular_file(d / "sweep.yaml", ignored) &&
      (fs::exists(d / "results.csv", ignored) || fs::exists(d / "inputs.txt", ignored)))
    throw InputError(dir + " holds a sweep (sweep.yaml, results.csv): this run would mix with it and "
                     "break its --resume; give another --out");
}

// Every plain file an output-writing command writes besides config.resolved.yaml. Not
// validate's calibration.yaml, which later runs and plans read (validate removes its own).
const char* const kRunOutputs[] = {
    "summary.json", "plan.yaml",        "plan.dot",           "stages.csv",     "compare.csv",
    "layers.csv",   "transfers.csv",    "links.csv",          "memory.csv",     "trace.json",
    "trace.vcd",    "messages.csv",     "saturation.json",    "validation.csv", "summary.csv",
    "rank.csv",     "rank_summary.csv", "rank_placements.csv"};

}  // namespace

void prepare_output_dir(const std::string& dir, const HwSpec& spec,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& keep) {
  namespace fs = std::filesystem;
  refuse_sweep_folder(dir);
  create_folder(dir, "output folder");
  std::error_code ignored;
  // Whether this run reads `p`, or a file inside it.
  auto read_here = [&](const fs::path& p) {
    const fs::path root = fs::weakly_canonical(p, ignored);
    return std::any_of(inputs.begin(), inputs.end(), [&](const std::string& in) {
      if (in.empty()) return false;
      const fs::path at = fs::weakly_canonical(in, ignored);
      return std::mismatch(root.begin(), root.end(), at.begin(), at.end()).first == root.end();
    });
  };
  std::vector<std::string> stale;
  // validate's folders (messages/: *.txt and *.yaml; plans/: plan_*.yaml) in a folder of an
  // earlier run go too, unless this run reads from them.
  auto validates = [&](const fs::path& folder, bool plans) {
    if (fs::symlink_status(folder, ignored).type() != fs::file_type::directory) return false;
    for (const auto& e : fs::directory_iterator(folder, ignored)) {
      const std::string name = e.path().filename().string(), ext = e.path().extension().string();
      const bool ours = plans ? name.rfind("plan_", 0) == 0 && ext == ".yaml"
                              : ext == ".txt" || ext == ".yaml";
      if (!e.is_regular_file(ignored) || !ours) return false;
    }
    return !read_here(folder);
  };
  if (fs::exists(fs::path(dir) / "config.resolved.yaml", ignored)) {
    if (validates(fs::path(dir) / "messages", false)) stale.push_back("messages");
    if (validates(fs::path(dir) / "plans", true)) stale.push_back("plans");
    // simulate --dump-programs into this folder (pe_N.txt beside names.txt), unless this run
    // replays them: they would not be this run's programs.
    const bool replays_here = std::any_of(inputs.begin(), inputs.end(), [&](const std::string& in) {
      return !in.empty() && fs::equivalent(in, dir, ignored);
    });
    if (!replays_here && fs::is_regular_file(fs::path(dir) / "names.txt", ignored)) {
      stale.push_back("names.txt");
      for (const auto& e : fs::directory_iterator(dir, ignored))
        if (e.is_regular_file(ignored) && program_file_pe(e.path().filename().string()) >= 0)
          stale.push_back(e.path().filename().string());
    }
  }
  for (const char* name : kRunOutputs) {
    const fs::path p = fs::path(dir) / name;
    // Only a plain file: a folder or a link of that name is the user's (writing to it fails,
    // or writes through it, as it would have).
    if (fs::symlink_status(p, ignored).type() != fs::file_type::regular ||
        std::find(keep.begin(), keep.end(), name) != keep.end() || read_here(p))
      continue;
    stale.push_back(name);
  }
  remove_stale_outputs(dir, stale);
  write_file(fs::path(dir) / "config.resolved.yaml", resolved_yaml(spec));
}

void write_resolved_config(const std::string& dir, const HwSpec& spec) {
  refuse_sweep_folder(dir);
  // Beside another command's outputs its config.resolved.yaml says what they ran on: replaced,
  // the folder would contradict itself (a plan priced for 4 VCs, its config saying 2).
  std::error_code ignored;
  for (const char* name : kRunOutputs)
    if (std::filesystem::exists(std::filesystem::path(dir) / name, ignored))
      throw InputError("--out " + dir + " holds another run's outputs (" + name +
                       "): its config.resolved.yaml is theirs; give another folder");
  create_folder(dir, "output folder");
  write_file(std::filesystem::path(dir) / "config.resolved.yaml", resolved_yaml(spec));
}

void remove_stale_outputs(const std::string& dir, const std::vector<std::string>& names) {
  std::error_code ignored;
  for (const std::string& name : names) std::filesystem::remove_all(std::filesystem::path(dir) / name, ignored);
}

CLI::Option* add_placement_option(CLI::App& cmd, std::string& placement) {
  return cmd
      .add_option("--placement", placement,
                  "snake: every choice on the snake walk; search: choices whose rows of nodes (one "
                  "OFMP_H slice's, else one OUTP or BATCH slice's) fill an odd number of mesh rows "
                  "are also offered with every row starting at the left (PLACE=ROWS), and the "
                  "solver picks")
      ->check(one_of("placement", {"snake", "search"}))
      ->capture_default_str();
}

void check_placement(const std::string& placement, const HwSpec& spec) {
  if (placement == "search" && spec.topology.kind == "crossbar")
    throw InputError("--placement search: places mesh rows; a crossbar has none (every placement "
                     "of it is the same)");
}

CLI::Validator in_range(double min, double max) {
  auto text_of = [](double v) {  // 1e12 as 1000000000000, as the user would type it
    return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<long long>(v))
                                                     : CLI::detail::to_string(v);
  };
  const std::string lo = text_of(min), hi = text_of(max);
  const bool bounded = max < std::numeric_limits<double>::max();
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<double> number = parse_decimal_number(text);
        if (!number) return "expected a number, got '" + text + "'";
        const double v = *number;
        if (v < min) return "must be at least " + lo + ", got " + text;
        if (v > max) return "must be at most " + hi + ", got " + text;
        return std::string();
      },
      bounded ? lo + " .. " + hi : ">= " + lo);
}

CLI::Validator at_least(double min) {
  return in_range(min, std::numeric_limits<double>::max());
}

void require_decimal_integers(CLI::App& app) {
  const CLI::Validator decimal(
      [](std::string& text) -> std::string {
        if (is_decimal_integer(text)) return std::string();
        const char* why =
            has_leading_zero(text) ? " without a leading zero (it would read as octal)" : "";
        return std::string("expected a whole number") + why + ", got '" + text + "'";
      },
      "");
  for (CLI::App* cmd : app.get_subcommands({}))
    for (CLI::Option* opt : cmd->get_options()) {
      const std::string type = opt->get_type_name();
      if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) opt->transform(decimal);
    }
}

void refuse_repeated_flags(CLI::App& app) {
  for (CLI::App* cmd : app.get_subcommands({}))
    for (CLI::Option* opt : cmd->get_options())
      if (opt->get_expected_max() == 0 && opt != cmd->get_help_ptr())
        opt->multi_option_policy(CLI::MultiOptionPolicy::Throw);  // CLI11 takes the last
}

CLI::Validator one_of(const std::string& what, const std::vector<std::string>& known) {
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return CLI::Validator(
      [what, known, list](std::string& text) -> std::string {
        return std::find(known.begin(), known.end(), text) != known.end()
                   ? std::string()
                   : unknown_name_message(what, text, known);
      },
      list);
}

void add_version_command(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("version", "print the nocflow version and the commit it was built from");
  cmd->callback([&action] {
    action = [] {
      std::cout << "nocflow " << nocflow_build() << "\n";
      return 0;
    };
  });
}

void add_config_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "config", "check a hardware config, print it resolved, or print the config reference");
  struct Options {
    HwOptions hw;
    bool reference = false;
    bool print = false;
    std::string out;
  };
  auto opts = std::make_shared<Options>();
  auto* check =
      cmd->add_option("--check", opts->hw.file, "validate FILE and print a one-line summary")
          ->type_name("FILE");
  auto* set =
      cmd->add_option(
             "--set", opts->hw.overrides,
             "override a config key (repeatable, one key each time); without --check, of the "
             "built-in defaults")
          ->type_name("KEY=VALUE")
          ->allow_extra_args(false);
  auto* print =
      cmd->add_flag("--print", opts->print,
                    "print the fully resolved YAML (of --check FILE, else of the defaults)");
  auto* out = cmd->add_option("--out", opts->out,
                              "write DIR/config.resolved.yaml (of --check FILE, else of the defaults)")
                  ->type_name("DIR");
  cmd->add_flag("--reference", opts->reference, "print the Markdown config reference")
      ->excludes(check, set, print, out);
  cmd->callback([opts, cmd, &action] {
    action = [opts, cmd] {
      if (opts->reference) {
        std::cout << reference_markdown();
        return 0;
      }
      if (opts->hw.file.empty() && opts->hw.overrides.empty() && !opts->print && opts->out.empty())
        throw InputError("config: give --check FILE, --set, --print, --out or --reference (see "
                         "nocflow config --help)");
      const HwSpec spec = opts->hw.load();
      if (!opts->out.empty()) write_resolved_config(opts->out, spec);
      if (opts->print)
        std::cout << resolved_yaml(spec);
      else
        std::cout << (opts->hw.file.empty() ? "defaults" : opts->hw.file) << ": ok: "
                  << one_line_summary(spec) << "\n";
      // With --print stdout is the YAML alone (to redirect into a file): the rest to stderr.
      std::ostream& say = opts->print ? std::cerr : std::cout;
      for (const std::string& note : hw_notes(spec)) say << "note: " << note << "\n";
      if (!opts->out.empty()) say << "nocflow: wrote " << opts->out << "/config.resolved.yaml\n";
      return 0;
    };
  });
}

}  // namespace nocflow::sim::cli
