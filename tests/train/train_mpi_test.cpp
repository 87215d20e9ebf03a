// Data-parallel runs of nnplug_train under mpirun: the same bytes whatever the number of
// ranks, resume with the same number, and a rank that dies stopping the job.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_support.h"
#include "child_process.h"

namespace {

using nnplug::test::TempFolder;
using namespace train_test;
using Clock = std::chrono::steady_clock;

// nnplug_train alone (ranks 0) or under mpirun -np ranks, as root if need be.
std::vector<std::string> command(int ranks, const std::filesystem::path& output,
                                 const std::vector<std::string>& extra,
                                 const std::string& config = NNPLUG_TRAIN_CONFIG) {
    std::vector<std::string> arguments;
    if (ranks > 0)
        arguments = {NNPLUG_MPIEXEC, "--oversubscribe",    "--bind-to", "none", "--allow-run-as-root",
                     "-np",          std::to_string(ranks)};
    arguments.insert(arguments.end(),
                     {NNPLUG_TRAIN_PROGRAM, "--config", config, "--output", output.string()});
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
}

RunResult run(int ranks, const std::filesystem::path& output, const std::vector<std::string>& extra,
              double seconds = 60, const std::string& config = NNPLUG_TRAIN_CONFIG) {
    std::filesystem::create_directories(output.parent_path());
    const auto log = output.string() + ".log";
    RunResult result;
    const pid_t pid = start(command(ranks, output, extra, config), log);
    if (pid > 0) result.exit_code = wait_for(pid, seconds);
    result.output = read_text(log);
    return result;
}

size_t metric_rows(const std::filesystem::path& output) {
    const std::string csv = read_text(output / "metrics.csv");
    const size_t lines = static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n'));
    return lines > 0 ? lines - 1 : 0;
}

// The process of the job whose command line names `output` and whose rank is `rank`.
pid_t rank_process(const std::filesystem::path& output, int rank) {
    const std::string wanted_rank = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string command_line = read_text(entry.path() / "cmdline");
        if (command_line.find(NNPLUG_TRAIN_PROGRAM) != 0 ||
            command_line.find(output.string()) == std::string::npos)
            continue;
        std::istringstream environment(read_text(entry.path() / "environ"));
        for (std::string variable; std::getline(environment, variable, '\0');)
            if (variable == wanted_rank) return static_cast<pid_t>(std::stol(name));
    }
    return -1;
}

// A row of a plain CSV: three features and a 0/1 label that a line separates.
std::string fmt_row(int i) {
    const double a = (i % 7) - 3, b = (i % 5) - 2, c = (i % 3) - 1;
    const int label = a + 0.5 * b - c > 0 ? 1 : 0;
    return std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "," +
           std::to_string(label) + "\n";
}

class TrainMpi : public ::testing::Test {
protected:
    TempFolder folder;
};

// 32 shards of 64 rows per batch of 2048 (the last batch of each epoch: 12), so three
// ranks take 11, 11 and 10 of them and two ranks 16 each.
const std::vector<std::string> kLogistic = {"--synthetic", "6000,8",         "--set", "train.batch_size=2048",
                                            "--set",       "train.epochs=3", "--set", "checkpoint.every=1"};
// An MLP on the bce ops (probabilities, pos_weight in the sample weights), SGD with weight
// decay: the other paths of the model, loss and optimizer.
const std::vector<std::string> kMlp = {"--synthetic", "3000,6",
                                       "--set",       "train.batch_size=512",
                                       "--set",       "train.epochs=3",
                                       "--set",       "model.kind=mlp",
                                       "--set",       "model.hidden=[8,4]",
                                       "--set",       "loss=bce",
                                       "--set",       "train.pos_weight=2",
                                       "--set",       "optimizer.kind=sgd",
                                       "--set",       "optimizer.weight_decay=0.001"};

