#include "trainer.h"

#include <fmt/format.h>
#include <nnplug/escaped_text.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "checkpoint.h"
#include "communicator.h"
#include "epoch_order.h"
#include "model.h"
#include "optimizer.h"
#include "random_stream.h"
#include "run_report.h"
#include "safe_file.h"
#include "test_evaluation.h"
#include "train_step.h"
#include "training_data.h"

namespace train {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void request_stop(int signal_number) {
    g_stop_signal = signal_number;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string rate_text(double per_second) {
    if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
    if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
    return fmt::format("{:.0f}", per_second);
}

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

int64_t shard_rows(int64_t batch_size) {
    const int64_t per_shard = (batch_size + kMaxShards - 1) / kMaxShards;
    return std::max<int64_t>(64, (per_shard + 63) / 64 * 64);
}

int64_t group_shards(int64_t batch_size) {
    return std::max<int64_t>(1, kGroupRows / shard_rows(batch_size));
}

int64_t chunk_shards(int64_t batch_size, int threads, bool logistic) {
    constexpr int64_t kMaxChunkRows = 2048, kMinChunkRows = 512;
    const int64_t rows_per_shard = shard_rows(batch_size);
    // The shards of a group as large as this batch fills.
    const int64_t shards =
        std::min(group_shards(batch_size), (batch_size + rows_per_shard - 1) / rows_per_shard);
    const int64_t two_per_thread = (shards + int64_t{2} * threads - 1) / (int64_t{2} * threads);
    const int64_t most = std::max<int64_t>(1, kMaxChunkRows / rows_per_shard);
    const int64_t least = logistic ? std::max<int64_t>(1, kMinChunkRows / rows_per_shard) : 1;
    return std::min(shards, std::max(least, std::min(two_per_thread, most)));
}

namespace {

// One run's steps: data, model (and a resumed state), the training loop, evaluation and
// the outputs. Rank 0 prints and writes; every rank trains its part of every batch.
// The tensors the loss runs on.
constexpr const char* kDtype = "float32";

class TrainingRun {
public:
    TrainingRun(const RunRequest& request, Communicator& comm);
    int run();

private:
    void resume_from(const std::filesystem::path& checkpoint);
    void print_header() const;
    void print_task_header() const;
    LossSetup loss_setup() const;
    void print_epoch(const EpochMetrics& metrics, double epoch_seconds, int64_t epoch_samples) const;
    void write_task_outputs(RunSummary& summary, const TestEvaluation& final_test) const;
    std::optional<int> run_epoch(int64_t epoch);
    void end_epoch(int64_t epoch, double epoch_seconds, int64_t epoch_samples);
    bool finished_already() const;
    void start_outputs();
    void save_checkpoint();
    void write_outputs();
    std::string title() const {
        return run_title(model_text_, data_.split.train.description, settings_.loss, kDtype,
                         request_.backend);
    }
    int finish();

