#include "trainer.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "checkpoint.h"
#include "classification_metrics.h"
#include "communicator.h"
#include "dataset.h"
#include "device_loss.h"
#include "epoch_order.h"
#include "model.h"
#include "optimizer.h"
#include "random_stream.h"
#include "row_table.h"
#include "run_report.h"
#include "shard_tree.h"

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
    const int64_t two_per_thread = (shards + 2 * threads - 1) / (2 * threads);
    const int64_t most = std::max<int64_t>(1, kMaxChunkRows / rows_per_shard);
    const int64_t least = logistic ? std::max<int64_t>(1, kMinChunkRows / rows_per_shard) : 1;
    return std::min(shards, std::max(least, std::min(two_per_thread, most)));
}

namespace {

// What a shard's backward writes: its loss sum, correct count and gradient. Records sit
// at 64-byte boundaries in every process: where a shard's gradient lands in memory decides
// how Eigen splits its vector loops (aligned packets, scalar ends), so it must not depend
// on the shard's place in its process's run of shards.
constexpr int64_t kAlignment = 64;
int64_t aligned_bytes(int64_t bytes) {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}
struct ShardRecordLayout {
    int64_t bytes = 0;  // a multiple of kAlignment
    explicit ShardRecordLayout(int64_t parameter_count) : bytes(aligned_bytes(16 + 4 * parameter_count)) {}
};
// What a process sends to the combine: a header carrying its stop request, then one record
// per tree block it holds (shard_tree.h): a one-shard block as the shard's record, a larger
// one as its loss sum, correct count and gradient sum in double.
struct BlockRecordLayout {
    int64_t bytes = 0;
    explicit BlockRecordLayout(int64_t parameter_count) : bytes(aligned_bytes(16 + 8 * parameter_count)) {}
};
constexpr int64_t kHeaderBytes = kAlignment;

char* aligned_start(std::vector<double>& storage) {
    const auto address = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<char*>((address + kAlignment - 1) / kAlignment * kAlignment);
}

struct ShardRecord {
    double* loss_sum;
    int64_t* correct;
    float* gradient;
};

// Both records: the loss sum at 0, the correct count at 8, the gradient from here on.
constexpr int64_t kGradientOffset = 16;

ShardRecord record_at(char* base) {
    return {reinterpret_cast<double*>(base), reinterpret_cast<int64_t*>(base + 8),
            reinterpret_cast<float*>(base + kGradientOffset)};
}

struct BlockRecord {
    double* loss_sum;
    int64_t* correct;
    double* gradient;
};

BlockRecord block_record_at(char* base) {
    return {reinterpret_cast<double*>(base), reinterpret_cast<int64_t*>(base + 8),
            reinterpret_cast<double*>(base + kGradientOffset)};
}

// A shard's loss sum in double: four running sums (of its samples 4i + l), then
// (0 + 1) + (2 + 3), a fixed order whose adds overlap.
double shard_loss_sum(const float* losses, int64_t count) {
    double sums[4] = {};
    for (int64_t k = 0; k < count; ++k) sums[k % 4] += static_cast<double>(losses[k]);
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// A shard's correct predictions: sigmoid(logit) >= 0.5 with either loss.
int64_t shard_correct(const float* probabilities, const float* targets, int64_t count) {
    int64_t correct = 0;
    for (int64_t k = 0; k < count; ++k) correct += (probabilities[k] >= 0.5f) == (targets[k] == 1.0f);
    return correct;
}

// The shards [first, last) of a batch's `count` that rank r of n takes: contiguous, as
// even as they divide.
std::pair<int64_t, int64_t> shards_of_rank(int64_t count, int rank, int ranks) {
    return {count * rank / ranks, count * (rank + 1) / ranks};
}

// Who sends which tree blocks for a batch of `shards` shards, and where each process's
// part of the combine lands.
struct CombinePlan {
    std::vector<std::vector<TreeBlock>> blocks;        // per process
    std::vector<std::vector<int64_t>> record_offsets;  // per process and block, in its part
    std::vector<int64_t> part_bytes, part_offsets;
    int64_t total_bytes = 0;
    CombinePlan(int64_t shards, int ranks, int64_t shard_bytes, int64_t block_bytes) {
        for (int r = 0; r < ranks; ++r) {
            const auto [first, last] = shards_of_rank(shards, r, ranks);
            blocks.push_back(tree_blocks(first, last));
            record_offsets.emplace_back();
            int64_t bytes = kHeaderBytes;
            for (const TreeBlock& block : blocks.back()) {
                record_offsets.back().push_back(bytes);
                bytes += block.size == 1 ? shard_bytes : block_bytes;
            }
            part_bytes.push_back(bytes);
            part_offsets.push_back(total_bytes);
            total_bytes += bytes;
        }
    }
};

// Parameters per slice of the tree sums: the sums' scratch sits on the stack.
constexpr size_t kSliceParameters = 256;
constexpr int kMaxTreeLevels = 9;  // a tree over kMaxShards = 256 shards

}  // namespace

int run_training(const RunRequest& request) {
    const TrainSettings& settings = request.settings;
    std::optional<Communicator> alone;
    if (!request.communicator) alone.emplace(nullptr, nullptr);
    Communicator& comm = request.communicator ? *request.communicator : *alone;
    const bool leader = comm.rank() == 0;
    const int ranks = comm.size();
    if (leader) std::filesystem::create_directories(settings.output_dir);
    const auto checkpoint_path = settings.output_dir / "checkpoint.bin";
    const int host_threads =
        settings.threads > 0 ? static_cast<int>(settings.threads) : tbb::this_task_arena::max_concurrency();
    tbb::task_arena arena(host_threads);

    // Data: load or generate, split, standardize with the training split's statistics.
    const auto load_start = Clock::now();
    Dataset data = settings.synthetic
                       ? make_synthetic(*settings.synthetic, settings.synthetic_noise, settings.seed)
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
    // Training rows are read in a shuffled order: from a table laid out for that.
    const RowTable train_features(split.train.features.data(), train_rows, features);
    split.train.features = FeatureMatrix();
    const auto class_weights = class_weight_values(
        settings.class_weights, train_rows - split.train.positives(), split.train.positives());
    const std::optional<float> pos_weight =
        pos_weight_value(settings.pos_weight, train_rows - split.train.positives(), split.train.positives());
    const LossKind loss_kind_used = loss_kind(settings.loss);
    // bce_with_logits hands pos_weight to the ops as posWeight. aclnnBinaryCrossEntropy has
    // none; for 0/1 labels posWeight p is the same as multiplying the positives' weights by
    // p, so bce folds it into the sample weights and both losses train on the same objective.
    auto sample_class_weights = class_weights;
    if (pos_weight && loss_kind_used == LossKind::kBce) sample_class_weights.second *= *pos_weight;
    // Each training label as one bit (row_table.h); a sample's weight follows from its label.
    LabelBits train_labels(split.train.labels.size());
    for (Eigen::Index i = 0; i < split.train.labels.size(); ++i)
        if (split.train.labels[i] == 1.0f) train_labels.set(i);
    const float label_weights[2] = {sample_class_weights.first, sample_class_weights.second};
    const Eigen::VectorXf test_weights = sample_weights(split.test.labels, sample_class_weights);

    Model model(features, settings.hidden,
                loss_kind_used == LossKind::kBceWithLogits ? ModelOutput::kLogit : ModelOutput::kProbability);
    RandomStream init_random(settings.seed);
    model.initialize(init_random);
    Optimizer optimizer(settings, model.parameters().size());
    RandomStream shuffle_random(settings.seed ^ 0x9e3779b97f4a7c15ULL);
    const RunIdentity identity{trajectory_settings(settings), fingerprint, model.layer_sizes()};

    const int64_t batch_size = std::min(settings.batch_size, train_rows);
    const int64_t rows_per_shard = shard_rows(batch_size);
    const int64_t max_shards = (batch_size + rows_per_shard - 1) / rows_per_shard;

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
            throw std::runtime_error(
                fmt::format("checkpoint '{}' holds an optimizer or random state that does not "
                            "fit this run",
                            request.resume_from->string()));
        if (leader)
            fmt::print("Resumed from {} at epoch {} batch {}\n", request.resume_from->string(),
                       state.epochs_done + 1, state.batches_done);
    }

