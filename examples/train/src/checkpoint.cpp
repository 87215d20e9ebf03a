#include "checkpoint.h"

#include <fmt/format.h>
#include <nnplug/escaped_text.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "random_stream.h"
#include "safe_file.h"

namespace train {
namespace {

constexpr char kMagic[8] = {'N', 'N', 'P', 'T', 'R', 'A', 'I', 'N'};
constexpr uint32_t kFormatVersion = 1;

uint64_t fnv1a(const std::string& bytes) {
    uint64_t hash = 1469598103934665603ULL;
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
    return hash;
}

class ByteWriter {
public:
    template <typename T>
    void value(const T& v) {
        bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    }
    void text(const std::string& s) {
        value<uint64_t>(s.size());
        bytes_.append(s);
    }
    template <typename T>
    void vector(const std::vector<T>& v) {
        value<uint64_t>(v.size());
        bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    std::string& bytes() { return bytes_; }

private:
    std::string bytes_;
};

// Reads what ByteWriter wrote; a read past the end means a truncated payload.
class ByteReader {
public:
    ByteReader(const std::string& bytes, const std::string& file) : bytes_(bytes), file_(file) {}
    template <typename T>
    T value() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return v;
    }
    std::string text() {
        const auto size = value<uint64_t>();
        need(size);
        std::string s = bytes_.substr(at_, size);
        at_ += size;
        return s;
    }
    template <typename T>
    std::vector<T> vector() {
        const auto size = value<uint64_t>();
        if (size > (bytes_.size() - at_) / sizeof(T)) fail();
        std::vector<T> v(size);
        if (size > 0)
            std::memcpy(v.data(), bytes_.data() + at_,
                        size * sizeof(T));  // an empty one's data() may be null
        at_ += size * sizeof(T);
        return v;
    }
    bool at_end() const { return at_ == bytes_.size(); }

private:
    void need(uint64_t count) {
        if (count > bytes_.size() - at_) fail();
    }
    [[noreturn]] void fail() const {
        throw std::runtime_error(fmt::format("checkpoint '{}' is corrupt: its contents end early", file_));
    }
    const std::string& bytes_;
    const std::string& file_;
    size_t at_ = 0;
};

void write_identity(ByteWriter& out, const RunIdentity& identity) {
    out.value<uint64_t>(identity.settings.size());
    for (const auto& [key, value] : identity.settings) {
        out.text(key);
        out.text(value);
    }
    out.value(identity.data_fingerprint);
    out.vector(identity.layer_sizes);
}

RunIdentity read_identity(ByteReader& in) {
    RunIdentity identity;
    const auto count = in.value<uint64_t>();
    for (uint64_t i = 0; i < count; ++i) {
        std::string key = in.text();
        identity.settings.emplace_back(key, in.text());
    }
    identity.data_fingerprint = in.value<uint64_t>();
    identity.layer_sizes = in.vector<int64_t>();
    return identity;
}

std::string layers_text(const std::vector<int64_t>& sizes) {
    return fmt::format("{}", fmt::join(sizes, "-"));
}

void check_identity(const std::string& file, const RunIdentity& saved, const RunIdentity& expected) {
    for (const auto& [key, value] : expected.settings) {
        std::string saved_value = "(absent)";
        for (const auto& entry : saved.settings)
            if (entry.first == key) saved_value = entry.second;
        if (saved_value != value)
            throw std::runtime_error(
                fmt::format("checkpoint '{}' belongs to another run: {} is '{}' there and '{}' here", file,
                            key, saved_value, value));
    }
    if (saved.data_fingerprint != expected.data_fingerprint)
        throw std::runtime_error(
            fmt::format("checkpoint '{}' belongs to another run: it was trained on other data "
                        "(fingerprint {:016x} there, {:016x} here)",
                        file, saved.data_fingerprint, expected.data_fingerprint));
    if (saved.layer_sizes != expected.layer_sizes)
        throw std::runtime_error(
            fmt::format("checkpoint '{}' belongs to another run: layer sizes {} there, {} here", file,
                        layers_text(saved.layer_sizes), layers_text(expected.layer_sizes)));
}

// Refuses a checkpoint for one field: "checkpoint '<file>' is invalid: <field> <problem>".
[[noreturn]] void invalid(const std::string& file, const std::string& field, const std::string& problem) {
    throw std::runtime_error(fmt::format("checkpoint '{}' is invalid: {} {}", file, field, problem));
}

// A float vector of the model's or the optimizer's: its length, then finite values
// (non-negative ones for Adam's mean of squared gradients).
void check_floats(const std::string& file, const char* field, const std::vector<float>& values, size_t count,
                  const std::string& what, bool non_negative = false) {
    if (values.size() != count)
        invalid(file, field, fmt::format("holds {} values; {} has {}", values.size(), what, count));
    for (size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i]) || (non_negative && values[i] < 0))
            invalid(file, fmt::format("{}[{}]", field, i),
                    fmt::format("is {}; expected a finite number{}", values[i], non_negative ? " >= 0" : ""));
}

