#include "train_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "trainer.h"

namespace train {
namespace {

// A shard's loss sum in double: four running sums (of its samples 4i + l), then
// (0 + 1) + (2 + 3), a fixed order whose adds overlap.
double shard_loss_sum(const float* losses, int64_t count) {
    double sums[4] = {};
    for (int64_t k = 0; k < count; ++k) sums[k % 4] += static_cast<double>(losses[k]);
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// A binary shard's correct predictions: sigmoid(logit) >= 0.5 with either loss.
int64_t binary_correct(const float* probabilities, const float* targets, int64_t count) {
    int64_t correct = 0;
    for (int64_t k = 0; k < count; ++k) correct += (probabilities[k] >= 0.5f) == (targets[k] == 1.0f);
    return correct;
}

int64_t shard_count(int64_t rows, int64_t rows_per_shard) {
    return (rows + rows_per_shard - 1) / rows_per_shard;
}

}  // namespace

TrainStep::TrainStep(const StepSetup& setup)
    : data_(setup.data),
      model_(setup.model),
      optimizer_(setup.optimizer),
      comm_(setup.comm),
      arena_(setup.arena),
      ranks_(setup.comm.size()),
      parameter_count_(setup.model.parameters().size()),
      weight_decay_(static_cast<float>(setup.weight_decay)),
      rows_per_shard_(shard_rows(setup.batch_size)),
      max_shards_(shard_count(setup.batch_size, rows_per_shard_)),
      shards_per_group_(group_shards(setup.batch_size)),
      shards_per_chunk_(
          chunk_shards(setup.batch_size, setup.host_threads, setup.model.layer_sizes().size() == 2)),
      layout_(static_cast<int64_t>(parameter_count_)),
      block_layout_(static_cast<int64_t>(parameter_count_)),
      task_(setup.loss.task),
      width_(setup.model.width()) {
    const int64_t batch_size = setup.batch_size;
    // One loss per thread of the arena (its stream, buffers and executors), for the chunks
    // that thread runs, on this thread's device; each ready for a whole chunk before the
    // first step (a shorter chunk, at a group's or the epoch's end, makes its executors
    // when it first runs).
    if (aclrtGetDevice(&device_) != ACL_SUCCESS)
        throw std::runtime_error(acl_failure("aclrtGetDevice", ACL_ERROR_FAILURE));
    const int64_t chunk_rows = std::min(batch_size, shards_per_chunk_ * rows_per_shard_);
    for (int t = 0; t < arena_.max_concurrency(); ++t) {
        thread_losses_.push_back(make_device_loss(setup.loss, chunk_rows));
        thread_losses_.back()->prepare(chunk_rows, true);
    }
    model_.reserve(
        std::max(std::min(batch_size, shards_per_group_ * rows_per_shard_), setup.evaluation_rows));
    for (auto* buffer : {&batch_targets_, &batch_weights_, &sample_losses_})
        buffer->resize(static_cast<size_t>(batch_size));
    grad_outputs_.resize(static_cast<size_t>(batch_size * width_));

    const int64_t train_rows = data_.train_rows();
    const int64_t batches_per_epoch = (train_rows + batch_size - 1) / batch_size;
    shard_storage_.resize(static_cast<size_t>((max_shards_ * layout_.bytes + kAlignment) / 8));
    for (const int64_t batch_rows : {batch_size, train_rows - (batches_per_epoch - 1) * batch_size}) {
        const int64_t shards = shard_count(batch_rows, rows_per_shard_);
        plans_.try_emplace(shards, shards, ranks_, layout_.bytes, block_layout_.bytes);
    }
    int64_t send_bytes = 0, receive_bytes = 0;
    for (const auto& [count, plan] : plans_) {
        receive_bytes = std::max(receive_bytes, plan.total_bytes);
        send_bytes = std::max(send_bytes, plan.part_bytes[static_cast<size_t>(comm_.rank())]);
    }
    send_storage_.resize(static_cast<size_t>((send_bytes + kAlignment) / 8));
    receive_storage_.resize(ranks_ > 1 ? static_cast<size_t>(receive_bytes / 8) : 0);
    max_width_ = tree_width(max_shards_);
    if (tree_levels(max_shards_) > kMaxTreeLevels)
        throw std::logic_error("more shards than the combine's tree holds");
    node_records_.resize(static_cast<size_t>(kMaxTreeLevels * max_width_));
}

DeviceLoss& TrainStep::thread_loss() {
    const int slot = tbb::this_task_arena::current_thread_index();
    if (slot < 0 || static_cast<size_t>(slot) >= thread_losses_.size())
        throw std::logic_error("a chunk ran outside the training arena");
    // aclrtSetDevice is per host thread (as in CANN), and any of oneTBB's threads may run
    // the chunk: a few tens of nanoseconds a chunk.
    if (const aclError status = aclrtSetDevice(device_))
        throw std::runtime_error(acl_failure("aclrtSetDevice", status));
    return *thread_losses_[static_cast<size_t>(slot)];
}

StepResult TrainStep::run(const int64_t* batch_index, int64_t rows, int64_t stop_request) {
    const int64_t shards = shard_count(rows, rows_per_shard_);
    const CombinePlan& plan = plans_.at(shards);
    std::tie(own_first_, own_last_) = shards_of_rank(shards, comm_.rank(), ranks_);
    run_own_shards(batch_index, rows);
    const char* gathered = pack_own_blocks(plan, shards, stop_request);
    // Everyone's blocks, in rank order.
    if (ranks_ > 1) {
        comm_.all_gather(gathered, plan.part_bytes[static_cast<size_t>(comm_.rank())],
                         receive_storage_.data(), plan.part_bytes);
        gathered = reinterpret_cast<const char*>(receive_storage_.data());
    }
    StepResult result;
    result.stop = index_records(plan, gathered, result);
    result.loss_sum = root_loss(shards);
    update_parameters(shards);
    return result;
}

// The shards group by group, each group's in chunks of whole shards, each chunk on one
// thread. Each sample's loss and gradient are the same whatever the grouping and the
// chunks: a shard's rows start a whole number of shards into its group.
void TrainStep::run_own_shards(const int64_t* batch_index, int64_t rows) {
    const RowTable& features = data_.train_features;
    for (int64_t first = own_first_; first < own_last_; first += shards_per_group_) {
        Group group;
        group.batch_index = batch_index;
        group.batch_rows = rows;
        group.begin = first * rows_per_shard_;
        group.last_shard = std::min(own_last_, first + shards_per_group_);
        // Reads run ahead to the batch's end.
        group.rows =
            BatchRows{features.data(), batch_index + group.begin, features.stride(), rows - group.begin};
        const int64_t chunks = (group.last_shard - first + shards_per_chunk_ - 1) / shards_per_chunk_;
        arena_.execute([&] {
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, chunks, 1),
                              [&](const tbb::blocked_range<int64_t>& r) {
                                  for (int64_t chunk = r.begin(); chunk < r.end(); ++chunk)
                                      run_chunk(group, first + chunk * shards_per_chunk_);
                              });
        });
    }
}