    const std::string model_text = settings.model_kind == "logistic"
                                       ? fmt::format("logistic regression ({} inputs)", features)
                                       : fmt::format("MLP {}", fmt::join(model.layer_sizes(), "-"));
    if (leader) {
        fmt::print("Data: {}; {} train / {} test rows; class weights {:.4g} / {:.4g} ({:.2f} s)\n",
                   split.train.description, train_rows, test_rows, class_weights.first, class_weights.second,
                   seconds_since(load_start));
        fmt::print("Model: {}, {} parameters; optimizer {} lr {}; batch {}; backend {}\n", model_text,
                   model.parameters().size(), settings.optimizer, settings.learning_rate, settings.batch_size,
                   request.backend);
        fmt::print("Loss: {} ({}), pos_weight {}\n", settings.loss,
                   loss_kind_used == LossKind::kBceWithLogits ? "aclnnBinaryCrossEntropyWithLogits on logits"
                                                              : "aclnnBinaryCrossEntropy on probabilities",
                   pos_weight
                       ? fmt::format("{:.4g}{}", *pos_weight,
                                     loss_kind_used == LossKind::kBce ? " (in the positives' weights)" : "")
                       : std::string("none"));
        fmt::print("Parallel: {} process{} x {} host thread{}; {} shard{} of {} rows per batch\n", ranks,
                   ranks > 1 ? "es" : "", host_threads, host_threads > 1 ? "s" : "", max_shards,
                   max_shards > 1 ? "s" : "", std::min(rows_per_shard, batch_size));
        std::fflush(stdout);
    }

