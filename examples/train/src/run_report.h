// What a run leaves for a person to read: metrics.csv, the training curves as SVG and
// a summary (console and summary.json).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "classification_metrics.h"

namespace train {

// One row per epoch: epoch,train_loss,train_accuracy,test_loss,test_accuracy,test_roc_auc.
// Only values that depend on the config and seed: no timings, so runs can be compared byte for byte.
std::string metrics_csv(const std::vector<EpochMetrics>& history);

// Two panels, loss and accuracy against epoch, train and test.
std::string training_curves_svg(const std::vector<EpochMetrics>& history, const std::string& title);

struct RunSummary {
    std::string backend;
    std::string data;
    std::string model;
    std::array<std::string, 2> label_names;
    EpochMetrics last;
    ConfusionMatrix confusion;
    int64_t samples_trained = 0;  // by this process (a resumed run counts its part only)
    double train_seconds = 0;
    double samples_per_second = 0;
    int processes = 1;           // ranks of a data-parallel run
    int host_threads = 0;        // oneTBB threads of each process
    int64_t steps = 0;           // optimizer steps run by this process
    double combine_seconds = 0;  // of train_seconds, in the combine across processes
};

std::string summary_text(const RunSummary& summary);
std::string summary_json(const RunSummary& summary);

}  // namespace train
