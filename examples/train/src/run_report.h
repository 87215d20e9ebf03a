// What a run leaves for a person to read: metrics.csv, the training curves as SVG and
// a summary (console and summary.json).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint.h"
#include "classification_metrics.h"
#include "task.h"

namespace train {

// One row per epoch: epoch,train_loss,train_accuracy,test_loss,test_accuracy,test_roc_auc.
// Only values that depend on the config and seed: no timings, so runs can be compared byte for byte.
std::string metrics_csv(const std::vector<EpochMetrics>& history);
// The task's columns: binary as above; multiclass
// epoch,train_loss,train_accuracy,test_loss,test_accuracy; regression
// epoch,train_loss,test_loss,test_rmse,test_mae.
std::string metrics_csv(const std::vector<EpochMetrics>& history, Task task);

// Two panels, loss and accuracy against epoch, train and test.
std::string training_curves_svg(const std::vector<EpochMetrics>& history, const std::string& title);
// The task's: a regression's second panel is the test RMSE and MAE (target units); `loss`
// names the loss in the first panel's title.
std::string training_curves_svg(const std::vector<EpochMetrics>& history, const std::string& title, Task task,
                                const std::string& loss);

// The C x C confusion matrix of the test split as a grid of counts, each cell shaded by its
// share of its actual class's rows.
std::string confusion_matrix_svg(const ClassConfusion& confusion, const std::vector<std::string>& names,
                                 const std::string& title);

// A regression's predictions against the true targets of the test split, with the line
// predicted = true.
std::string predicted_vs_true_svg(const float* predicted, const float* actual, int64_t count,
                                  const RegressionErrors& errors, const std::string& title);

// What a run's plots and summary say produced them, e.g. "MLP 30-16-8-1 on
// breast_cancer_wisconsin.csv (...): bce_with_logits loss, float32, backend cpu_tbb".
std::string run_title(const std::string& model, const std::string& data, const std::string& loss,
                      const std::string& dtype, const std::string& backend);

// The ROC curve's points (false positive rate, true positive rate) from (0, 0) to (1, 1):
// the rows by descending score, one point per distinct score.
std::vector<std::pair<double, double>> roc_points(const float* scores, const float* labels, int64_t count);

// The ROC curve of the test split as SVG, with the diagonal of a chance classifier.
std::string roc_curve_svg(const float* scores, const float* labels, int64_t count, double auc,
                          const std::string& title);

struct RunSummary {
    Task task = Task::kBinary;
    std::string backend;
    std::string data;
    std::string model;
    std::string loss;   // bce_with_logits or bce
    std::string dtype;  // of the tensors the loss runs on
    std::array<std::string, 2> label_names;
    EpochMetrics last;
    ConfusionMatrix confusion;
    ClassConfusion classes;                // multiclass
    std::vector<std::string> class_names;  // multiclass
    RegressionErrors errors;               // regression, in the target's units
    int64_t test_rows = 0;                 // regression
    int64_t samples_trained = 0;           // by this process (a resumed run counts its part only)
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