    const int64_t shards_per_group = group_shards(batch_size);
    const int64_t shards_per_chunk = chunk_shards(batch_size, host_threads, model.layer_sizes().size() == 2);
    const int64_t evaluation_chunk = std::min<int64_t>(test_rows, 1 << 16);
    const int64_t capacity = std::max(batch_size, evaluation_chunk);
    const int64_t group_capacity =
        std::max(std::min(batch_size, shards_per_group * rows_per_shard), evaluation_chunk);
    const std::optional<float> ops_pos_weight =
        loss_kind_used == LossKind::kBceWithLogits ? pos_weight : std::nullopt;
    DeviceBceLoss loss(evaluation_chunk, loss_kind_used, ops_pos_weight);  // the test split's, on this thread
    // One loss per thread of the arena (its stream, buffers and executors), for the chunks
    // that thread runs, on this thread's device.
    int32_t device = 0;
    if (aclrtGetDevice(&device) != ACL_SUCCESS)
        throw std::runtime_error(fmt::format("aclrtGetDevice failed: {}", aclGetRecentErrMsg()));
    // Each ready for a whole chunk before the first step (a shorter chunk, at a group's or
    // the epoch's end, makes its executors when it first runs).
    const int64_t chunk_rows = std::min(batch_size, shards_per_chunk * rows_per_shard);
    std::vector<std::unique_ptr<DeviceBceLoss>> thread_losses;
    for (int t = 0; t < arena.max_concurrency(); ++t) {
        thread_losses.push_back(std::make_unique<DeviceBceLoss>(chunk_rows, loss_kind_used, ops_pos_weight));
        thread_losses.back()->prepare(chunk_rows, true);
    }
    const auto thread_loss = [&]() -> DeviceBceLoss& {
        const int slot = tbb::this_task_arena::current_thread_index();
        if (slot < 0 || static_cast<size_t>(slot) >= thread_losses.size())
            throw std::logic_error("a chunk ran outside the training arena");
        // aclrtSetDevice is per host thread (as in CANN), and any of oneTBB's threads may
        // run the chunk: a few tens of nanoseconds a chunk.
        if (const aclError status = aclrtSetDevice(device))
            throw std::runtime_error(
                fmt::format("aclrtSetDevice failed with status {}: {}", status, aclGetRecentErrMsg()));
        return *thread_losses[static_cast<size_t>(slot)];
    };
    model.reserve(group_capacity);

