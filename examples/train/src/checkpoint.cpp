#include "checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

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
        std::memcpy(v.data(), bytes_.data() + at_, size * sizeof(T));
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

std::string layers_text(const std::vector<int64_t>& sizes) { return fmt::format("{}", fmt::join(sizes, "-")); }

void check_identity(const std::string& file, const RunIdentity& saved, const RunIdentity& expected) {
    for (const auto& [key, value] : expected.settings) {
        std::string saved_value = "(absent)";
        for (const auto& entry : saved.settings)
            if (entry.first == key) saved_value = entry.second;
        if (saved_value != value)
            throw std::runtime_error(fmt::format(
                "checkpoint '{}' belongs to another run: {} is '{}' there and '{}' here", file, key, saved_value, value));
    }
    if (saved.data_fingerprint != expected.data_fingerprint)
        throw std::runtime_error(fmt::format("checkpoint '{}' belongs to another run: it was trained on other data "
                                             "(fingerprint {:016x} there, {:016x} here)",
                                             file, saved.data_fingerprint, expected.data_fingerprint));
    if (saved.layer_sizes != expected.layer_sizes)
        throw std::runtime_error(fmt::format("checkpoint '{}' belongs to another run: layer sizes {} there, {} here",
                                             file, layers_text(saved.layer_sizes), layers_text(expected.layer_sizes)));
}

[[noreturn]] void fail_errno(const std::string& what, const std::filesystem::path& path) {
    throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, path.string(), std::strerror(errno)));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
    const std::filesystem::path temporary = path.string() + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail_errno("create", temporary);
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            fail_errno("write", temporary);
        }
        written += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) {
        ::close(fd);
        fail_errno("fsync", temporary);
    }
    if (::close(fd) != 0) fail_errno("close", temporary);
    if (::rename(temporary.c_str(), path.c_str()) != 0) fail_errno("rename into place", path);
    // The rename itself is durable once the folder is synced.
    const auto folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder_fd >= 0) {
        ::fsync(folder_fd);
        ::close(folder_fd);
    }
}

void write_checkpoint(const std::filesystem::path& path, const RunIdentity& identity, const TrainingState& state) {
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
    write_file_atomically(path, file.bytes());
}

TrainingState read_checkpoint(const std::filesystem::path& path, const RunIdentity& expected) {
    const std::string file = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot open checkpoint '{}'", file));
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    constexpr size_t kHeader = sizeof(kMagic) + sizeof(uint32_t) + sizeof(uint64_t);
    if (bytes.size() < kHeader || bytes.compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0)
        throw std::runtime_error(fmt::format("'{}' is not a training checkpoint (no NNPTRAIN header)", file));
    uint32_t version = 0;
    uint64_t payload_size = 0;
    std::memcpy(&version, bytes.data() + sizeof(kMagic), sizeof(version));
    std::memcpy(&payload_size, bytes.data() + sizeof(kMagic) + sizeof(version), sizeof(payload_size));
    if (version != kFormatVersion)
        throw std::runtime_error(fmt::format("checkpoint '{}' has format version {}; this program reads version {}",
                                             file, version, kFormatVersion));
    if (bytes.size() != kHeader + payload_size + sizeof(uint64_t))
        throw std::runtime_error(fmt::format("checkpoint '{}' is corrupt: {} bytes, its header announces {}", file,
                                             bytes.size(), kHeader + payload_size + sizeof(uint64_t)));
    const std::string payload = bytes.substr(kHeader, payload_size);
    uint64_t checksum = 0;
    std::memcpy(&checksum, bytes.data() + kHeader + payload_size, sizeof(checksum));
    if (checksum != fnv1a(payload))
        throw std::runtime_error(fmt::format("checkpoint '{}' is corrupt: its checksum does not match its contents", file));

    ByteReader reader(payload, file);
    check_identity(file, read_identity(reader), expected);
    TrainingState state;
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
        throw std::runtime_error(fmt::format("checkpoint '{}' is corrupt: unexpected bytes after its contents", file));
    return state;
}

}  // namespace train
