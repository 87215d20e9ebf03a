#include "chrome_trace.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

namespace nnplug::emu {

double host_microseconds() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

std::string json_number(double value) {
    if (!std::isfinite(value)) return "null";
    char text[40];
    // Fixed point for the values a trace holds (microseconds); exponent form past 1e15, so
    // that no value takes more than 24 characters.
    std::snprintf(text, sizeof text, std::fabs(value) < 1e15 ? "%.3f" : "%.17g", value);
    return text;
}

std::string json_escape(const std::string& s) {
    std::string escaped;
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            escaped += '\\';
            escaped += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            // A byte outside ASCII as its Latin-1 character: the file stays valid UTF-8.
            char code[8];
            std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned char>(c));
            escaped += code;
        } else {
            escaped += c;
        }
    }
    return escaped;
}

ChromeTrace::ChromeTrace(std::string path, std::string device_name)
    : path_(std::move(path)), device_name_(std::move(device_name)), origin_us_(host_microseconds()) {}

void ChromeTrace::add(int track, const std::string& name, double begin_us, double end_us,
                      const std::string& args) {
    std::lock_guard lock(mutex_);
    if (events_.size() >= kMaxEvents) {
        ++dropped_;
        return;
    }
    events_.push_back({track, name, begin_us - origin_us_, end_us - begin_us, args});
    dirty_ = true;
}

void ChromeTrace::stream_event(int stream, const std::string& name, double begin_us, double end_us,
                               const std::string& args) {
    add(stream, name, begin_us, end_us, args);
}

void ChromeTrace::core_event(int core, const std::string& name, double begin_us, double end_us,
                             const std::string& args) {
    add(kCoreTrackBase + core, name, begin_us, end_us, args);
}

namespace {

// Replaces path with text through a fresh temporary beside it (mkstemp: O_CREAT | O_EXCL,
// an unpredictable name), fsynced and renamed over path: a link planted at path or at any
// temporary name is never followed, and a reader never sees half a file.
bool replace_file(const std::string& path, const std::string& text) {
    std::string temporary = path + ".XXXXXX";
    const int fd = mkstemp(temporary.data());
    if (fd < 0) return false;
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n <= 0) break;
        written += static_cast<size_t>(n);
    }
    const bool whole = written == text.size() && fsync(fd) == 0;
    const bool closed = close(fd) == 0;
    if (!whole || !closed || rename(temporary.c_str(), path.c_str()) != 0) {
        const int reason = errno;
        unlink(temporary.c_str());
        errno = reason;
        return false;
    }
    return true;
}

}  // namespace

bool ChromeTrace::write(std::string& error) {
    std::lock_guard lock(mutex_);
    if (!dirty_) return true;
    std::ostringstream file;
    file << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    file << "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\""
         << json_escape(device_name_) << "\"}}";
    std::set<int> tracks;
    for (const auto& event : events_) tracks.insert(event.track);
    for (const int track : tracks) {
        const std::string name = track >= kCoreTrackBase ? "core " + std::to_string(track - kCoreTrackBase)
                                                         : "stream " + std::to_string(track);
        file << ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" << track
             << ",\"name\":\"thread_name\",\"args\":{\"name\":\"" << name << "\"}}";
        // Streams sort above cores.
        file << ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" << track
             << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << track << "}}";
    }
    for (const auto& event : events_) {
        file << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << event.track << ",\"name\":\""
             << json_escape(event.name) << "\"";
        file << ",\"ts\":" << json_number(event.begin_us) << ",\"dur\":" << json_number(event.duration_us);
        if (!event.args.empty()) file << ",\"args\":" << event.args;
        file << "}";
    }
    if (dropped_ > 0)
        file << ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_labels\",\"args\":{\"labels\":\""
             << dropped_ << " events dropped after the first " << kMaxEvents << "\"}}";
    file << "\n]}\n";
    if (!replace_file(path_, file.str())) {
        error = "cannot write trace file '" + path_ + "': " + std::strerror(errno);
        return false;
    }
    dirty_ = false;
    return true;
}

}  // namespace nnplug::emu
