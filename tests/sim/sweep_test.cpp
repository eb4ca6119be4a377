// SPDX-License-Identifier: MIT
// How a sweep orders and shares its points among MPI ranks (sim/sweep/sweep.h), and how a
// spec's points are checked, each on its own machine (sim/sweep/spec.h).
#include "sim/sweep/sweep.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "noc/base/error.h"
#include "sim/output/build_id.h"
#include "sim/sweep/spec.h"
#include "sim/sweep/sweep_inputs.h"
#include "tests/input_error.h"
#include "tests/scratch.h"

namespace nocflow::sim {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::fresh_dir;

std::vector<SweepPoint> points_of_spec(const std::string& name, const std::string& hw, const std::string& axes) {
  const auto file = fresh_dir(name) / "spec.yaml";
  std::ofstream(file) << "hw: " << NOCFLOW_SOURCE_DIR << "/configs/hw/" << hw << "\naxes:\n" << axes;
  return sweep_points(load_sweep_spec(file.string()));
}

TEST(Sweep, PointsRunHeaviestFirstTiesInPointOrder) {
  // 18 points: more than std::sort insertion-sorts, so an unstable sort would show.
  const auto points =
      points_of_spec("sweep_heaviest_first", "mesh4x4.yaml",
                     "  network: zoo:vgg5\n  mesh: [2x2, 8x8, 4x4]\n  solver: [greedy, dp]\n"
                     "  router.vcs: [2, 4, 8]\n");
  ASSERT_EQ(points.size(), 18u);
  std::vector<const SweepPoint*> all;
  for (const SweepPoint& p : points) all.push_back(&p);
  const std::vector<const SweepPoint*> order = heaviest_first(all);
  ASSERT_EQ(order.size(), 18u);
  // 8x8's six points (indices 6-11), then 4x4's (12-17), then 2x2's (0-5), each in point order.
  std::vector<std::size_t> indices;
  for (const SweepPoint* p : order) indices.push_back(p->index);
  EXPECT_EQ(indices, (std::vector<std::size_t>{6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 0, 1, 2,
                                               3, 4, 5}));
  EXPECT_EQ(order.front()->key, "network=zoo:vgg5 mesh=8x8 solver=greedy router.vcs=2");
  // A point's weight is its PEs squared: 8x8 (64 PEs) counts 256 times 2x2 (4 PEs).
  EXPECT_DOUBLE_EQ(point_weight(points[6]), 4096);
  EXPECT_DOUBLE_EQ(point_weight(points[6]) / point_weight(points[0]), 256);
}

TEST(Sweep, TimeLeftIsAtThePaceOfThePointsSolver) {
  const auto points = points_of_spec("sweep_pace", "mesh4x4.yaml",
                                     "  network: zoo:vgg5\n  mesh: [2x2, 4x4]\n"
                                     "  solver: [greedy, dp, ilp]\n");
  ASSERT_EQ(points.size(), 6u);  // 2x2 greedy, dp, ilp; then 4x4's
  SweepPace pace;
  EXPECT_EQ(pace.seconds(points[4]), 0);  // nothing finished: no pace yet
  // 2x2 (weight 16): greedy took 1 s, dp 8 s. 4x4 (weight 256) at its solver's pace; ilp, none
  // of whose points finished, at every solver's: 9 s per 32 weight.
  const double small = point_weight(points[0]), large = point_weight(points[3]);
  ASSERT_EQ(small, 16);
  ASSERT_EQ(large, 256);
  pace.finished(points[0], 1);
  pace.finished(points[1], 8);
  EXPECT_DOUBLE_EQ(pace.seconds(points[3]), 1 / small * large);
  EXPECT_DOUBLE_EQ(pace.seconds(points[4]), 8 / small * large);
  EXPECT_DOUBLE_EQ(pace.seconds(points[5]), (1 + 8) / (2 * small) * large);
  // A dp point running for 200 s on 4x4 (of 128 expected): dp is at least that slow, 200 s per
  // 256 weight, so a 2x2 dp point should take 200 / 256 x 16 s; greedy is not slowed.
  pace.run(points[4], 200);
  EXPECT_DOUBLE_EQ(pace.seconds(points[4]), 200);
  EXPECT_DOUBLE_EQ(pace.seconds(points[1]), 200 / large * small);
  EXPECT_DOUBLE_EQ(pace.seconds(points[3]), 1 / small * large);
  pace.forget_running();
  EXPECT_DOUBLE_EQ(pace.seconds(points[4]), 8 / small * large);
  pace.finished(points[2], 3);  // ilp's own pace from now on
  EXPECT_DOUBLE_EQ(pace.seconds(points[5]), 3 / small * large);
}

// Time left is when the last point ends with the jobs given, not the work left over the jobs:
// a running point cannot be shared between them.
TEST(Sweep, TimeLeftWaitsForTheLongestPointAJobCannotShare) {
  // One point with 8 s to go and one of 1 s queued, two jobs: 8 s (the mean over two said 4.5).
  EXPECT_DOUBLE_EQ(seconds_left({8}, {1}, 2), 8);
  // Queued points go to the job free first: 3 s running, then 4 and 4 queued: 4 on the idle
  // job, the other 4 after the 3 s point: 7 s.
  EXPECT_DOUBLE_EQ(seconds_left({3}, {4, 4}, 2), 7);
  // One job runs everything in turn.
  EXPECT_DOUBLE_EQ(seconds_left({2}, {1, 1, 1}, 1), 5);
  // Nothing left.
  EXPECT_DOUBLE_EQ(seconds_left({}, {}, 4), 0);
  // Work that divides evenly takes its share: 4 points of 2 s on 4 jobs, 2 s.
  EXPECT_DOUBLE_EQ(seconds_left({}, {2, 2, 2, 2}, 4), 2);
}

TEST(Sweep, ARankRunsThePointsItClaimsAndRankZeroReportsAnotherRanksError) {
  // Rank 0 of two, in one process: the shared counter gives it the first and third points to
  // run (the other rank took the second, the fourth is left over), and the other rank's rows
  // end with its error. Rank 0 still writes the rows every rank finished, then reports it.
  const fs::path dir = fresh_dir("sweep_claims");
  std::ofstream(dir / "spec.yaml") << "hw: " << NOCFLOW_SOURCE_DIR << "/configs/hw/mesh4x4.yaml\n"
                                   << "set: {pe.sram_bytes: 67108864}\naxes:\n"
                                   << "  network: zoo:vgg5\n  mesh: [2x2, 1x2, 2x1]\n"
                                   << "  solver: greedy\n  cost_model: paper\n";
  const SweepSpec spec = load_sweep_spec((dir / "spec.yaml").string());
  const std::vector<SweepPoint> points = sweep_points(spec);
  Cluster two;
  two.size = 2;
  const std::vector<std::size_t> handed{0, 2, 3};  // heaviest first: 2x2, then 1x2, 2x1
  auto next = std::make_shared<std::size_t>(0);
  two.claim = [handed, next] { return handed.at((*next)++); };
  int gathers = 0;
  two.gather = [&gathers](const std::string& mine) {
    if (gathers++ == 0) return std::vector<std::string>{mine, ""};  // both read the same inputs
    return std::vector<std::string>{mine, "!Ithe other rank's folder is not writable"};
  };
  SweepOptions o;
  o.out = (dir / "out").string();
  o.quiet = true;
  const std::string error = error_of([&] { run_sweep(spec, points, o, two); });
  EXPECT_EQ(error, "rank 1: the other rank's folder is not writable");
  EXPECT_EQ(*next, 3u);  // asked once more after the last, not again
  std::ifstream results(dir / "out" / "results.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(results, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);  // header, 2x2 (pending[0]) and 2x1 (pending[2])
  EXPECT_EQ(lines[1].rfind("network=zoo:vgg5 mesh=2x2 ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("network=zoo:vgg5 mesh=2x1 ", 0), 0u) << lines[2];
}

TEST(Sweep, ARankThatReadsOtherInputsThanRankZeroStopsEveryRankBeforeAnyPoint) {
  // Two ranks in one process: rank 1's spec says pe.sram_bytes 64 MiB where rank 0's said 32
  // MiB. Each rank's word on its inputs is gathered before any point runs, and rank 0's verdict
  // goes to every rank: no rank claims a point.
  const fs::path dir = fresh_dir("sweep_rank_inputs");
  auto spec_text = [](const char* sram) {
    return std::string("hw: ") + NOCFLOW_SOURCE_DIR +
           "/configs/hw/mesh4x4.yaml\nset: {pe.sram_bytes: " + sram +
           "}\naxes:\n  network: zoo:vgg5\n  mesh: [2x2, 1x2]\n";
  };
  std::ofstream(dir / "rank0.yaml") << spec_text("33554432");
  std::ofstream(dir / "spec.yaml") << spec_text("67108864");
  const SweepSpec rank0 = load_sweep_spec((dir / "rank0.yaml").string());
  const SweepSpec spec = load_sweep_spec((dir / "spec.yaml").string());
  const std::vector<SweepPoint> points = sweep_points(spec);
  SweepOptions o;
  o.out = (dir / "out").string();
  o.quiet = true;
  bool claimed = false;
  std::vector<std::string> broadcast, gathered;  // what this rank sent
  // Rank `rank` of two, rank 0's broadcasts (rank 0's are its own) and the gathers' results
  // given.
  auto rank_of_two = [&](int rank, std::vector<std::string> from_rank0,
                         std::vector<std::vector<std::string>> gathers) {
    Cluster two;
    two.rank = rank, two.size = 2;
    broadcast.clear(), gathered.clear(), claimed = false;
    two.broadcast = [&broadcast, from_rank0, rank](const std::string& mine) {
      broadcast.push_back(mine);
      return rank == 0 ? mine : from_rank0.at(broadcast.size() - 1);
    };
    two.gather = [&gathered, gathers](const std::string& mine) {
      gathered.push_back(mine);
      return gathers.at(gathered.size() - 1);
    };
    two.claim = [&claimed, &points] { return claimed = true, points.size(); };  // none left
    return two;
  };

  // Rank 1 sends its word, the first line that differs, and stops with rank 0's verdict, which
  // rank 0 prints: rank 1's error is a quiet one (main exits 2 and prints nothing).
  const std::string rank0_inputs = sweep_inputs(rank0, sweep_points(rank0));  // its broadcast
  auto quiet_error = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const QuietInputError& e) {
      return std::string(e.what());
    } catch (const InputError& e) {
      return "(printed) " + std::string(e.what());
    }
    return std::string("(no InputError)");
  };
  std::string error = quiet_error([&] {
    run_sweep(spec, points, o, rank_of_two(1, {rank0_inputs, "K", "Irank 1: its word"}, {{}}));
  });
  EXPECT_EQ(error, "rank 1: its word");
  EXPECT_FALSE(claimed);
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_EQ(gathered[0], "Iit read other inputs than rank 0 (" + spec.file +
                             " and what it names, line 3: 'set: {pe.sram_bytes: 33554432}' on "
                             "rank 0, 'set: {pe.sram_bytes: 67108864}' here): every rank must "
                             "read the same spec, machine and network files");

  // Rank 0 gathers that word and tells every rank to stop, naming the rank; it prints it.
  const std::string word = gathered[0];
  error = quiet_error([&] {
    run_sweep(rank0, sweep_points(rank0), o, rank_of_two(0, {}, {{"", word}}));
  });
  EXPECT_EQ(error, "(printed) rank 1: " + word.substr(1));
  error = error.substr(std::string("(printed) ").size());
  EXPECT_EQ(gathered, (std::vector<std::string>{""}));  // its own word: its inputs are rank 0's
  EXPECT_FALSE(claimed);
  ASSERT_EQ(broadcast.size(), 3u);  // its inputs, the finished points, the verdict
  EXPECT_EQ(broadcast[0], rank0_inputs);
  EXPECT_EQ(broadcast[2], "I" + error);

  // Rank 0's own setup failed: the others stop after its word, before any check or gather,
  // quietly (rank 0 prints it).
  error = quiet_error([&] {
    run_sweep(spec, points, o, rank_of_two(1, {"", "Eout holds a sweep already"}, {}));
  });
  EXPECT_EQ(error, "out holds a sweep already");
  EXPECT_EQ(broadcast.size(), 2u);
  EXPECT_TRUE(gathered.empty());
  EXPECT_FALSE(claimed);

  // Rank 0 runs another build (its first line names it): rank 1 says so, whatever else matches.
  const std::string own = sweep_inputs(spec, points);
  ASSERT_EQ(own.rfind("# nocflow " + nocflow_build() + "\n", 0), 0u) << own;
  const std::string other_build =
      "# nocflow " NOCFLOW_VERSION " (commit 0123456789ab)" + own.substr(own.find('\n'));
  error = quiet_error([&] {
    run_sweep(spec, points, o, rank_of_two(1, {other_build, "K", "Irank 1: its word"}, {{}}));
  });
  EXPECT_EQ(error, "rank 1: its word");
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_EQ(gathered[0], "Iit runs another nocflow than rank 0 ('nocflow " NOCFLOW_VERSION
                         " (commit 0123456789ab)' on rank 0, 'nocflow " +
                             nocflow_build() + "' here): every rank must run the same build");
  EXPECT_FALSE(claimed);

  // The same inputs: it claims points (none is left here) and sends its rows, none.
  EXPECT_EQ(run_sweep(spec, points, o,
                      rank_of_two(1, {sweep_inputs(spec, points), "K", "", "ok"}, {{}, {}})),
            0);
  EXPECT_TRUE(claimed);
  EXPECT_EQ(gathered, (std::vector<std::string>{"", ""}));
}

TEST(SweepSpec, APointIsCheckedOnItsOwnMachine) {
  // 32 VCs are too many for the 16-port crossbar the base config is, not for the 2x2 mesh the
  // points run on; array rows of 0 only load beside array columns of 0.
  const auto mesh = points_of_spec("sweep_own_machine", "crossbar16.yaml",
                                   "  network: zoo:vgg5\n  topology: mesh\n  mesh: 2x2\n"
                                   "  router.vcs: [4, 32]\n  router.routing: [xy, west_first]\n");
  ASSERT_EQ(mesh.size(), 4u);
  for (const SweepPoint& p : mesh) EXPECT_EQ(p.hw.topology.kind, "mesh") << p.key;
  EXPECT_EQ(mesh[3].hw.router.vcs, 32);
  EXPECT_EQ(mesh[3].hw.router.routing, "west_first");
  EXPECT_EQ(points_of_spec("sweep_own_machine_pe", "mesh4x4.yaml",
                           "  network: zoo:vgg5\n  pe.array_rows: 0\n  pe.array_cols: 0\n")
                .size(),
            1u);
  // (0, 16) and (16, 0) do not load: the spec names the first such point.
  EXPECT_HAS(error_of([] {
               points_of_spec("sweep_own_machine_pe2", "mesh4x4.yaml",
                              "  network: zoo:vgg5\n  pe.array_rows: [0, 16]\n"
                              "  pe.array_cols: [0, 16]\n");
             }),
             "point network=zoo:vgg5 pe.array_rows=0 pe.array_cols=16: ");
  // A crossbar of 64 ports takes at most 4 VCs (256 input VCs): the 8-VC point is refused
  // before anything runs, though 8 VCs load on the 4x4 base config.
  EXPECT_HAS(error_of([] {
               points_of_spec("sweep_own_machine_xbar", "mesh4x4.yaml",
                              "  network: zoo:vgg5\n  topology: crossbar\n  mesh: 8x8\n"
                              "  router.vcs: [4, 8]\n");
             }),
             "point network=zoo:vgg5 topology=crossbar mesh=8x8 router.vcs=8: router.vcs: 64 ports "
             "x 8 VCs");
  // 32 VCs load on the 2x2 mesh: the points fail for their array rows alone, which are blamed.
  const std::string other = error_of([] {
    points_of_spec("sweep_own_machine_other", "crossbar16.yaml",
                   "  network: zoo:vgg5\n  topology: mesh\n  mesh: 2x2\n  router.vcs: 32\n"
                   "  pe.array_rows: 0\n");
  });
  EXPECT_HAS(other, "spec.yaml:7:18: pe.array_rows: pe.array_rows and pe.array_cols must both be 0");
  EXPECT_EQ(other.find("32 VCs"), std::string::npos) << other;
  // A value no point can take is blamed at its place, as before.
  EXPECT_HAS(error_of([] {
               points_of_spec("sweep_own_machine_bad", "mesh4x4.yaml",
                              "  network: zoo:vgg5\n  mesh: [2x2, 4x4]\n  router.vcs: [2, 0]\n");
             }),
             "spec.yaml:5:19: router.vcs: value 0 is out of range");
}

}  // namespace
}  // namespace nocflow::sim