    const RunRequest& request_;
    const TrainSettings& settings_;
    Communicator& comm_;
    const bool leader_;
    const std::filesystem::path checkpoint_path_;
    const int host_threads_;
    tbb::task_arena arena_;
    const Task task_;
    const LossKind loss_kind_;  // the binary task's ops
    const TrainingData data_;
    Model model_;
    Optimizer optimizer_;
    RandomStream shuffle_random_;
    const RunIdentity identity_;
    const int64_t batch_size_;
    const int64_t batches_per_epoch_;
    const std::string model_text_;
    TrainingState state_;
    std::optional<TestEvaluator> evaluator_;
    std::optional<TrainStep> step_;
    std::optional<EpochOrder> epoch_order_;
    int64_t samples_trained_ = 0;
    int64_t batches_run_ = 0;
    double train_seconds_ = 0;
    int64_t stop_ = 0;                     // agreed by every process at the last step
    const double combine_seconds_before_;  // spent in exchanges before the training
};

// The task's output layer: binary, the logit or its sigmoid; C classes, C logits
// (cross_entropy) or their log-softmax (nll); a regression, one value.
Model initialized_model(const TrainSettings& settings, const TrainingData& data, LossKind kind) {
    const Task task = task_named(settings.task);
    const int64_t features = data.features();
    const int64_t classes = data.split.train.classes();
    Model model =
        task == Task::kMulticlass
            ? Model(features, settings.hidden,
                    class_loss(settings.loss) == ClassLoss::kNll ? ModelOutput::kLogSoftmax
                                                                 : ModelOutput::kLogit,
                    classes)
        : task == Task::kRegression
            ? Model(features, settings.hidden, ModelOutput::kValue)
            : Model(features, settings.hidden,
                    kind == LossKind::kBceWithLogits ? ModelOutput::kLogit : ModelOutput::kProbability);
    RandomStream init_random(settings.seed);
    model.initialize(init_random);
    return model;
}

std::string model_description(const TrainSettings& settings, const Model& model, int64_t features) {
    if (settings.model_kind == "mlp") return fmt::format("MLP {}", fmt::join(model.layer_sizes(), "-"));
    const Task task = task_named(settings.task);
    if (task == Task::kMulticlass)
        return fmt::format("softmax regression ({} inputs, {} classes)", features, model.width());
    return fmt::format("{} regression ({} inputs)", task == Task::kRegression ? "linear" : "logistic",
                       features);
}

TrainingRun::TrainingRun(const RunRequest& request, Communicator& comm)
    : request_(request),
      settings_(request.settings),
      comm_(comm),
      leader_(comm.rank() == 0),
      checkpoint_path_(settings_.output_dir / "checkpoint.bin"),
      host_threads_(settings_.threads > 0 ? static_cast<int>(settings_.threads)
                                          : tbb::this_task_arena::max_concurrency()),
      arena_(host_threads_),
      task_(task_named(settings_.task)),
      loss_kind_(task_ == Task::kBinary ? loss_kind(settings_.loss) : LossKind::kBceWithLogits),
      data_(task_ == Task::kBinary ? prepare_data(settings_, loss_kind_) : prepare_data(settings_)),
      model_(initialized_model(settings_, data_, loss_kind_)),
      optimizer_(settings_, model_.parameters().size()),
      shuffle_random_(settings_.seed ^ 0x9e3779b97f4a7c15ULL),
      identity_{trajectory_settings(settings_), data_.fingerprint, model_.layer_sizes()},
      batch_size_(std::min(settings_.batch_size, data_.train_rows())),
      batches_per_epoch_((data_.train_rows() + batch_size_ - 1) / batch_size_),
      model_text_(model_description(settings_, model_, data_.features())),
      combine_seconds_before_(comm.combine_seconds()) {}

// Every field is checked against this run before any is used (a checkpoint's checksum
// only catches accidents).
void TrainingRun::resume_from(const std::filesystem::path& checkpoint) {
    ResumeBounds bounds;
    bounds.epochs = settings_.epochs;
    bounds.train_rows = data_.train_rows();
    bounds.batch_size = batch_size_;
    bounds.parameter_count = model_.parameters().size();
    bounds.optimizer_kind = optimizer_.kind();
    bounds.task = task_;
    state_ = read_checkpoint(checkpoint, identity_, bounds);
    model_.parameters() = state_.parameters;
    if (!optimizer_.restore(state_.optimizer_kind, state_.optimizer_steps, state_.optimizer_first,
                            state_.optimizer_second) ||
        !shuffle_random_.restore(state_.epoch_start_random))
        throw std::runtime_error(
            fmt::format("checkpoint '{}' holds an optimizer or random state that does not "
                        "fit this run",
                        checkpoint.string()));
}

void TrainingRun::print_header() const {
    if (!leader_) return;
    const int64_t rows_per_shard = shard_rows(batch_size_);
    const int64_t max_shards = (batch_size_ + rows_per_shard - 1) / rows_per_shard;
    const int ranks = comm_.size();
    const std::optional<float>& pos_weight = data_.pos_weight;
    if (task_ != Task::kBinary) {
        print_task_header();
    } else {
        fmt::print("Data: {}; {} train / {} test rows; class weights {:.4g} / {:.4g} ({:.2f} s)\n",
                   nnplug::escaped(data_.split.train.description), data_.train_rows(), data_.test_rows(),
                   data_.class_weights.first, data_.class_weights.second, data_.load_seconds);
        fmt::print("Model: {}, {} parameters; optimizer {} lr {}; batch {}; backend {}\n", model_text_,
                   model_.parameters().size(), settings_.optimizer, settings_.learning_rate,
                   settings_.batch_size, request_.backend);
        fmt::print("Loss: {} ({}), pos_weight {}\n", settings_.loss,
                   loss_kind_ == LossKind::kBceWithLogits ? "aclnnBinaryCrossEntropyWithLogits on logits"
                                                          : "aclnnBinaryCrossEntropy on probabilities",
                   pos_weight
                       ? fmt::format("{:.4g}{}", *pos_weight,
                                     loss_kind_ == LossKind::kBce ? " (in the positives' weights)" : "")
                       : std::string("none"));
    }
    fmt::print("Parallel: {} process{} x {} host thread{}; {} shard{} of {} rows per batch\n", ranks,
               ranks > 1 ? "es" : "", host_threads_, host_threads_ > 1 ? "s" : "", max_shards,
               max_shards > 1 ? "s" : "", std::min(rows_per_shard, batch_size_));
    std::fflush(stdout);
}

// The data, model and loss lines of a multi-class or regression run.
void TrainingRun::print_task_header() const {
    const std::string data = nnplug::escaped(data_.split.train.description);
    if (task_ == Task::kMulticlass)
        fmt::print("Data: {}; {} train / {} test rows; {} classes, class weights {} ({:.2f} s)\n", data,
                   data_.train_rows(), data_.test_rows(), data_.class_loss_weights.size(),
                   settings_.class_weights, data_.load_seconds);
    else
        fmt::print(
            "Data: {}; {} train / {} test rows; target standardized with the training split's mean {:.4g} "
            "and "
            "scale {:.4g} ({:.2f} s)\n",
            data, data_.train_rows(), data_.test_rows(), data_.target_mean, data_.target_scale,
            data_.load_seconds);
    fmt::print("Model: {}, {} parameters; optimizer {} lr {}; batch {}; backend {}\n", model_text_,
               model_.parameters().size(), settings_.optimizer, settings_.learning_rate, settings_.batch_size,
               request_.backend);
    const std::string& loss = settings_.loss;
    const std::string ops =
        loss == "cross_entropy" ? "aclnnCrossEntropyLoss on logits, aclnnCrossEntropyLossGrad"
        : loss == "nll"         ? "aclnnNLLLoss on the log-softmax, aclnnNLLLossBackward"
        : loss == "mse"         ? "aclnnMseLoss, aclnnMseLossBackward"
        : loss == "l1"          ? "aclnnL1Loss, aclnnL1LossBackward"
        : loss == "smooth_l1"
            ? fmt::format("aclnnSmoothL1Loss, aclnnSmoothL1LossBackward, beta {}", settings_.loss_beta)
            : fmt::format("{0} x aclnnSmoothL1Loss with beta {0}, aclnnSmoothL1LossBackward; delta {0}",
                          settings_.loss_beta);
    fmt::print("Loss: {} ({})\n", loss, ops);
}

LossSetup TrainingRun::loss_setup() const {
    LossSetup setup;
    setup.task = task_;
    setup.binary_kind = loss_kind_;
    if (task_ == Task::kBinary && loss_kind_ == LossKind::kBceWithLogits) setup.pos_weight = data_.pos_weight;
    if (task_ == Task::kMulticlass) {
        setup.class_kind = class_loss(settings_.loss);
        setup.class_weights = data_.class_loss_weights;
    }
    if (task_ == Task::kRegression) setup.regression_kind = regression_loss(settings_.loss);
    setup.beta = static_cast<float>(settings_.loss_beta);
    return setup;
}

int TrainingRun::run() {
    if (request_.resume_from) {
        resume_from(*request_.resume_from);
        if (finished_already()) return kRunFinished;
        if (leader_)
            fmt::print("Resumed from {} at epoch {} batch {}\n",
                       nnplug::escaped(request_.resume_from->string()), state_.epochs_done + 1,
                       state_.batches_done);
    }
    start_outputs();
    print_header();
    const LossSetup loss = loss_setup();
    evaluator_.emplace(data_, loss, arena_);  // on this thread's device
    step_.emplace(StepSetup{data_, model_, optimizer_, comm_, arena_, loss, batch_size_,
                            settings_.weight_decay, host_threads_, evaluator_->chunk_rows()});
    epoch_order_.emplace(static_cast<size_t>(data_.train_rows()));
    // oneTBB starts the arena's worker threads at its first parallel work: start them with
    // the set-up, not inside the first epoch's timed loop (about 3 ms on a 2-core machine).
    arena_.execute([&] { tbb::parallel_for(0, 2 * host_threads_, [](int) {}); });
    for (int64_t epoch = state_.epochs_done + 1; epoch <= settings_.epochs; ++epoch)
        if (const std::optional<int> interrupted = run_epoch(epoch)) return *interrupted;
    return finish();
}

// One epoch of batches, then its metrics and outputs; an exit code when it was interrupted.
std::optional<int> TrainingRun::run_epoch(int64_t epoch) {
    // Timed from the shuffle on, as a training loop that draws its order per epoch is.
    const auto epoch_start = Clock::now();
    // The epoch's order comes from one draw of the stream, whose state at the epoch's start
    // is saved, so a resumed epoch replays the same order and skips the batches already done.
    if (state_.batches_done == 0) state_.epoch_start_random = shuffle_random_.state();
    epoch_order_->draw(shuffle_random_.next(), arena_);
    if (state_.batches_done == 0) {
        state_.partial_loss_sum = 0;
        state_.partial_correct = 0;
        state_.partial_seen = 0;
    }
    ProgressBar progress(leader_ ? batches_per_epoch_ : 0);
    int64_t epoch_samples = 0;
    const int64_t train_rows = data_.train_rows();
    for (int64_t b = state_.batches_done; b < batches_per_epoch_; ++b) {
        const int64_t first = b * batch_size_;
        const int64_t rows = std::min(batch_size_, train_rows - first);
        ++batches_run_;
        // A signal, or the test's simulated one; every process learns of any at this step.
        const bool simulated =
            request_.interrupt_after_batches > 0 && batches_run_ == request_.interrupt_after_batches;
        const int64_t request_here = g_stop_signal != 0 ? g_stop_signal : simulated ? SIGINT : 0;
        const StepResult step = step_->run(epoch_order_->order().data() + first, rows, request_here);
        stop_ = step.stop;
        state_.partial_loss_sum += step.loss_sum;
        state_.partial_correct += step.correct;
        state_.partial_seen += rows;
        epoch_samples += rows;
        progress.update(b + 1, epoch);
        if (stop_ != 0 && b + 1 < batches_per_epoch_) {
            progress.clear();
            state_.batches_done = b + 1;
            state_.epochs_done = epoch - 1;
            save_checkpoint();
            if (leader_)
                fmt::print(
                    "Interrupted in epoch {} after batch {} of {}: checkpoint written to {}\n"
                    "Continue with --resume.\n",
                    epoch, b + 1, batches_per_epoch_, nnplug::escaped(checkpoint_path_.string()));
            return stop_ == SIGTERM ? kRunInterruptedBySigterm : kRunInterruptedBySigint;
        }
    }
    progress.clear();
    end_epoch(epoch, seconds_since(epoch_start), epoch_samples);
    if (stop_ != 0 && epoch < settings_.epochs) {
        if (leader_)
            fmt::print("Interrupted after epoch {}: checkpoint written to {}\nContinue with --resume.\n",
                       epoch, nnplug::escaped(checkpoint_path_.string()));
        return stop_ == SIGTERM ? kRunInterruptedBySigterm : kRunInterruptedBySigint;
    }
    return std::nullopt;
}

// The epoch's metrics (the test split's on rank 0), its line, outputs and checkpoint.
void TrainingRun::end_epoch(int64_t epoch, double epoch_seconds, int64_t epoch_samples) {
    train_seconds_ += epoch_seconds;
    samples_trained_ += epoch_samples;
    EpochMetrics metrics;
    metrics.epoch = epoch;
    metrics.train_loss = state_.partial_loss_sum / static_cast<double>(state_.partial_seen);
    metrics.train_accuracy =
        static_cast<double>(state_.partial_correct) / static_cast<double>(state_.partial_seen);
    if (leader_) {
        const TestEvaluation test = evaluator_->run(model_);
        metrics.test_loss = test.loss;
        // EpochMetrics' fields by task (checkpoint.h).
        metrics.test_accuracy = task_ == Task::kMulticlass   ? test.classes.accuracy()
                                : task_ == Task::kRegression ? test.errors.rmse
                                                             : test.confusion.accuracy();
        metrics.test_roc_auc = task_ == Task::kMulticlass   ? 0.0
                               : task_ == Task::kRegression ? test.errors.mae
                                                            : test.roc_auc;
    }
    state_.history.push_back(metrics);
    state_.epochs_done = epoch;
    state_.batches_done = 0;
    state_.epoch_start_random = shuffle_random_.state();  // where the next epoch starts
    write_outputs();
    print_epoch(metrics, epoch_seconds, epoch_samples);
    const bool periodic = settings_.checkpoint_every > 0 && epoch % settings_.checkpoint_every == 0;
    if (periodic || stop_ != 0 || epoch == settings_.epochs) save_checkpoint();
}

// The epoch's line: loss, then accuracy (and a binary run's ROC AUC) or a regression's
// test RMSE and MAE in the target's units.
void TrainingRun::print_epoch(const EpochMetrics& m, double epoch_seconds, int64_t epoch_samples) const {
    if (!leader_) return;
    const std::string rate =
        rate_text(epoch_seconds > 0 ? static_cast<double>(epoch_samples) / epoch_seconds : 0);
    if (task_ == Task::kBinary)
        fmt::print(
            "epoch {:>4}/{}  train loss {:.5f}  acc {:6.2f}%  |  test loss {:.5f}  acc {:6.2f}%  AUC {:.4f}"
            "  |  {} samples/s\n",
            m.epoch, settings_.epochs, m.train_loss, 100 * m.train_accuracy, m.test_loss,
            100 * m.test_accuracy, m.test_roc_auc, rate);
    else if (task_ == Task::kMulticlass)
        fmt::print(
            "epoch {:>4}/{}  train loss {:.5f}  acc {:6.2f}%  |  test loss {:.5f}  acc {:6.2f}%  |  {} "
            "samples/s\n",
            m.epoch, settings_.epochs, m.train_loss, 100 * m.train_accuracy, m.test_loss,
            100 * m.test_accuracy, rate);
    else
        fmt::print(
            "epoch {:>4}/{}  train loss {:.5f}  |  test loss {:.5f}  RMSE {:.3f}  MAE {:.3f}  |  {} "
            "samples/s\n",
            m.epoch, settings_.epochs, m.train_loss, m.test_loss, m.test_rmse(), m.test_mae(), rate);
    std::fflush(stdout);
}

// A checkpoint of a run whose epochs are all done: said so, and nothing is changed.
bool TrainingRun::finished_already() const {
    if (state_.epochs_done < settings_.epochs || state_.batches_done != 0) return false;
    if (leader_)
        fmt::print(
            "Nothing to train: {} is of a finished run ({} of {} epochs done); its outputs are in {}. "
            "Raise train.epochs to train on.\n",
            nnplug::escaped(request_.resume_from->string()), state_.epochs_done, settings_.epochs,
            nnplug::escaped(settings_.output_dir.string()));
    return true;
}

// The run has started (its data loaded, its checkpoint accepted): its folder and config.
void TrainingRun::start_outputs() {
    if (!leader_) return;
    std::error_code error;
    std::filesystem::create_directories(settings_.output_dir, error);
    if (error)
        throw std::runtime_error(fmt::format("cannot create the output folder '{}': {}",
                                             nnplug::escaped(settings_.output_dir.string()),
                                             error.message()));
    write_file_atomically(settings_.output_dir / "config.yaml", request_.config_text);
}

void TrainingRun::save_checkpoint() {
    if (!leader_) return;
    state_.parameters = model_.parameters();
    state_.optimizer_kind = optimizer_.kind();
    state_.optimizer_steps = optimizer_.steps();
    state_.optimizer_first = optimizer_.first_moment();
    state_.optimizer_second = optimizer_.second_moment();
    write_checkpoint(checkpoint_path_, identity_, state_);
}

void TrainingRun::write_outputs() {
    if (!leader_) return;
    write_file_atomically(settings_.output_dir / "metrics.csv", metrics_csv(state_.history, task_));
    write_file_atomically(settings_.output_dir / "training_curves.svg",
                          training_curves_svg(state_.history, title(), task_, settings_.loss));
}

// The summary describes the final model, also when a resumed run had nothing left to do.
int TrainingRun::finish() {
    if (state_.history.empty()) throw std::runtime_error("no epoch was trained");
    if (!leader_) return kRunFinished;
    write_outputs();
    const TestEvaluation final_test = evaluator_->run(model_);
    RunSummary summary;
    summary.backend = request_.backend;
    summary.loss = settings_.loss;
    summary.dtype = kDtype;
    summary.data = data_.split.train.description;
    summary.model = model_text_;
    summary.label_names = data_.split.train.label_names;
    summary.last = state_.history.back();
    summary.confusion = final_test.confusion;
    summary.samples_trained = samples_trained_;
    summary.train_seconds = train_seconds_;
    summary.samples_per_second =
        train_seconds_ > 0 ? static_cast<double>(samples_trained_) / train_seconds_ : 0;
    summary.processes = comm_.size();
    summary.host_threads = host_threads_;
    summary.steps = batches_run_;
    summary.combine_seconds = comm_.combine_seconds() - combine_seconds_before_;
    if (task_ != Task::kBinary) {
        write_task_outputs(summary, final_test);
        return kRunFinished;
    }
    write_file_atomically(settings_.output_dir / "summary.json", summary_json(summary));
    write_file_atomically(settings_.output_dir / "roc_curve.svg",
                          roc_curve_svg(final_test.scores.data(), data_.split.test.labels.data(),
                                        data_.test_rows(), final_test.roc_auc, title()));
    fmt::print("\n{}", summary_text(summary));
    fmt::print(
        "Outputs in {}: metrics.csv, training_curves.svg, roc_curve.svg, summary.json, checkpoint.bin, "
        "config.yaml\n",
        nnplug::escaped(settings_.output_dir.string()));
    return kRunFinished;
}

// A multi-class run's confusion matrix, or a regression's errors and predictions: the
// summary and its plot.
void TrainingRun::write_task_outputs(RunSummary& summary, const TestEvaluation& final_test) const {
    summary.task = task_;
    std::string plot;
    if (task_ == Task::kMulticlass) {
        summary.classes = final_test.classes;
        summary.class_names = data_.split.train.class_names;
        plot = "confusion_matrix.svg";
        write_file_atomically(settings_.output_dir / plot,
                              confusion_matrix_svg(final_test.classes, summary.class_names, title()));
    } else {
        summary.errors = final_test.errors;
        summary.test_rows = data_.test_rows();
        plot = "predicted_vs_true.svg";
        write_file_atomically(
            settings_.output_dir / plot,
            predicted_vs_true_svg(final_test.predictions.data(), data_.split.test.labels.data(),
                                  data_.test_rows(), final_test.errors, title()));
    }
    write_file_atomically(settings_.output_dir / "summary.json", summary_json(summary));
    fmt::print("\n{}", summary_text(summary));
    fmt::print(
        "Outputs in {}: metrics.csv, training_curves.svg, {}, summary.json, checkpoint.bin, config.yaml\n",
        nnplug::escaped(settings_.output_dir.string()), plot);
}

}  // namespace

int run_training(const RunRequest& request) {
    std::optional<Communicator> alone;
    if (!request.communicator) alone.emplace(nullptr, nullptr);
    TrainingRun run(request, request.communicator ? *request.communicator : *alone);
    return run.run();
}

}  // namespace train
