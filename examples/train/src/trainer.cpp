#include "trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "checkpoint.h"
#include "classification_metrics.h"
#include "dataset.h"
#include "device_loss.h"
#include "model.h"
#include "optimizer.h"
#include "random_stream.h"
#include "run_report.h"

namespace train {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void request_stop(int signal_number) { g_stop_signal = signal_number; }

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string rate_text(double per_second) {
    if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
    if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
    return fmt::format("{:.0f}", per_second);
}

// Weight of each sample from its label.
Eigen::VectorXf sample_weights(const Eigen::VectorXf& labels, std::pair<float, float> class_weights) {
    Eigen::VectorXf weights(labels.size());
    for (Eigen::Index i = 0; i < labels.size(); ++i)
        weights[i] = labels[i] == 1.0f ? class_weights.second : class_weights.first;
    return weights;
}

struct TestEvaluation {
    double loss = 0;
    ConfusionMatrix confusion;
    double roc_auc = 0;
};

class ProgressBar {
public:
    explicit ProgressBar(int64_t total) : total_(total), enabled_(isatty(STDERR_FILENO) && total >= 200) {}
    void update(int64_t done, int64_t epoch) {
        if (!enabled_ || (done % 50 != 0 && done != total_)) return;
        const auto now = Clock::now();
        if (done != total_ && now - last_ < std::chrono::milliseconds(200)) return;
        last_ = now;
        constexpr int kWidth = 30;
        const int filled = static_cast<int>(kWidth * done / total_);
        std::fprintf(stderr, "\r  epoch %lld [%s%s] %3lld%%", static_cast<long long>(epoch),
                     std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
                     static_cast<long long>(100 * done / total_));
        std::fflush(stderr);
    }
    void clear() {
        if (enabled_) std::fprintf(stderr, "\r%60s\r", "");
    }

private:
    int64_t total_;
    bool enabled_;
    Clock::time_point last_{};
};

}  // namespace