void check_metric(const std::string& file, size_t row, const char* name, double value, double maximum,
                  bool nan_allowed = false) {
    if ((std::isnan(value) && nan_allowed) || (value >= 0 && value <= maximum)) return;
    invalid(file, fmt::format("history[{}].{}", row, name),
            fmt::format("is {}; expected a number from 0 to {}{}", value, maximum,
                        nan_allowed ? " (or nan, with one class in the test split)" : ""));
}

// Every field of a state against the run that resumes it and against each other. The
// writer (trainer.cpp) keeps these invariants: checkpoints are written at an epoch's end
// (batches_done 0) or after a batch that is not the epoch's last; one optimizer step per
// batch; the partial sums cover exactly the batches done of the epoch in progress.
void check_position(const std::string& file, const TrainingState& state, const ResumeBounds& bounds);
void check_epoch_in_progress(const std::string& file, const TrainingState& state, const ResumeBounds& bounds);
void check_optimizer(const std::string& file, const TrainingState& state, const ResumeBounds& bounds);
void check_history(const std::string& file, const TrainingState& state, Task task);

void check_state(const std::string& file, const TrainingState& state, const ResumeBounds& bounds) {
    check_position(file, state, bounds);
    check_epoch_in_progress(file, state, bounds);
    check_optimizer(file, state, bounds);
    check_history(file, state, bounds.task);
}

// Where the run stopped: epochs and batches done, and the shuffle stream there.
void check_position(const std::string& file, const TrainingState& state, const ResumeBounds& bounds) {
    if (bounds.train_rows < 1 || bounds.batch_size < 1 || bounds.batch_size > bounds.train_rows ||
        bounds.epochs < 0)
        throw std::invalid_argument(fmt::format("resume bounds of {} rows, batch {}, {} epochs are not a run",
                                                bounds.train_rows, bounds.batch_size, bounds.epochs));
    const int64_t batches = bounds.batches_per_epoch();
    if (state.epochs_done < 0 || state.epochs_done > bounds.epochs)
        invalid(file, "epochs_done",
                fmt::format("is {}; expected 0 to {} (train.epochs of this run)", state.epochs_done,
                            bounds.epochs));
    // An epoch's last batch ends the epoch: batches_done counts the ones before it.
    const bool finished = state.epochs_done == bounds.epochs;
    const int64_t last_batch = finished ? 0 : batches - 1;
    if (state.batches_done < 0 || state.batches_done > last_batch)
        invalid(
            file, "batches_done",
            finished
                ? fmt::format("is {}; expected 0 (all {} epochs of the run are done)", state.batches_done,
                              bounds.epochs)
                : fmt::format("is {}; expected 0 to {} (the batches done in epoch {} of {}, which has {})",
                              state.batches_done, last_batch, state.epochs_done + 1, bounds.epochs, batches));
    if (!RandomStream::is_state(state.epoch_start_random))
        invalid(file, "epoch_start_random",
                fmt::format(
                    "is not a state of the shuffle stream ({} characters; expected 313 decimal numbers, not "
                    "all zero)",
                    state.epoch_start_random.size()));
}

