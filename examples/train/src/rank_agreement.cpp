#include "rank_agreement.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <nnplug/escaped_text.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "communicator.h"
#include "safe_file.h"

namespace train {
namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL, kFnvPrime = 0x100000001b3ULL;

uint64_t fnv1a(const char* bytes, size_t count, uint64_t hash = kFnvOffset) {
    for (size_t i = 0; i < count; ++i) hash = (hash ^ static_cast<unsigned char>(bytes[i])) * kFnvPrime;
    return hash;
}

// A file's size and FNV-1a hash, read in pieces; what names it in messages ("data file").
std::pair<int64_t, uint64_t> file_digest(const std::filesystem::path& path, const char* what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error(fmt::format("cannot open {} '{}': {}", what, nnplug::escaped(path.string()),
                                             std::strerror(errno)));
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
        ::close(fd);
        throw std::runtime_error(
            fmt::format("{} '{}' is not a regular file", what, nnplug::escaped(path.string())));
    }
    std::vector<char> buffer(1 << 20);
    uint64_t hash = kFnvOffset;
    int64_t size = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int error = errno;
            ::close(fd);
            throw std::runtime_error(fmt::format("cannot read {} '{}': {}", what,
                                                 nnplug::escaped(path.string()), std::strerror(error)));
        }
        if (n == 0) break;
        hash = fnv1a(buffer.data(), static_cast<size_t>(n), hash);
        size += n;
    }
    ::close(fd);
    return {size, hash};
}

std::string joined(const SettingLines& lines) {
    std::string text;
    for (const auto& [key, value] : lines) text += key + '\n' + value + '\n';
    return text;
}

SettingLines split_lines(const char* bytes, size_t count) {
    SettingLines lines;
    size_t at = 0;
    const auto next = [&] {
        const char* end = static_cast<const char*>(std::memchr(bytes + at, '\n', count - at));
        const size_t length = end ? static_cast<size_t>(end - (bytes + at)) : count - at;
        std::string field(bytes + at, length);
        at += length + 1;
        return field;
    };
    while (at < count) {
        std::string key = next();
        std::string value = at < count ? next() : std::string();
        lines.emplace_back(std::move(key), std::move(value));
    }
    return lines;
}

}  // namespace

SettingLines effective_settings(const TrainSettings& settings, const std::string& backend, int processes,
                                const std::optional<std::filesystem::path>& resume_from) {
    SettingLines lines = trajectory_settings(settings);
    lines.emplace_back("backend", backend);
    lines.emplace_back("processes", fmt::format("{}", processes));
    lines.emplace_back("train.epochs", fmt::format("{}", settings.epochs));
    lines.emplace_back("checkpoint.every", fmt::format("{}", settings.checkpoint_every));
    lines.emplace_back("data.format", settings.data_format);
    if (!settings.synthetic) {
        const auto [size, hash] = file_digest(settings.data_path, "data file");
        lines.emplace_back("data.file_size", fmt::format("{} bytes", size));
        lines.emplace_back("data.file_hash", fmt::format("fnv1a {:016x}", hash));
    }
    // Ranks that resume from different states (or only some of them resuming) would
    // combine steps of different models.
    std::string resumed = "none";
    if (resume_from) {
        const auto [size, hash] = file_digest(*resume_from, "checkpoint");
        resumed = fmt::format("{} bytes, fnv1a {:016x}", size, hash);
    }
    lines.emplace_back("resume.checkpoint", resumed);
    std::sort(lines.begin(), lines.end());
    return lines;
}

namespace {

// A YAML node as one line of flow text (lines are newline-separated).
std::string flow_text(const YAML::Node& node) {
    YAML::Node flow = YAML::Clone(node);
    flow.SetStyle(YAML::EmitterStyle::Flow);
    YAML::Emitter text;
    text << flow;
    std::string value = text.c_str();
    std::replace(value.begin(), value.end(), '\n', ' ');
    return value;
}

// Backend options that change no byte a rank computes: how many host threads, how work is
// split among them, what is logged and traced, and the emulated bandwidth (only the time
// estimate uses it). Any other option (an emulated SoC, its cores or Unified Buffer, a
// third-party plugin's own) may, so the ranks compare it.
bool changes_no_result(const std::string& option) {
    static const char* const kExempt[] = {"threads",   "grain", "host_threads",
                                          "log_level", "trace", "bandwidth_gbps"};
    return std::find(std::begin(kExempt), std::end(kExempt), option) != std::end(kExempt);
}

}  // namespace