void expect_the_same_bytes_for_any_ranks(const std::filesystem::path& folder,
                                         const std::vector<std::string>& settings,
                                         const std::string& config = NNPLUG_TRAIN_CONFIG) {
    const RunResult alone = run(0, folder / "alone", settings, 60, config);
    ASSERT_EQ(alone.exit_code, 0) << alone.output;
    const std::string csv = read_text(folder / "alone" / "metrics.csv");
    const std::string checkpoint = read_text(folder / "alone" / "checkpoint.bin");
    ASSERT_EQ(metric_rows(folder / "alone"), 3u) << csv;
    for (const int ranks : {1, 2, 3}) {
        const auto output = folder / ("np" + std::to_string(ranks));
        const RunResult result = run(ranks, output, settings, 60, config);
        ASSERT_EQ(result.exit_code, 0) << result.output;
        EXPECT_EQ(read_text(output / "metrics.csv"), csv) << ranks << " ranks";
        // The whole state: parameters, optimizer moments, metrics.
        EXPECT_TRUE(read_text(output / "checkpoint.bin") == checkpoint) << ranks << " ranks";
        if (ranks > 1) {
            EXPECT_NE(result.output.find("Parallel: " + std::to_string(ranks) + " processes"),
                      std::string::npos)
                << result.output;
        }
        // Rank 0 alone writes: one set of console lines, no leftover per-rank config.
        EXPECT_EQ(result.output.find("epoch    1/3"), result.output.rfind("epoch    1/3")) << result.output;
        for (const auto& entry : std::filesystem::directory_iterator(output)) {
            EXPECT_EQ(entry.path().filename().string().find(".config.rank"), std::string::npos)
                << entry.path();
        }
    }
}

TEST_F(TrainMpi, LogisticMetricsAreTheSameBytesAloneAndWithOneTwoThreeRanks) {
    expect_the_same_bytes_for_any_ranks(folder.path(), kLogistic);
}

TEST_F(TrainMpi, MlpMetricsAreTheSameBytesAloneAndWithOneTwoThreeRanks) {
    expect_the_same_bytes_for_any_ranks(folder.path(), kMlp);
}

// The multi-class job (8 shards a batch: 3, 3 and 2 on three ranks), its loss through the
// log-softmax (nll), and the regression job with huber (3 shards a batch).
TEST_F(TrainMpi, DigitsAndDiabetesMetricsAreTheSameBytesAloneAndWithOneTwoThreeRanks) {
    expect_the_same_bytes_for_any_ranks(
        folder.path() / "digits",
        {"--set", "train.batch_size=512", "--set", "train.epochs=3", "--set", "loss=nll"},
        NNPLUG_DIGITS_CONFIG);
    expect_the_same_bytes_for_any_ranks(folder.path() / "diabetes",
                                        {"--set", "train.batch_size=160", "--set", "train.epochs=3", "--set",
                                         "loss=huber", "--set", "loss_beta=0.5"},
                                        NNPLUG_DIABETES_CONFIG);
}

// A batch of 32768: 256 shards of 128 rows, which a rank runs in groups of at most 128
// shards (the model's buffers hold a group): two groups alone, one per rank on 2 or
// 3 ranks.
TEST_F(TrainMpi, LargeBatchRunInGroupsIsTheSameBytesAloneAndWithOneTwoThreeRanks) {
    expect_the_same_bytes_for_any_ranks(folder.path(),
                                        {"--synthetic", "50000,8", "--set", "train.batch_size=32768", "--set",
                                         "train.epochs=3", "--set", "optimizer.kind=sgd"});
}

// One emulated NPU per rank (atlas_emu with devices: 3, aclrtSetDevice(local rank)), as
// CANN programs train data-parallel: the same bytes as cpu_tbb alone.
TEST_F(TrainMpi, AtlasEmuRanksOnTheirOwnDevicesGiveTheBytesOfCpuTbbAlone) {
    const RunResult alone = run(0, folder.path() / "alone", kLogistic);
    ASSERT_EQ(alone.exit_code, 0) << alone.output;
    auto emulated = kLogistic;
    emulated.insert(emulated.end(), {"--backend", "atlas_emu", "--set", "backends.atlas_emu.devices=3"});
    const RunResult result = run(3, folder.path() / "atlas", emulated);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("backend atlas_emu"), std::string::npos) << result.output;
    EXPECT_EQ(read_text(folder.path() / "atlas" / "metrics.csv"),
              read_text(folder.path() / "alone" / "metrics.csv"));
}

TEST_F(TrainMpi, ResumeWithTheSameRanksEndsWithTheMetricsOfAnUninterruptedRun) {
    const RunResult whole = run(0, folder.path() / "whole", kLogistic);
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    // 3 batches per epoch: 4 stops inside epoch 2, 6 at the end of it.
    for (const char* stop_after : {"4", "6"}) {
        const auto output = folder.path() / (std::string("cut") + stop_after);
        auto interrupted = kLogistic;
        interrupted.insert(interrupted.end(), {"--interrupt-after-batches", stop_after});
        const RunResult first = run(2, output, interrupted);
        ASSERT_EQ(first.exit_code, 130) << first.output;
        EXPECT_NE(first.output.find("checkpoint written"), std::string::npos) << first.output;
        auto resumed = kLogistic;
        resumed.emplace_back("--resume");
        const RunResult second = run(2, output, resumed);
        ASSERT_EQ(second.exit_code, 0) << second.output;
        EXPECT_NE(second.output.find("Resumed from"), std::string::npos) << second.output;
        EXPECT_EQ(read_text(output / "metrics.csv"), read_text(folder.path() / "whole" / "metrics.csv"))
            << "interrupted after " << stop_after << " batches";
    }
}