void check_epoch_in_progress(const std::string& file, const TrainingState& state,
                             const ResumeBounds& bounds) {
    // The epoch in progress: full batches so far (none is the last); at an epoch's end, the
    // whole epoch (or nothing before the first).
    const int64_t seen = state.batches_done > 0  ? state.batches_done * bounds.batch_size
                         : state.epochs_done > 0 ? bounds.train_rows
                                                 : 0;
    if (state.partial_seen != seen)
        invalid(file, "partial_seen",
                fmt::format("is {}; expected {} ({})", state.partial_seen, seen,
                            state.batches_done > 0
                                ? fmt::format("{} batches of {} rows done in epoch {}", state.batches_done,
                                              bounds.batch_size, state.epochs_done + 1)
                            : state.epochs_done > 0
                                ? fmt::format("the {} rows of epoch {}", bounds.train_rows, state.epochs_done)
                                : std::string("no batch done yet")));
    if (state.partial_correct < 0 || state.partial_correct > seen)
        invalid(file, "partial_correct",
                fmt::format("is {}; expected 0 to {} (partial_seen)", state.partial_correct, seen));
    // A sum of non-negative float32 batch losses times their rows.
    const double largest_sum =
        static_cast<double>(std::numeric_limits<float>::max()) * static_cast<double>(seen);
    if (!(state.partial_loss_sum >= 0 && state.partial_loss_sum <= largest_sum))
        invalid(file, "partial_loss_sum",
                fmt::format("is {}; expected a finite sum of losses from 0 to {:g}", state.partial_loss_sum,
                            largest_sum));
}

// The parameters and the optimizer's state: one step per batch trained.
void check_optimizer(const std::string& file, const TrainingState& state, const ResumeBounds& bounds) {
    const int64_t batches = bounds.batches_per_epoch();
    check_floats(file, "parameters", state.parameters, bounds.parameter_count, "the model");
    if (state.optimizer_kind != bounds.optimizer_kind)
        invalid(file, "optimizer_kind",
                fmt::format("is '{}'; this run's optimizer is '{}'", state.optimizer_kind,
                            bounds.optimizer_kind));
    int64_t steps = 0;
    if (__builtin_mul_overflow(state.epochs_done, batches, &steps) ||
        __builtin_add_overflow(steps, state.batches_done, &steps))
        invalid(file, "epochs_done",
                fmt::format("is {}; {} epochs of {} batches overflow the step count", state.epochs_done,
                            state.epochs_done, batches));
    if (state.optimizer_steps != steps)
        invalid(file, "optimizer_steps",
                fmt::format("is {}; expected {} (one per batch: {} epochs of {} batches, then {})",
                            state.optimizer_steps, steps, state.epochs_done, batches, state.batches_done));
    const bool adam = bounds.optimizer_kind == "adam";
    check_floats(file, "optimizer_first", state.optimizer_first, bounds.parameter_count,
                 adam ? "Adam's mean of gradients" : "SGD's velocity");
    check_floats(file, "optimizer_second", state.optimizer_second, adam ? bounds.parameter_count : 0,
                 adam ? "Adam's mean of squared gradients" : "SGD (no second moment)", true);
}

// One row per epoch done, each a plausible measurement (a regression's RMSE and MAE in
// test_accuracy and test_roc_auc: any finite number >= 0).
void check_history(const std::string& file, const TrainingState& state, Task task) {
    if (state.history.size() != static_cast<uint64_t>(state.epochs_done))
        invalid(file, "history",
                fmt::format("holds {} epochs; expected {} (epochs_done)", state.history.size(),
                            state.epochs_done));
    constexpr double kLargestLoss = std::numeric_limits<float>::max();
    for (size_t i = 0; i < state.history.size(); ++i) {
        const EpochMetrics& row = state.history[i];
        if (row.epoch != static_cast<int64_t>(i) + 1)
            invalid(file, fmt::format("history[{}].epoch", i),
                    fmt::format("is {}; expected {}", row.epoch, i + 1));
        check_metric(file, i, "train_loss", row.train_loss, kLargestLoss);
        check_metric(file, i, "train_accuracy", row.train_accuracy, 1);
        check_metric(file, i, "test_loss", row.test_loss, kLargestLoss);
        const bool regression = task == Task::kRegression;
        check_metric(file, i, "test_accuracy", row.test_accuracy, regression ? kLargestLoss : 1);
        check_metric(file, i, "test_roc_auc", row.test_roc_auc, regression ? kLargestLoss : 1, !regression);
    }
}

}  // namespace

std::string encode_checkpoint(const RunIdentity& identity, const TrainingState& state) {
    ByteWriter payload;
    write_identity(payload, identity);
    payload.value(state.epochs_done);
    payload.value(state.batches_done);
    payload.text(state.epoch_start_random);
    payload.value(state.partial_loss_sum);
    payload.value(state.partial_correct);
    payload.value(state.partial_seen);
    payload.vector(state.parameters);
    payload.text(state.optimizer_kind);
    payload.value(state.optimizer_steps);
    payload.vector(state.optimizer_first);
    payload.vector(state.optimizer_second);
    payload.vector(state.history);

    ByteWriter file;
    file.bytes().append(kMagic, sizeof(kMagic));
    file.value(kFormatVersion);
    file.value<uint64_t>(payload.bytes().size());
    file.bytes().append(payload.bytes());
    file.value(fnv1a(payload.bytes()));
    return std::move(file.bytes());
}