SettingLines runtime_settings(const ConfigDocument& document) {
    SettingLines lines;
    const auto top = [&](const char* key) {
        return document.root.IsMap() ? document.root[key] : YAML::Node();
    };
    for (const char* key : {"ops", "fallback"}) {
        const YAML::Node node = top(key);
        lines.emplace_back(key, node ? flow_text(node) : "(none)");
    }
    if (const YAML::Node backends = top("backends"); backends && backends.IsMap())
        for (const auto& backend : backends) {
            const std::string name = backend.first.Scalar();
            if (!backend.second.IsMap()) {
                lines.emplace_back("backends." + name, flow_text(backend.second));
                continue;
            }
            for (const auto& option : backend.second)
                if (!changes_no_result(option.first.Scalar()))
                    lines.emplace_back("backends." + name + "." + option.first.Scalar(),
                                       flow_text(option.second));
        }
    std::sort(lines.begin(), lines.end());
    return lines;
}

std::string settings_disagreement(const std::vector<SettingLines>& per_rank) {
    std::set<std::string> keys;
    std::vector<std::map<std::string, std::string>> values;
    for (const SettingLines& lines : per_rank) {
        values.emplace_back(lines.begin(), lines.end());
        for (const auto& line : lines) keys.insert(line.first);
    }
    const auto value_on = [&](size_t rank, const std::string& key) -> std::optional<std::string> {
        const auto found = values[rank].find(key);
        if (found == values[rank].end()) return std::nullopt;
        return found->second;
    };
    std::vector<std::string> differences;
    for (const std::string& key : keys) {
        bool same = true;
        std::vector<std::string> shown;
        for (size_t r = 0; r < values.size(); ++r) {
            const std::optional<std::string> value = value_on(r, key);
            same = same && value == value_on(0, key);
            shown.push_back(fmt::format("rank {}: {}", r, value ? nnplug::escaped(*value) : "(none)"));
        }
        if (!same)
            differences.push_back(fmt::format("{} ({})", nnplug::escaped(key), fmt::join(shown, ", ")));
    }
    return fmt::format("{}", fmt::join(differences, "; "));
}

void agree_on_settings(Communicator& communicator, const SettingLines& lines) {
    const int ranks = communicator.size();
    if (ranks == 1) return;
    const std::string text = joined(lines);
    const uint64_t mine[2] = {fnv1a(text.data(), text.size()), text.size()};
    std::vector<uint64_t> all(2 * static_cast<size_t>(ranks));
    communicator.all_gather(mine, sizeof(mine), all.data(),
                            std::vector<int64_t>(static_cast<size_t>(ranks), sizeof(mine)));
    bool same = true;
    for (size_t r = 1; r < static_cast<size_t>(ranks); ++r)
        same = same && all[2 * r] == all[0] && all[2 * r + 1] == all[1];
    if (same) return;
    // Every process saw the same hashes: all exchange their lines to name what differs.
    std::vector<int64_t> counts;
    int64_t total = 0;
    for (size_t r = 0; r < static_cast<size_t>(ranks); ++r)
        total += counts.emplace_back(static_cast<int64_t>(all[2 * r + 1]));
    std::string received(static_cast<size_t>(total), '\0');
    communicator.all_gather(text.data(), static_cast<int64_t>(text.size()), received.data(), counts);
    std::vector<SettingLines> per_rank;
    size_t offset = 0;
    for (const int64_t count : counts) {
        per_rank.push_back(split_lines(received.data() + offset, static_cast<size_t>(count)));
        offset += static_cast<size_t>(count);
    }
    throw SettingsMismatch("the ranks do not run the same settings: " + settings_disagreement(per_rank));
}

}  // namespace train