// A chunk runs on one thread from start to end: its rows forward, their loss and its
// gradient on the device (the thread's own DeviceBceLoss), backward while its rows are
// still in the core's cache.
void TrainStep::run_chunk(const Group& group, int64_t first_shard) {
    const int64_t rows = group.batch_rows, group_begin = group.begin;
    const int64_t last_shard = std::min(group.last_shard, first_shard + shards_per_chunk_);
    const int64_t chunk_begin = first_shard * rows_per_shard_;
    const int64_t chunk_end = std::min(last_shard * rows_per_shard_, rows);
    gather_targets(group.batch_index, chunk_begin, chunk_end);
    for (int64_t s = first_shard; s < last_shard; ++s) {
        const int64_t begin = s * rows_per_shard_, end = std::min(begin + rows_per_shard_, rows);
        model_.forward_shard(group.rows, begin - group_begin, end - group_begin);
    }
    thread_loss().run_samples(
        model_.outputs() + (chunk_begin - group_begin) * width_, batch_targets_.data() + chunk_begin,
        batch_weights_.data() + chunk_begin, chunk_end - chunk_begin, sample_losses_.data() + chunk_begin,
        grad_outputs_.data() + chunk_begin * width_, static_cast<float>(1.0 / static_cast<double>(rows)));
    for (int64_t s = first_shard; s < last_shard; ++s) {
        const int64_t begin = s * rows_per_shard_, end = std::min(begin + rows_per_shard_, rows);
        const ShardRecord record = shard_record(s);
        *record.loss_sum = shard_loss_sum(sample_losses_.data() + begin, end - begin);
        *record.correct = shard_correct(begin, end, group_begin);
        model_.backward_shard(group.rows, grad_outputs_.data() + group_begin * width_, begin - group_begin,
                              end - group_begin, record.gradient);
    }
}

