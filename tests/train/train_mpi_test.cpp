// Data-parallel runs of nnplug_train under mpirun: the same bytes whatever the number of
// ranks, resume with the same number, and a rank that dies stopping the job.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
                                 const std::vector<std::string>& extra) {
    std::vector<std::string> arguments;
    if (ranks > 0)
        arguments = {NNPLUG_MPIEXEC, "--oversubscribe",    "--bind-to", "none", "--allow-run-as-root",
                     "-np",          std::to_string(ranks)};
    arguments.insert(arguments.end(),
                     {NNPLUG_TRAIN_PROGRAM, "--config", NNPLUG_TRAIN_CONFIG, "--output", output.string()});
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
}

RunResult run(int ranks, const std::filesystem::path& output, const std::vector<std::string>& extra,
              double seconds = 60) {
    std::filesystem::create_directories(output.parent_path());
    const auto log = output.string() + ".log";
    RunResult result;
    const pid_t pid = start(command(ranks, output, extra), log);
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
                                         const std::vector<std::string>& settings) {
    const RunResult alone = run(0, folder / "alone", settings);
    ASSERT_EQ(alone.exit_code, 0) << alone.output;
    const std::string csv = read_text(folder / "alone" / "metrics.csv");
    const std::string checkpoint = read_text(folder / "alone" / "checkpoint.bin");
    ASSERT_EQ(metric_rows(folder / "alone"), 3u) << csv;
    for (const int ranks : {1, 2, 3}) {
        const auto output = folder / ("np" + std::to_string(ranks));
        const RunResult result = run(ranks, output, settings);
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
        resumed.push_back("--resume");
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
    resumed.push_back("--resume");
    const RunResult second = run(3, output, resumed);
    ASSERT_EQ(second.exit_code, 0) << second.output;
    const RunResult whole = run(0, folder.path() / "whole", finite);
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    EXPECT_EQ(read_text(output / "metrics.csv"), read_text(folder.path() / "whole" / "metrics.csv"));
}

// One rank with bad data (mpirun's MPMD form gives rank 1 a CSV with a malformed row):
// that rank reports the file and line with its rank, and the job stops, never hangs.
TEST_F(TrainMpi, ARankWithBadDataStopsTheJobNamingTheRank) {
    std::string csv = "a,b,c,label\n";
    for (int i = 0; i < 40; ++i) csv += fmt_row(i);
    std::string bad = csv;
    bad += "1.0,2.0,not-a-number,1\n";
    const auto good_file = folder.write("good.csv", csv);
    const auto bad_file = folder.write("bad.csv", bad);
    const auto output = folder.path() / "bad_rank";
    const auto rank_arguments = [&](const std::filesystem::path& data) {
        return std::vector<std::string>{"-np",
                                        "1",
                                        NNPLUG_TRAIN_PROGRAM,
                                        "--config",
                                        NNPLUG_TRAIN_CONFIG,
                                        "--output",
                                        output.string(),
                                        "--set",
                                        "data.format=plain",
                                        "--set",
                                        "data.path=" + data.string(),
                                        "--set",
                                        "train.epochs=2"};
    };
    std::vector<std::string> arguments = {NNPLUG_MPIEXEC, "--oversubscribe", "--bind-to", "none",
                                          "--allow-run-as-root"};
    for (const auto& part : rank_arguments(good_file)) arguments.push_back(part);
    arguments.push_back(":");
    for (const auto& part : rank_arguments(bad_file)) arguments.push_back(part);
    const auto log = folder.path() / "bad_rank.log";
    const auto started = Clock::now();
    const pid_t job = start(arguments, log);
    ASSERT_GT(job, 0);
    const int exit_code = wait_for(job, 30);
    const std::string text = read_text(log);
    ASSERT_NE(exit_code, -2) << "hung:\n" << text;
    EXPECT_NE(exit_code, 0) << text;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 20.0) << text;
    EXPECT_NE(text.find("nnplug_train: rank 1 of 2: "), std::string::npos) << text;
    EXPECT_NE(text.find("bad.csv"), std::string::npos) << text;
}

TEST_F(TrainMpi, AnErrorInEveryRankStopsTheJobWithTheRankNamed) {
    const RunResult result = run(2, folder.path() / "bad", {"--set", "optimizer.lrr=0.1"}, 30);
    ASSERT_NE(result.exit_code, -2) << "hung:\n" << result.output;
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("unknown key 'optimizer.lrr'"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("rank "), std::string::npos) << result.output;
}

}  // namespace