    // Buffers reused by every batch: no allocation inside the loop.
    std::vector<float> batch_targets(static_cast<size_t>(capacity)),
        batch_weights(static_cast<size_t>(capacity));
    std::vector<float> sample_losses(static_cast<size_t>(capacity)),
        grad_outputs(static_cast<size_t>(capacity));
    std::vector<float> test_scores(static_cast<size_t>(test_rows));
    EpochOrder epoch_order(static_cast<size_t>(train_rows));
    const std::vector<int64_t>& order = epoch_order.order();
    const int64_t batches_per_epoch = (train_rows + batch_size - 1) / batch_size;
    const ShardRecordLayout layout(static_cast<int64_t>(model.parameters().size()));
    const BlockRecordLayout block_layout(static_cast<int64_t>(model.parameters().size()));
    // This process's shard records; its part of the combine (header and block records);
    // everyone's parts. A batch has one of two shard counts: a full one's or the last one's.
    std::vector<double> shard_storage(static_cast<size_t>((max_shards * layout.bytes + kAlignment) / 8));
    std::map<int64_t, CombinePlan> plans;
    for (const int64_t batch_rows : {batch_size, train_rows - (batches_per_epoch - 1) * batch_size})
        plans.try_emplace((batch_rows + rows_per_shard - 1) / rows_per_shard,
                          (batch_rows + rows_per_shard - 1) / rows_per_shard, ranks, layout.bytes,
                          block_layout.bytes);
    int64_t send_bytes = 0, receive_bytes = 0;
    for (const auto& [count, plan] : plans) {
        receive_bytes = std::max(receive_bytes, plan.total_bytes);
        send_bytes = std::max(send_bytes, plan.part_bytes[static_cast<size_t>(comm.rank())]);
    }
    std::vector<double> send_storage(static_cast<size_t>((send_bytes + kAlignment) / 8));
    std::vector<double> receive_storage(ranks > 1 ? static_cast<size_t>(receive_bytes / 8) : 0);
    // Every record of a step by tree node: level (log2 of its size) * width + its index
    // (level 0: the shard records of one-shard blocks).
    const int64_t max_width = tree_width(max_shards);
    if (tree_levels(max_shards) > kMaxTreeLevels)
        throw std::logic_error("more shards than the combine's tree holds");
    std::vector<const char*> node_records(static_cast<size_t>(kMaxTreeLevels * max_width));
    const size_t parameter_count = model.parameters().size();
    // body over [0, parameter_count) in ranges of about `grain` parameters: in parallel, or
    // on this thread when one range holds them all (a small model then makes no oneTBB
    // round trip).
    constexpr size_t kOptimizerGrain = 2048;
    const auto for_parameters = [&](size_t grain, const auto& body) {
        const tbb::blocked_range<size_t> all(0, parameter_count, grain);
        if (!all.is_divisible()) return body(all);
        arena.execute([&] { tbb::parallel_for(all, body); });
    };

    const auto evaluate_test = [&]() {
        TestEvaluation result;
        double loss_sum = 0;
        for (int64_t start = 0; start < test_rows; start += evaluation_chunk) {
            const int64_t rows = std::min(evaluation_chunk, test_rows - start);
            const BatchRows chunk{split.test.features.row(start).data(), nullptr};
            // Fixed pieces, so that no row's arithmetic depends on how the threads split the work.
            constexpr int64_t kPiece = 4096;
            arena.execute([&] {
                tbb::parallel_for(tbb::blocked_range<int64_t>(0, (rows + kPiece - 1) / kPiece, 1),
                                  [&](const tbb::blocked_range<int64_t>& r) {
                                      for (int64_t piece = r.begin(); piece < r.end(); ++piece)
                                          model.forward_shard(chunk, piece * kPiece,
                                                              std::min(rows, (piece + 1) * kPiece));
                                  });
            });
            std::copy(model.probabilities_data(), model.probabilities_data() + rows,
                      test_scores.data() + start);
            loss.run_samples(model.outputs(), split.test.labels.data() + start, test_weights.data() + start,
                             rows, sample_losses.data(), nullptr, 0.0f);
            for (int64_t i = 0; i < rows; ++i)
                loss_sum += static_cast<double>(sample_losses[static_cast<size_t>(i)]);
        }
        result.loss = loss_sum / static_cast<double>(test_rows);
        result.confusion.add(test_scores.data(), split.test.labels.data(), test_rows);
        result.roc_auc = roc_auc(test_scores.data(), split.test.labels.data(), test_rows);
        return result;
    };
    const auto save_checkpoint = [&]() {
        if (!leader) return;
        state.parameters = model.parameters();
        state.optimizer_kind = optimizer.kind();
        state.optimizer_steps = optimizer.steps();
        state.optimizer_first = optimizer.first_moment();
        state.optimizer_second = optimizer.second_moment();
        write_checkpoint(checkpoint_path, identity, state);
    };
    const auto write_outputs = [&]() {
        if (!leader) return;
        write_file_atomically(settings.output_dir / "metrics.csv", metrics_csv(state.history));
        write_file_atomically(
            settings.output_dir / "training_curves.svg",
            training_curves_svg(state.history, fmt::format("{} on {}", model_text, split.train.description)));
    };