void TrainStep::gather_targets(const int64_t* batch_index, int64_t begin, int64_t end) {
    if (task_ != Task::kBinary) {
        for (int64_t k = begin; k < end; ++k)
            batch_targets_[static_cast<size_t>(k)] = data_.train_targets[static_cast<size_t>(batch_index[k])];
        return;
    }
    for (int64_t k = begin; k < end; ++k) {
        const unsigned label = data_.train_labels[batch_index[k]];
        batch_targets_[static_cast<size_t>(k)] = static_cast<float>(label);
        batch_weights_[static_cast<size_t>(k)] = data_.label_weights[label];
    }
}

// Correct predictions of batch rows [begin, end): a binary label by its sigmoid, a class by
// the largest output; a regression counts none.
int64_t TrainStep::shard_correct(int64_t begin, int64_t end, int64_t group_begin) const {
    if (task_ == Task::kBinary)
        return binary_correct(model_.probabilities_data() + (begin - group_begin),
                              batch_targets_.data() + begin, end - begin);
    int64_t correct = 0;
    if (task_ == Task::kMulticlass) {
        const int32_t* predicted = model_.predicted_classes() + (begin - group_begin);
        for (int64_t k = begin; k < end; ++k)
            correct += static_cast<float>(predicted[k - begin]) == batch_targets_[static_cast<size_t>(k)];
    }
    return correct;
}

