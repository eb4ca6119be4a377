// SPDX-License-Identifier: MIT
#pragma once
// How a `nocflow` command plugs into the command line: each cmd_*.cpp adds a CLI11 subcommand
// and sets the action to run after parsing. Actions throw InputError for bad input (exit 2),
// CheckError when a run's self-checks fail (exit 3).
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "noc/base/progress.h"
#include "optimizer/plan/partition_setup.h"
#include "optimizer/plan/pipeline.h"
#include "sim/config/hw_spec.h"

namespace nocflow::sim::cli {

using Action = std::function<int()>;

/// --hw FILE and repeatable --set key.path=value, shared by every command taking a config.
struct HwOptions {
  std::string file;
  std::vector<std::string> overrides;

  void add_to(CLI::App& cmd, bool required = true);
  HwSpec load() const;
};

/// --network's help: what X may be, with the zoo's names.
std::string network_help();

/// --network X, --batch N, --passes LIST, --train OPTIMIZER: the network as optimize, simulate and
/// friends load it (sim/lower/workload_setup.h), so that their layer names always agree.
inline constexpr const char* kBatchHelp =
    "batch size: default 1 for a zoo network and a YAML network whose input says `batch`; an "
    "ONNX model exported with a dynamic batch needs it; another network file has its own and "
    "takes only that";

struct NetworkOptions {
  std::string network;
  std::int64_t batch = 0;  ///< 0: not given (a zoo network 1, a network file its own)
  std::string passes = "default";
  std::string train;  ///< --train OPTIMIZER: the training graph; "" = inference

  /// Adds --network (required; returned), --batch, --passes and --train.
  CLI::Option* add_to(CLI::App& cmd);
};

/// " (training with sgd)" for `--train sgd`, "" for inference: what banners add to the network.
inline std::string training_note(const std::string& train) {
  return train.empty() ? "" : " (training with " + train + ")";
}

/// What a pipeline of a training graph does not model, noted by optimize and simulate.
inline constexpr const char* kPipelinedTrainingNote =
    "a pipeline of a training graph takes its layers in topological order, forward and backward "
    "alike: most backward layers run in another stage than their forward, saved activations "
    "cross the stages, and every micro-batch updates the weights (no gradient accumulation)";

/// Create `dir` (and parents), remove from it every plain file that optimize, simulate,
/// traffic or validate writes (by name: an earlier run's, of any of them; not a calibration.yaml,
/// which other runs read) but this run's own inputs (`inputs`, paths) and the names in `keep`,
/// and validate's messages/ and plans/ of an earlier run unless an input is in them, so that the folder
/// never mixes two runs, and write the resolved config into it. A sweep's folder is refused
/// (InputError). Call only after all input has been validated, so that
/// a failing command writes nothing; one failing later leaves its config.
void prepare_output_dir(const std::string& dir, const HwSpec& spec,
                        const std::vector<std::string>& inputs = {},
                        const std::vector<std::string>& keep = {});
/// Create `dir` (and parents) and write the resolved config into it, removing nothing; a
/// sweep's folder is refused, as by prepare_output_dir.
void write_resolved_config(const std::string& dir, const HwSpec& spec);
/// Removes files and folders (by name, in `dir`) that an earlier run into `dir` wrote and this
/// one will not, so that the folder holds one run; names that are not there are skipped.
void remove_stale_outputs(const std::string& dir, const std::vector<std::string>& names);

/// For SetupOptions::progress: a line on stderr every 2 s of wall time while a cost model is
/// tabulated ("  ... tabulating linkload: 20 of 72 edges, 14.6 of 19.5 M table entries, 10m06s,
/// ~3m23s left"); nothing on short runs.
optimizer::TabulationProgress tabulation_progress(
    const std::string& what,
    std::shared_ptr<ProgressThrottle> throttle = std::make_shared<ProgressThrottle>());

/// Progress lines for solve_pipeline, sharing one throttle: each band's tabulation ("  ...
/// tabulating linkload for a band of 4 mesh rows: 45 of 120 edges, 4.0 s") and the stage costs
/// solved ("  ... 2536 (layer range, mesh rows) stage costs solved, 10.0 s").
void report_pipeline_progress(optimizer::PipelineOptions& o, const std::string& cost_model,
                              bool mesh);

/// Option check: a finite number of at least `min` ("--cycles: must be at least 1, got 0").
CLI::Validator at_least(double min);
/// Option check: a finite number in [min, max].
CLI::Validator in_range(double min, double max);

/// Every integer option of `app`'s commands first checks that its value is a decimal whole
/// number ("--batch: expected a whole number, got '2.5'"), refusing a leading zero: CLI11 would
/// read `--batch 010` as octal 8. Call once all commands are added.
void require_decimal_integers(CLI::App& app);
/// Every flag of `app`'s commands may be given once ("--vcd: given 2 times; give it once"), as
/// options with values may. Call once all commands are added.
void refuse_repeated_flags(CLI::App& app);

/// Option check: one of `known` ("--mode: unknown mode 'fast' (known: dataflow, barrier)"). A
/// check at parse time also catches an option that took the next one as its value (`--trace
/// --out`).
CLI::Validator one_of(const std::string& what, const std::vector<std::string>& known);

/// --placement snake | search (optimize, and simulate without --plan): search also offers
/// every choice the PLACE=ROWS placement applies to (optimizer/partition/placement.h, rule 3).
CLI::Option* add_placement_option(CLI::App& cmd, std::string& placement);
/// InputError for --placement search on a crossbar, which has no rows to place differently.
void check_placement(const std::string& placement, const HwSpec& spec);

void add_version_command(CLI::App& app, Action& action);
void add_config_command(CLI::App& app, Action& action);
void add_inspect_command(CLI::App& app, Action& action);
void add_traffic_command(CLI::App& app, Action& action);
void add_optimize_command(CLI::App& app, Action& action);
void add_simulate_command(CLI::App& app, Action& action);
void add_validate_command(CLI::App& app, Action& action);
void add_sweep_command(CLI::App& app, Action& action);

}  // namespace nocflow::sim::cli