    // One step over batch rows [first, first + rows) of `order`: this process's shards
    // forward, the loss and its gradient on the device, backward; then the shards' records
    // summed along the tree (shard_tree.h): this process's blocks, exchanged, and the root
    // from everyone's. Returns the stop request agreed by every process (0: none, else a
    // signal number).
    std::vector<float>& gradient = model.gradients();
    const std::vector<uint8_t>& decayed = model.decayed();
    const float weight_decay = static_cast<float>(settings.weight_decay);
    const auto train_step = [&](int64_t first, int64_t rows, int64_t stop_request) {
        const int64_t shards = (rows + rows_per_shard - 1) / rows_per_shard;
        const CombinePlan& plan = plans.at(shards);
        const std::pair<int64_t, int64_t> own = shards_of_rank(shards, comm.rank(), ranks);
        const int64_t own_first = own.first,
                      own_last = own.second;  // (lambdas cannot capture a binding in C++17)
        const int64_t* batch_index = order.data() + first;
        char* shard_base = aligned_start(shard_storage);
        const auto shard_record = [&](int64_t s) {
            return record_at(shard_base + (s - own_first) * layout.bytes);
        };
        // The shards group by group, each group's in chunks of whole shards. A chunk runs on
        // one thread from start to end: its rows forward, their loss and its gradient on the
        // device (the thread's own DeviceBceLoss), backward while its rows are still in the
        // core's cache. Each sample's loss and gradient are the same whatever the grouping
        // and the chunks: a shard's rows start a whole number of shards into its group.
        for (int64_t group = own_first; group < own_last; group += shards_per_group) {
            const int64_t group_last = std::min(own_last, group + shards_per_group);
            const int64_t group_begin = group * rows_per_shard;
            // The group's rows, numbered from 0 for the model; reads run ahead to the batch's end.
            const BatchRows group_rows{train_features.data(), batch_index + group_begin,
                                       train_features.stride(), rows - group_begin};
            const int64_t chunks = (group_last - group + shards_per_chunk - 1) / shards_per_chunk;
            const auto run_chunk = [&](int64_t chunk) {
                const int64_t first_shard = group + chunk * shards_per_chunk;
                const int64_t last_shard = std::min(group_last, first_shard + shards_per_chunk);
                const int64_t chunk_begin = first_shard * rows_per_shard;
                const int64_t chunk_end = std::min(last_shard * rows_per_shard, rows);
                for (int64_t k = chunk_begin; k < chunk_end; ++k) {
                    const unsigned label = train_labels[batch_index[k]];
                    batch_targets[static_cast<size_t>(k)] = label;
                    batch_weights[static_cast<size_t>(k)] = label_weights[label];
                }
                for (int64_t s = first_shard; s < last_shard; ++s) {
                    const int64_t begin = s * rows_per_shard, end = std::min(begin + rows_per_shard, rows);
                    model.forward_shard(group_rows, begin - group_begin, end - group_begin);
                }
                thread_loss().run_samples(
                    model.outputs() + (chunk_begin - group_begin), batch_targets.data() + chunk_begin,
                    batch_weights.data() + chunk_begin, chunk_end - chunk_begin,
                    sample_losses.data() + chunk_begin, grad_outputs.data() + chunk_begin,
                    static_cast<float>(1.0 / static_cast<double>(rows)));
                for (int64_t s = first_shard; s < last_shard; ++s) {
                    const int64_t begin = s * rows_per_shard, end = std::min(begin + rows_per_shard, rows);
                    const ShardRecord record = shard_record(s);
                    *record.loss_sum = shard_loss_sum(sample_losses.data() + begin, end - begin);
                    *record.correct = shard_correct(model.probabilities_data() + (begin - group_begin),
                                                    batch_targets.data() + begin, end - begin);
                    model.backward_shard(group_rows, grad_outputs.data() + group_begin, begin - group_begin,
                                         end - group_begin, record.gradient);
                }
            };
            arena.execute([&] {
                tbb::parallel_for(tbb::blocked_range<int64_t>(0, chunks, 1),
                                  [&](const tbb::blocked_range<int64_t>& r) {
                                      for (int64_t chunk = r.begin(); chunk < r.end(); ++chunk)
                                          run_chunk(chunk);
                                  });
            });
        }

        // This process's blocks: a one-shard block is the shard's record; a larger one has
        // the loss and the gradient summed along the tree from its shards, the correct
        // counts added.
        char* send = aligned_start(send_storage);
        std::memcpy(send, &stop_request, sizeof(stop_request));
        const std::vector<TreeBlock>& own_blocks = plan.blocks[static_cast<size_t>(comm.rank())];
        const std::vector<int64_t>& own_offsets = plan.record_offsets[static_cast<size_t>(comm.rank())];
        const auto no_block = [](int64_t, int64_t) -> const double* { return nullptr; };
        const auto leaf_gradient = [&](int64_t s) -> const float* { return shard_record(s).gradient; };
        const auto leaf_loss = [&](int64_t s) -> const double* { return shard_record(s).loss_sum; };
        for (size_t b = 0; b < own_blocks.size(); ++b) {
            if (own_blocks[b].size == 1) {
                std::memcpy(send + own_offsets[b], shard_record(own_blocks[b].first).loss_sum,
                            static_cast<size_t>(layout.bytes));
                continue;
            }
            const BlockRecord block = block_record_at(send + own_offsets[b]);
            double scratch[kMaxTreeLevels];
            tree_sum(own_blocks[b].first, own_blocks[b].size, shards, leaf_loss, no_block, 0, 1,
                     block.loss_sum, scratch);
            *block.correct = 0;
            for (int64_t s = own_blocks[b].first; s < own_blocks[b].first + own_blocks[b].size; ++s)
                *block.correct += *shard_record(s).correct;
        }
        for_parameters(kSliceParameters, [&](const tbb::blocked_range<size_t>& r) {
            double scratch[kMaxTreeLevels * kSliceParameters];
            for (size_t slice = r.begin(); slice < r.end(); slice += kSliceParameters) {
                const size_t slice_end = std::min(r.end(), slice + kSliceParameters);
                for (size_t b = 0; b < own_blocks.size(); ++b) {
                    if (own_blocks[b].size == 1) continue;
                    double* sums = block_record_at(send + own_offsets[b]).gradient;
                    tree_sum(own_blocks[b].first, own_blocks[b].size, shards, leaf_gradient, no_block, slice,
                             slice_end, sums + slice, scratch);
                }
            }
        });

        // Everyone's blocks, in rank order.
        const char* gathered = send;
        if (ranks > 1) {
            comm.all_gather(send, plan.part_bytes[static_cast<size_t>(comm.rank())], receive_storage.data(),
                            plan.part_bytes);
            gathered = reinterpret_cast<const char*>(receive_storage.data());
        }
        int64_t agreed_stop = 0;
        std::fill(node_records.begin(), node_records.end(), nullptr);
        int64_t correct = 0;
        for (int r = 0; r < ranks; ++r) {
            const char* part = gathered + plan.part_offsets[static_cast<size_t>(r)];
            int64_t request_of_rank = 0;
            std::memcpy(&request_of_rank, part, sizeof(request_of_rank));
            agreed_stop = std::max(agreed_stop, request_of_rank);
            const std::vector<TreeBlock>& blocks = plan.blocks[static_cast<size_t>(r)];
            for (size_t b = 0; b < blocks.size(); ++b) {
                const char* record = part + plan.record_offsets[static_cast<size_t>(r)][b];
                int level = 0;
                while ((int64_t{1} << level) < blocks[b].size) ++level;
                node_records[static_cast<size_t>(level * max_width + blocks[b].first / blocks[b].size)] =
                    record;
                int64_t block_correct = 0;
                std::memcpy(&block_correct, record + 8, sizeof(block_correct));
                correct += block_correct;
            }
        }
        // The root: every node above the blocks, which tile [0, shards).
        const auto block_at = [&](int64_t node_first, int64_t size, int64_t offset) -> const double* {
            if (size == 1) return nullptr;  // a shard record: a leaf
            int level = 0;
            while ((int64_t{1} << level) < size) ++level;
            const char* record = node_records[static_cast<size_t>(level * max_width + node_first / size)];
            return record ? reinterpret_cast<const double*>(record + offset) : nullptr;
        };
        const auto leaf_record = [&](int64_t s) {
            const char* record = node_records[static_cast<size_t>(s)];
            if (record == nullptr) throw std::logic_error("the combine's blocks do not cover the batch");
            return record;
        };
        const int64_t width = tree_width(shards);
        double loss_sum = 0, loss_scratch[kMaxTreeLevels];
        tree_sum(
            0, width, shards, [&](int64_t s) { return reinterpret_cast<const double*>(leaf_record(s)); },
            [&](int64_t f, int64_t size) { return block_at(f, size, 0); }, 0, 1, &loss_sum, loss_scratch);
        state.partial_loss_sum += loss_sum;
        state.partial_correct += correct;
        state.partial_seen += rows;
        float* parameters = model.parameters().data();
        optimizer.begin_step();
        for_parameters(kOptimizerGrain, [&](const tbb::blocked_range<size_t>& r) {
            double root[kSliceParameters], scratch[kMaxTreeLevels * kSliceParameters];
            for (size_t slice = r.begin(); slice < r.end(); slice += kSliceParameters) {
                const size_t slice_end = std::min(r.end(), slice + kSliceParameters);
                tree_sum(
                    0, width, shards,
                    [&](int64_t s) {
                        return reinterpret_cast<const float*>(leaf_record(s) + kGradientOffset);
                    },
                    [&](int64_t f, int64_t size) { return block_at(f, size, kGradientOffset); }, slice,
                    slice_end, root, scratch);
                for (size_t i = slice; i < slice_end; ++i) {
                    gradient[i] = static_cast<float>(root[i - slice]);
                    if (weight_decay != 0.0f && decayed[i]) gradient[i] += weight_decay * parameters[i];
                }
            }
            optimizer.update(parameters, gradient.data(), r.begin(), r.end());
        });
        return agreed_stop;
    };