void write_checkpoint(const std::filesystem::path& path, const RunIdentity& identity,
                      const TrainingState& state) {
    write_file_atomically(path, encode_checkpoint(identity, state));
}

std::pair<RunIdentity, TrainingState> decode_checkpoint(const std::string& bytes, const std::string& file) {
    constexpr size_t kHeader = sizeof(kMagic) + sizeof(uint32_t) + sizeof(uint64_t);
    constexpr size_t kTrailer = sizeof(uint64_t);
    if (bytes.size() < kHeader || bytes.compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0)
        throw std::runtime_error(fmt::format("'{}' is not a training checkpoint (no NNPTRAIN header)", file));
    uint32_t version = 0;
    uint64_t payload_size = 0;
    std::memcpy(&version, bytes.data() + sizeof(kMagic), sizeof(version));
    std::memcpy(&payload_size, bytes.data() + sizeof(kMagic) + sizeof(version), sizeof(payload_size));
    if (version != kFormatVersion)
        throw std::runtime_error(
            fmt::format("checkpoint '{}' has format version {}; this program reads version {}", file, version,
                        kFormatVersion));
    // Compared without adding to payload_size, which may be any 64-bit value.
    if (bytes.size() - kHeader < kTrailer || payload_size != bytes.size() - kHeader - kTrailer)
        throw std::runtime_error(
            fmt::format("checkpoint '{}' is corrupt: {} bytes, its header announces a payload "
                        "of {} bytes",
                        file, bytes.size(), payload_size));
    const std::string payload = bytes.substr(kHeader, payload_size);
    uint64_t checksum = 0;
    std::memcpy(&checksum, bytes.data() + kHeader + payload_size, sizeof(checksum));
    if (checksum != fnv1a(payload))
        throw std::runtime_error(
            fmt::format("checkpoint '{}' is corrupt: its checksum does not match its contents", file));

    ByteReader reader(payload, file);
    std::pair<RunIdentity, TrainingState> contents;
    contents.first = read_identity(reader);
    TrainingState& state = contents.second;
    state.epochs_done = reader.value<int64_t>();
    state.batches_done = reader.value<int64_t>();
    state.epoch_start_random = reader.text();
    state.partial_loss_sum = reader.value<double>();
    state.partial_correct = reader.value<int64_t>();
    state.partial_seen = reader.value<int64_t>();
    state.parameters = reader.vector<float>();
    state.optimizer_kind = reader.text();
    state.optimizer_steps = reader.value<int64_t>();
    state.optimizer_first = reader.vector<float>();
    state.optimizer_second = reader.vector<float>();
    state.history = reader.vector<EpochMetrics>();
    if (!reader.at_end())
        throw std::runtime_error(
            fmt::format("checkpoint '{}' is corrupt: unexpected bytes after its contents", file));
    return contents;
}

TrainingState parse_checkpoint(const std::string& bytes, const std::string& file, const RunIdentity& expected,
                               const ResumeBounds& bounds) {
    auto [identity, state] = decode_checkpoint(bytes, file);
    check_identity(file, identity, expected);
    check_state(file, state, bounds);
    return std::move(state);
}

int64_t largest_checkpoint_bytes(const ResumeBounds& bounds) {
    // The parameters and two optimizer moments in float, a row of metrics per epoch, and
    // room for the header, the identity's settings and the shuffle stream's state.
    constexpr int64_t kFixedPart = int64_t{1} << 20;
    const auto parameters = static_cast<int64_t>(bounds.parameter_count);
    return kFixedPart + 3 * parameters * static_cast<int64_t>(sizeof(float)) +
           std::max<int64_t>(bounds.epochs, 0) * static_cast<int64_t>(sizeof(EpochMetrics));
}

TrainingState read_checkpoint(const std::filesystem::path& path, const RunIdentity& expected,
                              const ResumeBounds& bounds) {
    const std::string file = nnplug::escaped(path.string());
    // A FIFO, a device or a file larger than this run's checkpoint can be is refused before
    // anything is read or allocated.
    const std::string bytes = read_regular_file(path, largest_checkpoint_bytes(bounds), "checkpoint");
    return parse_checkpoint(bytes, file, expected, bounds);
}

}  // namespace train