TEST_F(TrainMpi, AKilledRankStopsTheJobNamingItAndTheLastCheckpointResumes) {
    const auto output = folder.path() / "killed";
    // Many short epochs with a checkpoint after each: the kill lands while training.
    const std::vector<std::string> settings = {"--synthetic",          "4000,8", "--set",
                                               "train.batch_size=256", "--set",  "checkpoint.every=1"};
    auto endless = settings;
    endless.insert(endless.end(), {"--set", "train.epochs=100000"});
    const auto log = folder.path() / "killed.log";
    const pid_t job = start(command(3, output, endless), log);
    ASSERT_GT(job, 0);
    for (int i = 0; i < 1200 && read_text(log).find("epoch    3/") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_NE(read_text(log).find("epoch    3/"), std::string::npos) << read_text(log);
    const pid_t victim = rank_process(output, 1);
    ASSERT_GT(victim, 0) << "rank 1 not found";
    const auto killed_at = Clock::now();
    ASSERT_EQ(kill(victim, SIGKILL), 0);
    const int exit_code = wait_for(job, 30);
    const double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
    const std::string text = read_text(log);
    ASSERT_NE(exit_code, -2) << "the job did not stop within 30 s of the kill:\n" << text;
    EXPECT_NE(exit_code, 0) << text;
    EXPECT_LT(seconds, 10.0) << text;
    EXPECT_NE(text.find("rank 1"), std::string::npos) << text;
    std::printf("job stopped %.2f s after rank 1 was killed, exit code %d\n", seconds, exit_code);

    // The last checkpoint is whole: resume with the same ranks, one epoch further, and end
    // with the metrics of a run of that many epochs.
    const size_t epochs = metric_rows(output) + 1;
    ASSERT_GE(epochs, 3u);
    auto finite = settings;
    finite.insert(finite.end(), {"--set", "train.epochs=" + std::to_string(epochs)});
    auto resumed = finite;
    resumed.emplace_back("--resume");
    const RunResult second = run(3, output, resumed);
    ASSERT_EQ(second.exit_code, 0) << second.output;
    const RunResult whole = run(0, folder.path() / "whole", finite);
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    EXPECT_EQ(read_text(output / "metrics.csv"), read_text(folder.path() / "whole" / "metrics.csv"));
}

// One rank with bad data (mpirun's MPMD form gives rank 1 a CSV with a malformed row):
// that rank reports the file and line with its rank, and the job stops, never hangs.
// A job of two ranks started with their own command lines (mpirun's app contexts).
RunResult run_two(const std::filesystem::path& output, const std::vector<std::string>& rank0,
                  const std::vector<std::string>& rank1) {
    std::vector<std::string> arguments = {NNPLUG_MPIEXEC, "--oversubscribe", "--bind-to", "none",
                                          "--allow-run-as-root"};
    for (const auto* extra : {&rank0, &rank1}) {
        if (extra == &rank1) arguments.emplace_back(":");
        arguments.insert(arguments.end(), {"-np", "1", NNPLUG_TRAIN_PROGRAM, "--config", NNPLUG_TRAIN_CONFIG,
                                           "--output", output.string()});
        arguments.insert(arguments.end(), extra->begin(), extra->end());
    }
    std::filesystem::create_directories(output.parent_path());
    const auto log = output.string() + ".log";
    RunResult result;
    const pid_t job = start(arguments, log);
    if (job > 0) result.exit_code = wait_for(job, 30);
    result.output = read_text(log);
    return result;
}

// Ranks that would train otherwise stop before training, quickly, naming what differs;
// nothing is written.
void expect_refused(const std::filesystem::path& output, const std::vector<std::string>& rank0,
                    const std::vector<std::string>& rank1, const std::vector<std::string>& named) {
    const auto started = Clock::now();
    const RunResult result = run_two(output, rank0, rank1);
    ASSERT_NE(result.exit_code, -2) << "hung:\n" << result.output;
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 20.0) << result.output;
    EXPECT_NE(result.output.find("nnplug_train: the ranks do not run the same settings: "), std::string::npos)
        << result.output;
    for (const auto& text : named) EXPECT_NE(result.output.find(text), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("epoch "), std::string::npos) << result.output;
    EXPECT_FALSE(std::filesystem::exists(output / "metrics.csv"));
}