    // oneTBB starts the arena's worker threads at its first parallel work: start them with
    // the set-up, not inside the first epoch's timed loop (about 3 ms on a 2-core machine).
    arena.execute([&] { tbb::parallel_for(0, 2 * host_threads, [](int) {}); });

    int64_t samples_trained = 0;
    int64_t batches_run = 0;
    double train_seconds = 0;
    int64_t stop = 0;  // agreed by every process at the last step
    for (int64_t epoch = state.epochs_done + 1; epoch <= settings.epochs; ++epoch) {
        // Timed from the shuffle on, as a training loop that draws its order per epoch is.
        const auto epoch_start = Clock::now();
        // The epoch's order comes from one draw of the stream, whose state at the epoch's
        // start is saved, so a resumed epoch replays the same order and skips the batches
        // already done.
        if (state.batches_done == 0) state.epoch_start_random = shuffle_random.state();
        epoch_order.draw(shuffle_random.next(), arena);
        if (state.batches_done == 0) {
            state.partial_loss_sum = 0;
            state.partial_correct = 0;
            state.partial_seen = 0;
        }
        ProgressBar progress(leader ? batches_per_epoch : 0);
        int64_t epoch_samples = 0;
        for (int64_t b = state.batches_done; b < batches_per_epoch; ++b) {
            const int64_t first = b * batch_size;
            const int64_t rows = std::min(batch_size, train_rows - first);
            ++batches_run;
            // A signal, or the test's simulated one; every process learns of any at this step.
            const bool simulated =
                request.interrupt_after_batches > 0 && batches_run == request.interrupt_after_batches;
            const int64_t request_here = g_stop_signal != 0 ? g_stop_signal : simulated ? SIGINT : 0;
            stop = train_step(first, rows, request_here);
            epoch_samples += rows;
            progress.update(b + 1, epoch);

            if (stop != 0 && b + 1 < batches_per_epoch) {
                progress.clear();
                state.batches_done = b + 1;
                state.epochs_done = epoch - 1;
                save_checkpoint();
                const int code = stop == SIGTERM ? kRunInterruptedBySigterm : kRunInterruptedBySigint;
                if (leader)
                    fmt::print(
                        "Interrupted in epoch {} after batch {} of {}: checkpoint written to {}\n"
                        "Continue with --resume.\n",
                        epoch, b + 1, batches_per_epoch, checkpoint_path.string());
                return code;
            }
        }
        progress.clear();
        const double epoch_seconds = seconds_since(epoch_start);
        train_seconds += epoch_seconds;
        samples_trained += epoch_samples;

        EpochMetrics metrics;
        metrics.epoch = epoch;
        metrics.train_loss = state.partial_loss_sum / static_cast<double>(state.partial_seen);
        metrics.train_accuracy =
            static_cast<double>(state.partial_correct) / static_cast<double>(state.partial_seen);
        if (leader) {
            const TestEvaluation test = evaluate_test();
            metrics.test_loss = test.loss;
            metrics.test_accuracy = test.confusion.accuracy();
            metrics.test_roc_auc = test.roc_auc;
        }
        state.history.push_back(metrics);
        state.epochs_done = epoch;
        state.batches_done = 0;
        state.epoch_start_random = shuffle_random.state();  // where the next epoch starts
        write_outputs();
        if (leader) {
            fmt::print(
                "epoch {:>4}/{}  train loss {:.5f}  acc {:6.2f}%  |  test loss {:.5f}  acc {:6.2f}%  AUC "
                "{:.4f}"
                "  |  {} samples/s\n",
                epoch, settings.epochs, metrics.train_loss, 100 * metrics.train_accuracy, metrics.test_loss,
                100 * metrics.test_accuracy, metrics.test_roc_auc,
                rate_text(epoch_seconds > 0 ? static_cast<double>(epoch_samples) / epoch_seconds : 0));
            std::fflush(stdout);
        }

        const bool periodic = settings.checkpoint_every > 0 && epoch % settings.checkpoint_every == 0;
        if (periodic || stop != 0 || epoch == settings.epochs) save_checkpoint();
        if (stop != 0 && epoch < settings.epochs) {
            if (leader)
                fmt::print("Interrupted after epoch {}: checkpoint written to {}\nContinue with --resume.\n",
                           epoch, checkpoint_path.string());
            return stop == SIGTERM ? kRunInterruptedBySigterm : kRunInterruptedBySigint;
        }
    }

    // The summary describes the final model, also when a resumed run had nothing left to do.
    if (state.history.empty()) throw std::runtime_error("no epoch was trained");
    if (!leader) return kRunFinished;
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
    summary.processes = ranks;
    summary.host_threads = host_threads;
    summary.steps = batches_run;
    summary.combine_seconds = comm.combine_seconds();
    write_file_atomically(settings.output_dir / "summary.json", summary_json(summary));
    fmt::print("\n{}", summary_text(summary));
    fmt::print("Outputs in {}: metrics.csv, training_curves.svg, summary.json, checkpoint.bin, config.yaml\n",
               settings.output_dir.string());
    return kRunFinished;
}

}  // namespace train
