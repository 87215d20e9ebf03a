// The parts of the multi-class and regression tasks: their data, settings, metrics and
// reports, and a whole training step against the gradient of the batch's mean loss.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "acl_test_support.h"
#include "classification_metrics.h"
#include "communicator.h"
#include "dataset.h"
#include "device_loss.h"
#include "model.h"
#include "optimizer.h"
#include "run_report.h"
#include "train_settings.h"
#include "train_step.h"
#include "training_data.h"

namespace {

using nnplug::test::TempFolder;
using namespace train;

const std::string kDigits = std::string(NNPLUG_DATA_DIR) + "/digits.csv";
const std::string kDiabetes = std::string(NNPLUG_DATA_DIR) + "/diabetes.csv";

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& error) {
        return error.what();
    }
    return "";
}

TEST(TrainTaskData, ClassIndicesAndRegressionTargetsAreReadAsTheTaskSays) {
    const Dataset digits = load_csv(kDigits, "plain", Task::kMulticlass);
    EXPECT_EQ(digits.rows(), 1797);
    EXPECT_EQ(digits.features.cols(), 64);
    ASSERT_EQ(digits.classes(), 10);
    EXPECT_EQ(digits.class_names.front(), "0");
    EXPECT_EQ(digits.class_names.back(), "9");
    const Dataset diabetes = load_csv(kDiabetes, "auto", Task::kRegression);
    EXPECT_EQ(diabetes.rows(), 442);
    EXPECT_EQ(diabetes.features.cols(), 10);
    EXPECT_EQ(diabetes.labels[0], 151.0f);
    EXPECT_EQ(diabetes.classes(), 0);

    TempFolder folder;
    // An sklearn header names the classes (iris's form); a label beyond them is refused.
    const auto named = folder.write("named.csv", "3,1,setosa,versicolor,virginica\n1,0\n2,2\n3,1\n");
    EXPECT_EQ(load_csv(named, "auto", Task::kMulticlass).class_names,
              (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
    const auto beyond = folder.write("beyond.csv", "2,1,a,b,c\n1,0\n2,3\n");
    EXPECT_EQ(error_of([&] { load_csv(beyond, "auto", Task::kMulticlass); }),
              beyond.string() + ":3: label '3' is not a class index (a whole number from 0 to 2)");
    const auto fraction = folder.write("fraction.csv", "1,0\n2,2.5\n");
    EXPECT_EQ(error_of([&] { load_csv(fraction, "plain", Task::kMulticlass); }),
              fraction.string() + ":2: label '2.5' is not a class index (a whole number from 0 to 999)");
    const auto one_class = folder.write("one.csv", "1,0\n2,0\n");
    EXPECT_NE(error_of([&] { load_csv(one_class, "plain", Task::kMulticlass); }).find("at least two classes"),
              std::string::npos);
    const auto values = folder.write("values.csv", "x,y\n1,-2.5\n2,1e3\n");
    EXPECT_EQ(load_csv(values, "auto", Task::kRegression).labels[1], 1000.0f);
    // The binary reading is as it was: a class index 2 is no binary label.
    const auto three = folder.write("three.csv", "1,0\n2,2\n");
    EXPECT_EQ(error_of([&] { load_csv(three, "plain"); }), three.string() + ":2: label '2' is not 0 or 1");
}

// Every class keeps test_fraction of its rows (rounded) in the test split; a regression's
// split is one shuffled group.
TEST(TrainTaskData, TheSplitIsStratifiedByEachClass) {
    const Dataset digits = load_csv(kDigits, "plain", Task::kMulticlass);
    const TrainTestSplit split = split_stratified(digits, 0.2, 42);
    for (int64_t c = 0; c < 10; ++c) {
        const auto count = [&](const Eigen::VectorXf& labels) {
            return std::count(labels.data(), labels.data() + labels.size(), static_cast<float>(c));
        };
        EXPECT_EQ(count(split.test.labels), std::llround(0.2 * static_cast<double>(count(digits.labels))))
            << "class " << c;
    }
    const TrainTestSplit regression =
        split_stratified(load_csv(kDiabetes, "auto", Task::kRegression), 0.2, 42);
    EXPECT_EQ(regression.test.rows(), 88);
    EXPECT_EQ(regression.train.rows(), 354);
}

TrainSettings settings_of(const std::string& yaml) {
    TempFolder folder;
    folder.write("digits.csv", "1,0\n2,1\n3,2\n");
    return read_train_settings(read_config_document(folder.write("c.yaml", "application:\n" + yaml)), {});
}

TEST(TrainTaskSettings, EachTaskTakesItsOwnLossesAndNamesThemWhenAnotherIsGiven) {
    EXPECT_EQ(settings_of("  task: multiclass\n  data: {path: digits.csv}\n").loss, "cross_entropy");
    EXPECT_EQ(settings_of("  task: regression\n  data: {path: digits.csv}\n").loss, "mse");
    EXPECT_EQ(settings_of("  data: {path: digits.csv}\n").loss, "bce_with_logits");
    const auto refused = [](const std::string& yaml) {
        const std::string message = error_of([&] { settings_of(yaml); });
        return message.substr(message.find(": key") + 2);
    };
    EXPECT_EQ(refused("  task: multiclass\n  data: {path: digits.csv}\n  loss: mse\n"),
              "key 'loss' has value 'mse', a loss of task regression, not of this run's task; expected one "
              "of cross_entropy, nll (the losses of task multiclass)");
    EXPECT_EQ(refused("  task: regression\n  data: {path: digits.csv}\n  loss: cross_entropy\n"),
              "key 'loss' has value 'cross_entropy', a loss of task multiclass, not of this run's task; "
              "expected one of mse, l1, smooth_l1, huber (the losses of task regression)");
    EXPECT_EQ(refused("  task: regression\n  data: {path: digits.csv}\n  loss: hubber\n"),
              "key 'loss' has value 'hubber'; expected one of mse, l1, smooth_l1, huber (the losses of task "
              "regression) (did you mean 'huber'?)");
    EXPECT_EQ(
        refused("  data: {path: digits.csv}\n  loss: nll\n"),
        "key 'loss' has value 'nll', a loss of task multiclass, not of this run's task; expected one of "
        "bce_with_logits, bce");
    EXPECT_EQ(refused("  task: regression\n  data: {path: digits.csv}\n  loss_beta: 0\n"),
              "key 'loss_beta' has value '0'; expected a number > 0");
    EXPECT_NE(refused("  task: regression\n  data: {path: digits.csv}\n  train: {class_weights: none}\n")
                  .find("a regression task has none"),
              std::string::npos);
    EXPECT_NE(refused("  task: multiclass\n  data: {path: digits.csv}\n  train: {pos_weight: 2}\n")
                  .find("binary task"),
              std::string::npos);
    EXPECT_NE(refused("  task: multiclass\n  data: {path: digits.csv}\n  train: {class_weights: [1, 2]}\n")
                  .find("expected balanced or none for task multiclass"),
              std::string::npos);
    // What the run is: a checkpoint of one task (or beta) does not resume another.
    const auto lines = trajectory_settings(settings_of("  task: regression\n  data: {path: digits.csv}\n"));
    EXPECT_NE(
        std::find(lines.begin(), lines.end(), std::make_pair(std::string("task"), std::string("regression"))),
        lines.end());
    EXPECT_NE(
        std::find(lines.begin(), lines.end(), std::make_pair(std::string("loss_beta"), std::string("1"))),
        lines.end());
}

// Rows are the actual classes, columns the predicted ones, in the counts, the text and JSON.
TEST(TrainTaskMetrics, ConfusionRowsAreActualClassesEverywhere) {
    const float actual[] = {0, 0, 1, 2, 2, 2};
    const int32_t predicted[] = {0, 1, 1, 2, 0, 0};
    ClassConfusion confusion(3);
    confusion.add(predicted, actual, 6);
    EXPECT_EQ(confusion.at(0, 1), 1);  // an actual 0 taken for a 1
    EXPECT_EQ(confusion.at(1, 0), 0);
    EXPECT_EQ(confusion.at(2, 0), 2);  // two actual 2s taken for 0s
    EXPECT_EQ(confusion.at(0, 2), 0);
    EXPECT_EQ(confusion.correct(), 3);
    EXPECT_DOUBLE_EQ(confusion.accuracy(), 0.5);
    RunSummary summary;
    summary.task = Task::kMulticlass;
    summary.classes = confusion;
    summary.class_names = {"a", "b", "c"};
    const std::string json = summary_json(summary);
    EXPECT_NE(json.find(R"("confusion_matrix": {"labels": ["a", "b", "c"], )"
                        R"("rows_actual_columns_predicted": [[1, 1, 0], [0, 1, 0], [2, 0, 1]]})"),
              std::string::npos)
        << json;
    const std::string text = summary_text(summary);
    EXPECT_NE(text.find("Test accuracy: 50.00% (3 of 6)"), std::string::npos) << text;
    EXPECT_NE(text.find("  c        2    0    1\n"), std::string::npos) << text;
    const std::string svg = confusion_matrix_svg(confusion, summary.class_names, "t");
    size_t rects = 0;  // the background and a cell per (actual, predicted)
    for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) ++rects;
    EXPECT_EQ(rects, 1u + 3 * 3) << svg;
    EXPECT_NE(svg.find("3 of 6 correct"), std::string::npos);
}

TEST(TrainTaskMetrics, RegressionErrorsAreTheRootMeanSquareAndTheMeanAbsolute) {
    const float predicted[] = {1, 2, 7, -1};
    const float actual[] = {2, 2, 3, -1};  // errors -1, 0, 4, 0
    const RegressionErrors errors = regression_errors(predicted, actual, 4);
    EXPECT_DOUBLE_EQ(errors.rmse, std::sqrt(17.0 / 4));
    EXPECT_DOUBLE_EQ(errors.mae, 5.0 / 4);
    RunSummary summary;
    summary.task = Task::kRegression;
    summary.errors = errors;
    summary.test_rows = 4;
    EXPECT_NE(summary_text(summary).find("Test RMSE: 2.062, MAE: 1.250 (target units, 4 test rows)"),
              std::string::npos)
        << summary_text(summary);
    EXPECT_NE(summary_json(summary).find("\"test_rmse\": 2.06155281,\n  \"test_mae\": 1.25,"),
              std::string::npos)
        << summary_json(summary);
    std::vector<EpochMetrics> history = {{1, 0.5, 0, 0.6, errors.rmse, errors.mae}};
    EXPECT_EQ(metrics_csv(history, Task::kRegression),
              "epoch,train_loss,test_loss,test_rmse,test_mae\n1,0.5,0.6,2.06155281,1.25\n");
    const std::string svg = predicted_vs_true_svg(predicted, actual, 4, errors, "t");
    size_t circles = 0;
    for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
        ++circles;
    EXPECT_EQ(circles, 4u);
}

// A task's loss per sample and its derivative w.r.t. the model's outputs z (one row), in
// double: what a step's device calls and backward must add up to.
struct HostLoss {
    std::string name;
    double beta = 1;
    double at(const std::vector<double>& z, double target, std::vector<double>& dz) const {
        dz.assign(z.size(), 0.0);
        if (name == "cross_entropy" || name == "nll") {
            const double top = *std::max_element(z.begin(), z.end());
            double sum = 0;
            for (const double v : z) sum += std::exp(v - top);
            const auto t = static_cast<size_t>(target);
            for (size_t c = 0; c < z.size(); ++c) dz[c] = std::exp(z[c] - top) / sum - (c == t ? 1 : 0);
            return -(z[t] - top - std::log(sum));
        }
        const double d = z[0] - target, size = std::abs(d), sign = d > 0 ? 1 : d < 0 ? -1 : 0;
        if (name == "mse") return dz[0] = 2 * d, d * d;
        if (name == "l1") return dz[0] = sign, size;
        // smooth_l1, and huber: beta times smooth_l1 with that beta
        const double scale = name == "huber" ? beta : 1;
        dz[0] = scale * (size < beta ? d / beta : sign);
        return scale * (size < beta ? 0.5 * d * d / beta : size - 0.5 * beta);
    }
};

// One training step of plain SGD (lr 1, no momentum) on a batch of four shards moves every
// parameter of a linear model by minus the gradient of the batch's mean loss, as float64
// computes it from the model's outputs; the step's loss sum is the batch's loss sum. A
// gradient left undivided by the batch, a huber not scaled by delta or a log-softmax
// without its backward would be off by far more than float32 rounding.
TEST(TrainTaskStep, ASgdStepMovesByTheGradientOfTheBatchsMeanLoss) {
    for (const std::string backend : {"cpu_tbb", "atlas_emu"}) {
        TempFolder folder;
        nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
        std::unique_ptr<AclSession> session;
        try {
            session =
                std::make_unique<AclSession>(folder.write("d.yaml", "backend: " + backend + "\n").c_str());
        } catch (const std::exception& error) {
            EXPECT_NE(backend, "cpu_tbb") << error.what();
            continue;
        }
        for (const HostLoss& loss : {HostLoss{"cross_entropy"}, HostLoss{"nll"}, HostLoss{"mse"},
                                     HostLoss{"l1"}, HostLoss{"smooth_l1", 0.5}, HostLoss{"huber", 0.7}}) {
            SCOPED_TRACE(backend + ", " + loss.name);
            const bool classes = loss.name == "cross_entropy" || loss.name == "nll";
            TrainSettings settings;
            settings.task = classes ? "multiclass" : "regression";
            settings.data_path = classes ? kDigits : kDiabetes;
            settings.data_format = classes ? "plain" : "auto";
            settings.loss = loss.name;
            settings.loss_beta = loss.beta;
            settings.class_weights = "none";
            settings.optimizer = "sgd";
            settings.learning_rate = 1.0;
            settings.momentum = 0.0;
            const TrainingData data = prepare_data(settings);
            const int64_t width = classes ? 10 : 1, inputs = data.features(), batch = 200;
            Model model(inputs, {},
                        !classes             ? ModelOutput::kValue
                        : loss.name == "nll" ? ModelOutput::kLogSoftmax
                                             : ModelOutput::kLogit,
                        width);
            RandomStream random(7);
            model.initialize(random);
            const std::vector<float> before = model.parameters();
            // The batch's mean loss and its gradient, in double, from the parameters before the step.
            std::vector<double> gradient(before.size(), 0.0), z(static_cast<size_t>(width)), dz;
            double loss_sum = 0;
            for (int64_t k = 0; k < batch; ++k) {
                const float* x = data.train_features.row(k);
                for (int64_t o = 0; o < width; ++o) {
                    double v = before[static_cast<size_t>(width * inputs + o)];
                    for (int64_t j = 0; j < inputs; ++j)
                        v += double{before[static_cast<size_t>(o * inputs + j)]} * x[j];
                    z[static_cast<size_t>(o)] = v;
                }
                loss_sum += loss.at(z, data.train_targets[static_cast<size_t>(k)], dz);
                for (int64_t o = 0; o < width; ++o) {
                    for (int64_t j = 0; j < inputs; ++j)
                        gradient[static_cast<size_t>(o * inputs + j)] +=
                            dz[static_cast<size_t>(o)] * x[j] / batch;
                    gradient[static_cast<size_t>(width * inputs + o)] += dz[static_cast<size_t>(o)] / batch;
                }
            }
            Optimizer optimizer(settings, before.size());
            Communicator alone(nullptr, nullptr);
            tbb::task_arena arena(2);
            LossSetup setup;
            setup.task = classes ? Task::kMulticlass : Task::kRegression;
            if (classes)
                setup.class_kind = class_loss(loss.name);
            else
                setup.regression_kind = regression_loss(loss.name);
            setup.class_weights = data.class_loss_weights;
            setup.beta = static_cast<float>(loss.beta);
            TrainStep step(StepSetup{data, model, optimizer, alone, arena, setup, batch, 0.0, 2, 64});
            EXPECT_EQ(step.max_shards(), 4);
            std::vector<int64_t> rows(static_cast<size_t>(batch));
            for (int64_t k = 0; k < batch; ++k) rows[static_cast<size_t>(k)] = k;
            const StepResult result = step.run(rows.data(), batch, 0);
            EXPECT_NEAR(result.loss_sum, loss_sum, 1e-5 * loss_sum);
            double largest = 0;
            for (const double g : gradient) largest = std::max(largest, std::abs(g));
            for (size_t i = 0; i < before.size(); ++i)
                ASSERT_NEAR(before[i] - model.parameters()[i], gradient[i], 1e-4 * largest)
                    << "parameter " << i;
        }
    }
}

}  // namespace