TEST_F(TrainMpi, RanksWithOtherEpochsBatchOrRowsStopNamingTheKeys) {
    const std::vector<std::string> base = {"--set", "train.epochs=2"};
    expect_refused(folder.path() / "epochs", base, {"--set", "train.epochs=3"},
                   {"train.epochs (rank 0: 2, rank 1: 3)"});
    auto batch = base;
    batch.insert(batch.end(), {"--set", "train.batch_size=64"});
    expect_refused(folder.path() / "batch", base, batch, {"train.batch_size (rank 0: 32, rank 1: 64)"});
    expect_refused(folder.path() / "rows", {"--synthetic", "1000,4"}, {"--synthetic", "1200,4"},
                   {"data.synthetic (rank 0: 1000,4, rank 1: 1200,4)"});
}

TEST_F(TrainMpi, RanksWithOtherRateSeedOrFeaturesStopNamingTheKeys) {
    const std::vector<std::string> base = {"--set", "train.epochs=2"};
    auto rate = base, seed = base;
    rate.insert(rate.end(), {"--set", "optimizer.lr=0.02"});
    seed.insert(seed.end(), {"--set", "train.seed=7", "--set", "loss=bce"});
    expect_refused(folder.path() / "rate", base, rate, {"optimizer.lr (rank 0: 0.01, rank 1: 0.02)"});
    expect_refused(folder.path() / "seed", base, seed,
                   {"train.seed (rank 0: 42, rank 1: 7)", "loss (rank 0: bce_with_logits, rank 1: bce)"});
    expect_refused(folder.path() / "features", {"--synthetic", "1000,4"}, {"--synthetic", "1000,5"},
                   {"data.synthetic (rank 0: 1000,4, rank 1: 1000,5)"});
}

TEST_F(TrainMpi, RanksWithOtherDataFilesStopNamingSizeAndHash) {
    std::string csv = "a,b,c,label\n";
    for (int i = 0; i < 40; ++i) csv += fmt_row(i);
    std::string same_size = csv;
    same_size[same_size.size() - 2] = same_size[same_size.size() - 2] == '1' ? '0' : '1';  // one label
    const auto first = folder.write("first.csv", csv);
    const auto flipped = folder.write("flipped.csv", same_size);
    const auto longer = folder.write("longer.csv", csv + fmt_row(41));
    const auto copy = folder.write("copy.csv", csv);
    const auto data = [](const std::filesystem::path& path) {
        return std::vector<std::string>{"--set", "data.format=plain", "--set", "data.path=" + path.string(),
                                        "--set", "train.epochs=2"};
    };
    const RunResult flip = run_two(folder.path() / "flip", data(first), data(flipped));
    EXPECT_NE(flip.output.find("data.file_hash (rank 0: fnv1a "), std::string::npos) << flip.output;
    EXPECT_EQ(flip.output.find("data.file_size"), std::string::npos) << flip.output;
    EXPECT_NE(flip.exit_code, 0);
    expect_refused(folder.path() / "longer", data(first), data(longer), {"data.file_size", "data.file_hash"});
    // The same bytes under another path (another host's mount, say) are the same data.
    const RunResult same = run_two(folder.path() / "same", data(first), data(copy));
    EXPECT_EQ(same.exit_code, 0) << same.output;
    EXPECT_EQ(metric_rows(folder.path() / "same"), 2u) << same.output;
}

// Ranks that resume from different checkpoints, or of which only one resumes, would combine
// steps of different models: they stop before training, naming the checkpoint.
TEST_F(TrainMpi, RanksResumingFromOtherStatesStopNamingTheCheckpoint) {
    const std::vector<std::string> base = {"--set", "train.epochs=2"};
    const auto first = folder.path() / "first";
    ASSERT_EQ(run(0, first, base).exit_code, 0);
    auto longer = base;
    longer.back() = "train.epochs=3";
    const auto second = folder.path() / "second";
    ASSERT_EQ(run(0, second, longer).exit_code, 0);
    const auto resume = [&](const std::filesystem::path& checkpoint) {
        auto arguments = longer;
        arguments.insert(arguments.end(), {"--resume", checkpoint.string()});
        return arguments;
    };
    expect_refused(folder.path() / "one", longer, resume(first / "checkpoint.bin"),
                   {"resume.checkpoint (rank 0: none, rank 1: "});
    expect_refused(folder.path() / "other", resume(first / "checkpoint.bin"),
                   resume(second / "checkpoint.bin"), {"resume.checkpoint (rank 0: "});
}