void install_stop_handlers() {
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

int run_training(const RunRequest& request) {
    const TrainSettings& settings = request.settings;
    std::filesystem::create_directories(settings.output_dir);
    const auto checkpoint_path = settings.output_dir / "checkpoint.bin";

    // Data: load or generate, split, standardize with the training split's statistics.
    const auto load_start = Clock::now();
    Dataset data = settings.synthetic ? make_synthetic(*settings.synthetic, settings.synthetic_noise, settings.seed)
                                      : load_csv(settings.data_path, settings.data_format);
    const uint64_t fingerprint = data_fingerprint(data);
    TrainTestSplit split = split_stratified(data, settings.test_fraction, settings.seed);
    data = Dataset{};  // the split holds copies
    const Standardizer standardizer = Standardizer::fit(split.train.features);
    standardizer.apply(split.train.features);
    standardizer.apply(split.test.features);
    const int64_t train_rows = split.train.rows();
    const int64_t test_rows = split.test.rows();
    const int64_t features = split.train.features.cols();
    const auto class_weights =
        class_weight_values(settings.class_weights, train_rows - split.train.positives(), split.train.positives());
    const std::optional<float> pos_weight =
        pos_weight_value(settings.pos_weight, train_rows - split.train.positives(), split.train.positives());
    const LossKind loss_kind_used = loss_kind(settings.loss);
    // bce_with_logits hands pos_weight to the ops as posWeight. aclnnBinaryCrossEntropy has
    // none; for 0/1 labels posWeight p is the same as multiplying the positives' weights by
    // p, so bce folds it into the sample weights and both losses train on the same objective.
    auto sample_class_weights = class_weights;
    if (pos_weight && loss_kind_used == LossKind::kBce) sample_class_weights.second *= *pos_weight;
    const Eigen::VectorXf train_weights = sample_weights(split.train.labels, sample_class_weights);
    const Eigen::VectorXf test_weights = sample_weights(split.test.labels, sample_class_weights);

    Model model(features, settings.hidden,
                loss_kind_used == LossKind::kBceWithLogits ? ModelOutput::kLogit : ModelOutput::kProbability);
    RandomStream init_random(settings.seed);
    model.initialize(init_random);
    Optimizer optimizer(settings, model.parameters().size());
    RandomStream shuffle_random(settings.seed ^ 0x9e3779b97f4a7c15ULL);
    const RunIdentity identity{trajectory_settings(settings), fingerprint, model.layer_sizes()};

    const int64_t batch_size = std::min(settings.batch_size, train_rows);

    TrainingState state;
    if (request.resume_from) {
        // Every field is checked against this run before any is used (a checkpoint's
        // checksum only catches accidents).
        ResumeBounds bounds;
        bounds.epochs = settings.epochs;
        bounds.train_rows = train_rows;
        bounds.batch_size = batch_size;
        bounds.parameter_count = model.parameters().size();
        bounds.optimizer_kind = optimizer.kind();
        state = read_checkpoint(*request.resume_from, identity, bounds);
        model.parameters() = state.parameters;
        if (!optimizer.restore(state.optimizer_kind, state.optimizer_steps, state.optimizer_first,
                               state.optimizer_second) ||
            !shuffle_random.restore(state.epoch_start_random))
            throw std::runtime_error(fmt::format("checkpoint '{}' holds an optimizer or random state that does not "
                                                 "fit this run",
                                                 request.resume_from->string()));
        fmt::print("Resumed from {} at epoch {} batch {}\n", request.resume_from->string(), state.epochs_done + 1,
                   state.batches_done);
    }

    const std::string model_text = settings.model_kind == "logistic"
                                       ? fmt::format("logistic regression ({} inputs)", features)
                                       : fmt::format("MLP {}", fmt::join(model.layer_sizes(), "-"));
    fmt::print("Data: {}; {} train / {} test rows; class weights {:.4g} / {:.4g} ({:.2f} s)\n", split.train.description,
               train_rows, test_rows, class_weights.first, class_weights.second, seconds_since(load_start));
    fmt::print("Model: {}, {} parameters; optimizer {} lr {}; batch {}; backend {}\n", model_text,
               model.parameters().size(), settings.optimizer, settings.learning_rate, settings.batch_size,
               request.backend);
    fmt::print("Loss: {} ({}), pos_weight {}\n", settings.loss,
               loss_kind_used == LossKind::kBceWithLogits ? "aclnnBinaryCrossEntropyWithLogits on logits"
                                                          : "aclnnBinaryCrossEntropy on probabilities",
               pos_weight ? fmt::format("{:.4g}{}", *pos_weight,
                                        loss_kind_used == LossKind::kBce ? " (in the positives' weights)" : "")
                          : std::string("none"));

    const int64_t evaluation_chunk = std::min<int64_t>(test_rows, 1 << 16);
    DeviceBceLoss loss(std::max(batch_size, evaluation_chunk), loss_kind_used,
                       loss_kind_used == LossKind::kBceWithLogits ? pos_weight : std::nullopt);

    // Buffers reused by every batch: no allocation inside the loop.
    FeatureMatrix batch(batch_size, features);
    Eigen::VectorXf batch_targets(batch_size), batch_weights(batch_size), grad_outputs(batch_size);
    Eigen::VectorXf test_scores(test_rows);
    std::vector<int64_t> order(static_cast<size_t>(train_rows));
    const int64_t batches_per_epoch = (train_rows + batch_size - 1) / batch_size;

    const auto evaluate_test = [&]() {
        TestEvaluation result;
        double loss_sum = 0;
        for (int64_t start = 0; start < test_rows; start += evaluation_chunk) {
            const int64_t rows = std::min(evaluation_chunk, test_rows - start);
            const Eigen::VectorXf& outputs = model.forward(split.test.features.row(start).data(), rows);
            test_scores.segment(start, rows) = model.probabilities();
            loss_sum += static_cast<double>(loss.run(outputs.data(), split.test.labels.data() + start,
                                                     test_weights.data() + start, rows, nullptr)) *
                        static_cast<double>(rows);
        }
        result.loss = loss_sum / static_cast<double>(test_rows);
        result.confusion.add(test_scores.data(), split.test.labels.data(), test_rows);
        result.roc_auc = roc_auc(test_scores.data(), split.test.labels.data(), test_rows);
        return result;
    };
    const auto save_checkpoint = [&]() {
        state.parameters = model.parameters();
        state.optimizer_kind = optimizer.kind();
        state.optimizer_steps = optimizer.steps();
        state.optimizer_first = optimizer.first_moment();
        state.optimizer_second = optimizer.second_moment();
        write_checkpoint(checkpoint_path, identity, state);
    };
    const auto write_outputs = [&]() {
        write_file_atomically(settings.output_dir / "metrics.csv", metrics_csv(state.history));
        write_file_atomically(settings.output_dir / "training_curves.svg",
                              training_curves_svg(state.history, fmt::format("{} on {}", model_text,
                                                                             split.train.description)));
    };

    int64_t samples_trained = 0;
    int64_t batches_run = 0;
    double train_seconds = 0;
    for (int64_t epoch = state.epochs_done + 1; epoch <= settings.epochs; ++epoch) {
        // The epoch's order comes from the stream state saved at its start, so a resumed
        // epoch replays the same order and skips the batches already done.
        if (state.batches_done == 0) state.epoch_start_random = shuffle_random.state();
        std::iota(order.begin(), order.end(), 0);
        shuffle_random.shuffle(order.data(), order.size());
        if (state.batches_done == 0) {
            state.partial_loss_sum = 0;
            state.partial_correct = 0;
            state.partial_seen = 0;
        }
        ProgressBar progress(batches_per_epoch);
        const auto epoch_start = Clock::now();
        int64_t epoch_samples = 0;
        for (int64_t b = state.batches_done; b < batches_per_epoch; ++b) {
            const int64_t first = b * batch_size;
            const int64_t rows = std::min(batch_size, train_rows - first);
            for (int64_t i = 0; i < rows; ++i) {
                const int64_t source = order[static_cast<size_t>(first + i)];
                batch.row(i) = split.train.features.row(source);
                batch_targets[i] = split.train.labels[source];
                batch_weights[i] = train_weights[source];
            }
            const Eigen::VectorXf& outputs = model.forward(batch.data(), rows);
            const float batch_loss =
                loss.run(outputs.data(), batch_targets.data(), batch_weights.data(), rows, grad_outputs.data());
            // Predictions: sigmoid(logit) >= 0.5 with either loss.
            const Eigen::VectorXf& probabilities = model.probabilities();
            for (int64_t i = 0; i < rows; ++i) state.partial_correct += (probabilities[i] >= 0.5f) == (batch_targets[i] == 1.0f);
            state.partial_loss_sum += static_cast<double>(batch_loss) * static_cast<double>(rows);
            state.partial_seen += rows;
            model.backward(grad_outputs.data());
            model.add_weight_decay(static_cast<float>(settings.weight_decay));
            optimizer.step(model.parameters(), model.gradients());
            epoch_samples += rows;
            ++batches_run;
            progress.update(b + 1, epoch);

            const bool simulated = request.interrupt_after_batches > 0 && batches_run == request.interrupt_after_batches;
            if ((g_stop_signal != 0 || simulated) && b + 1 < batches_per_epoch) {
                progress.clear();
                state.batches_done = b + 1;
                state.epochs_done = epoch - 1;
                save_checkpoint();
                const int code = g_stop_signal == SIGTERM ? kRunInterruptedBySigterm : kRunInterruptedBySigint;
                fmt::print("Interrupted in epoch {} after batch {} of {}: checkpoint written to {}\n"
                           "Continue with --resume.\n",
                           epoch, b + 1, batches_per_epoch, checkpoint_path.string());
                return code;
            }
        }
        progress.clear();
        const double epoch_seconds = seconds_since(epoch_start);
        train_seconds += epoch_seconds;
        samples_trained += epoch_samples;

        const TestEvaluation test = evaluate_test();
        EpochMetrics metrics;
        metrics.epoch = epoch;
        metrics.train_loss = state.partial_loss_sum / static_cast<double>(state.partial_seen);
        metrics.train_accuracy = static_cast<double>(state.partial_correct) / static_cast<double>(state.partial_seen);
        metrics.test_loss = test.loss;
        metrics.test_accuracy = test.confusion.accuracy();
        metrics.test_roc_auc = test.roc_auc;
        state.history.push_back(metrics);
        state.epochs_done = epoch;
        state.batches_done = 0;
        state.epoch_start_random = shuffle_random.state();  // where the next epoch starts
        write_outputs();
        fmt::print("epoch {:>4}/{}  train loss {:.5f}  acc {:6.2f}%  |  test loss {:.5f}  acc {:6.2f}%  AUC {:.4f}"
                   "  |  {} samples/s\n",
                   epoch, settings.epochs, metrics.train_loss, 100 * metrics.train_accuracy, metrics.test_loss,
                   100 * metrics.test_accuracy, metrics.test_roc_auc,
                   rate_text(epoch_seconds > 0 ? static_cast<double>(epoch_samples) / epoch_seconds : 0));
        std::fflush(stdout);

        const bool stop = g_stop_signal != 0 ||
                          (request.interrupt_after_batches > 0 && batches_run >= request.interrupt_after_batches);
        const bool periodic = settings.checkpoint_every > 0 && epoch % settings.checkpoint_every == 0;
        if (periodic || stop || epoch == settings.epochs) save_checkpoint();
        if (stop && epoch < settings.epochs) {
            fmt::print("Interrupted after epoch {}: checkpoint written to {}\nContinue with --resume.\n", epoch,
                       checkpoint_path.string());
            return g_stop_signal == SIGTERM ? kRunInterruptedBySigterm : kRunInterruptedBySigint;
        }
    }

    // The summary describes the final model, also when a resumed run had nothing left to do.
    if (state.history.empty()) throw std::runtime_error("no epoch was trained");
    write_outputs();
    const TestEvaluation final_test = evaluate_test();
    RunSummary summary;
    summary.backend = request.backend;
    summary.data = split.train.description;
    summary.model = model_text;
    summary.label_names = split.train.label_names;
    summary.last = state.history.back();
    summary.confusion = final_test.confusion;
    summary.samples_trained = samples_trained;
    summary.train_seconds = train_seconds;
    summary.samples_per_second = train_seconds > 0 ? static_cast<double>(samples_trained) / train_seconds : 0;
    write_file_atomically(settings.output_dir / "summary.json", summary_json(summary));
    fmt::print("\n{}", summary_text(summary));
    fmt::print("Outputs in {}: metrics.csv, training_curves.svg, summary.json, checkpoint.bin, config.yaml\n",
               settings.output_dir.string());
    return kRunFinished;
}

}  // namespace train