// This process's blocks: a one-shard block is the shard's record; a larger one has the
// loss and the gradient summed along the tree from its shards, the correct counts added.
char* TrainStep::pack_own_blocks(const CombinePlan& plan, int64_t shards, int64_t stop_request) {
    char* send = aligned_start(send_storage_);
    std::memcpy(send, &stop_request, sizeof(stop_request));
    const std::vector<TreeBlock>& own_blocks = plan.blocks[static_cast<size_t>(comm_.rank())];
    const std::vector<int64_t>& own_offsets = plan.record_offsets[static_cast<size_t>(comm_.rank())];
    const auto no_block = [](int64_t, int64_t) -> const double* { return nullptr; };
    const auto leaf_gradient = [&](int64_t s) -> const float* { return shard_record(s).gradient; };
    const auto leaf_loss = [&](int64_t s) -> const double* { return shard_record(s).loss_sum; };
    for (size_t b = 0; b < own_blocks.size(); ++b) {
        if (own_blocks[b].size == 1) {
            std::memcpy(send + own_offsets[b], shard_record(own_blocks[b].first).loss_sum,
                        static_cast<size_t>(layout_.bytes));
            continue;
        }
        const BlockRecord block = block_record_at(send + own_offsets[b]);
        double scratch[kMaxTreeLevels];
        tree_sum(own_blocks[b].first, own_blocks[b].size, shards, leaf_loss, no_block, 0, 1, block.loss_sum,
                 scratch);
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
    return send;
}

// Files every process's records by tree node and adds up the correct counts; returns the
// largest stop request of any process.
int64_t TrainStep::index_records(const CombinePlan& plan, const char* gathered, StepResult& result) {
    int64_t agreed_stop = 0;
    std::fill(node_records_.begin(), node_records_.end(), nullptr);
    for (int r = 0; r < ranks_; ++r) {
        const char* part = gathered + plan.part_offsets[static_cast<size_t>(r)];
        int64_t request_of_rank = 0;
        std::memcpy(&request_of_rank, part, sizeof(request_of_rank));
        agreed_stop = std::max(agreed_stop, request_of_rank);
        const std::vector<TreeBlock>& blocks = plan.blocks[static_cast<size_t>(r)];
        for (size_t b = 0; b < blocks.size(); ++b) {
            const char* record = part + plan.record_offsets[static_cast<size_t>(r)][b];
            node_records_[static_cast<size_t>(tree_level(blocks[b].size) * max_width_ +
                                              blocks[b].first / blocks[b].size)] = record;
            int64_t block_correct = 0;
            std::memcpy(&block_correct, record + 8, sizeof(block_correct));
            result.correct += block_correct;
        }
    }
    return agreed_stop;
}

// The record of the tree block of `size` shards from `first` (null: a leaf, or a node
// above the blocks).
const char* TrainStep::node_record(int64_t first, int64_t size) const {
    if (size == 1) return nullptr;  // a shard record: a leaf
    return node_records_[static_cast<size_t>(tree_level(size) * max_width_ + first / size)];
}

const char* TrainStep::leaf_record(int64_t s) const {
    const char* record = node_records_[static_cast<size_t>(s)];
    if (record == nullptr) throw std::logic_error("the combine's blocks do not cover the batch");
    return record;
}

// The root: every node above the blocks, which tile [0, shards).
double TrainStep::root_loss(int64_t shards) const {
    double loss_sum = 0, scratch[kMaxTreeLevels];
    tree_sum(
        0, tree_width(shards), shards,
        [&](int64_t s) { return reinterpret_cast<const double*>(leaf_record(s)); },
        [&](int64_t f, int64_t size) {
            const char* record = node_record(f, size);
            return record ? reinterpret_cast<const double*>(record) : nullptr;
        },
        0, 1, &loss_sum, scratch);
    return loss_sum;
}

void TrainStep::update_parameters(int64_t shards) {
    const int64_t width = tree_width(shards);
    std::vector<float>& gradient = model_.gradients();
    const std::vector<uint8_t>& decayed = model_.decayed();
    float* parameters = model_.parameters().data();
    const auto leaf = [&](int64_t s) {
        return reinterpret_cast<const float*>(leaf_record(s) + kGradientOffset);
    };
    const auto block = [&](int64_t f, int64_t size) {
        const char* record = node_record(f, size);
        return record ? reinterpret_cast<const double*>(record + kGradientOffset) : nullptr;
    };
    constexpr size_t kOptimizerGrain = 2048;
    optimizer_.begin_step();
    for_parameters(kOptimizerGrain, [&](const tbb::blocked_range<size_t>& r) {
        double root[kSliceParameters], scratch[kMaxTreeLevels * kSliceParameters];
        for (size_t slice = r.begin(); slice < r.end(); slice += kSliceParameters) {
            const size_t slice_end = std::min(r.end(), slice + kSliceParameters);
            tree_sum(0, width, shards, leaf, block, slice, slice_end, root, scratch);
            for (size_t i = slice; i < slice_end; ++i) {
                gradient[i] = static_cast<float>(root[i - slice]);
                if (weight_decay_ != 0.0f && decayed[i]) gradient[i] += weight_decay_ * parameters[i];
            }
        }
        optimizer_.update(parameters, gradient.data(), r.begin(), r.end());
    });
}

}  // namespace train