// A rank whose loss runs on another backend computes other bytes: the ranks stop, naming
// the routing. Thread counts for the backend may differ (each rank takes its share).
TEST_F(TrainMpi, RanksRoutingOpsElsewhereStopNamingTheRouting) {
    const std::vector<std::string> base = {"--set", "train.epochs=2"};
    auto routed = base;
    routed.insert(routed.end(), {"--set", "ops.aclnnBinaryCrossEntropyWithLogits=atlas_emu"});
    expect_refused(folder.path() / "routed", base, routed,
                   {"ops (rank 0: (none), rank 1: {aclnnBinaryCrossEntropyWithLogits: atlas_emu})"});
    // An emulated SoC with other cores sums in another order: the ranks compare it.
    auto soc = base;
    soc.insert(soc.end(), {"--set", "backends.atlas_emu.soc=Ascend910"});
    expect_refused(folder.path() / "soc", base, soc,
                   {"backends.atlas_emu.soc (rank 0: (none), rank 1: Ascend910)"});
    // Thread counts change no byte: each rank may take its share of the cores.
    auto threads = base;
    threads.insert(threads.end(),
                   {"--set", "backends.cpu_tbb.threads=1", "--set", "backends.atlas_emu.host_threads=1"});
    const RunResult same = run_two(folder.path() / "threads", base, threads);
    EXPECT_EQ(same.exit_code, 0) << same.output;
}

// Each rank takes its share of the cores for its own threads and the backend's, with or
// without mpirun's binding, and oneTBB has nothing to warn about; train.threads overrides.
TEST_F(TrainMpi, EachRankUsesItsShareOfTheCoresWithoutOneTbbWarnings) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int share = std::max(1, cores / 2);
    const std::vector<std::string> settings = {"--synthetic",           "40000,64", "--set",
                                               "train.batch_size=4096", "--set",    "train.epochs=1"};
    for (const std::string binding : {"core", "none"}) {
        auto arguments = std::vector<std::string>{NNPLUG_MPIEXEC,
                                                  "--allow-run-as-root",
                                                  "--oversubscribe",
                                                  "--bind-to",
                                                  binding,
                                                  "-np",
                                                  "2",
                                                  NNPLUG_TRAIN_PROGRAM,
                                                  "--config",
                                                  NNPLUG_TRAIN_CONFIG,
                                                  "--output",
                                                  (folder.path() / binding).string()};
        arguments.insert(arguments.end(), settings.begin(), settings.end());
        const auto log = folder.path() / (binding + ".log");
        const pid_t job = start(arguments, log);
        ASSERT_GT(job, 0);
        ASSERT_EQ(wait_for(job, 120), 0) << read_text(log);
        const std::string text = read_text(log);
        EXPECT_NE(text.find(fmt::format("Parallel: 2 processes x {} host thread", share)), std::string::npos)
            << binding << ":\n"
            << text;
        EXPECT_EQ(text.find("TBB Warning"), std::string::npos) << binding << ":\n" << text;
        // The saved config is the user's: the share is not written into it.
        EXPECT_NE(read_text(folder.path() / binding / "config.yaml").find("threads: 0"), std::string::npos);
    }
    auto chosen = settings;
    chosen.insert(chosen.end(), {"--set", "train.threads=3"});
    const RunResult result = run(2, folder.path() / "chosen", chosen);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("Parallel: 2 processes x 3 host threads"), std::string::npos)
        << result.output;
}

// The command docs/scaling.md shows, as root on a 2-core machine (smaller data).
TEST_F(TrainMpi, TheDocumentedCommandRunsAsShown) {
    const auto output = folder.path() / "documented";
    const pid_t job =
        start({NNPLUG_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2", NNPLUG_TRAIN_PROGRAM,
               "--config", NNPLUG_TRAIN_CONFIG, "--output", output.string(), "--synthetic", "40000,64",
               "--set", "train.batch_size=4096", "--set", "train.epochs=2"},
              folder.path() / "documented.log");
    ASSERT_GT(job, 0);
    const std::string text = (wait_for(job, 120), read_text(folder.path() / "documented.log"));
    EXPECT_EQ(metric_rows(output), 2u) << text;
    EXPECT_NE(text.find("Data-parallel over 2 processes"), std::string::npos) << text;
}

TEST_F(TrainMpi, AnErrorInEveryRankStopsTheJobWithTheRankNamed) {
    const RunResult result = run(2, folder.path() / "bad", {"--set", "optimizer.lrr=0.1"}, 30);
    ASSERT_NE(result.exit_code, -2) << "hung:\n" << result.output;
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("unknown key 'optimizer.lrr'"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("rank "), std::string::npos) << result.output;
}

}  // namespace
