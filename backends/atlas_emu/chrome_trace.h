// A Chrome trace-event JSON file of what the device did: one track per stream
// (each task from start to end) and one per emulated core (its share of each
// kernel). Perfetto and chrome://tracing open it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace nnplug::emu {

class ChromeTrace {
public:
    ChromeTrace(std::string path, std::string device_name);

    // Times are host microseconds (host_microseconds()); args is a JSON object or empty.
    void stream_event(int stream, const std::string& name, double begin_us, double end_us,
                      const std::string& args);
    void core_event(int core, const std::string& name, double begin_us, double end_us,
                    const std::string& args);

    // Rewrites the file if events arrived since the last write; false with a reason on failure.
    bool write(std::string& error);

    const std::string& path() const { return path_; }

private:
    struct Event {
        int track;
        std::string name;
        double begin_us;
        double duration_us;
        std::string args;
    };
    void add(int track, const std::string& name, double begin_us, double end_us, const std::string& args);

    static constexpr int kCoreTrackBase = 1000;  // core k is track 1000 + k; stream s is track s
    static constexpr size_t kMaxEvents = 1000000;

    const std::string path_;
    const std::string device_name_;
    const double origin_us_;
    std::mutex mutex_;
    std::vector<Event> events_;
    size_t dropped_ = 0;
    bool dirty_ = false;
};

// s with the characters JSON strings cannot hold escaped, and every byte outside ASCII as
// \u00XX, so that the trace is valid UTF-8 whatever s holds.
std::string json_escape(const std::string& s);

// A JSON number of at most 24 characters: fixed point with 3 decimals below 1e15, exponent
// form above; null for an infinity or NaN, which JSON has no number for.
std::string json_number(double value);

// Microseconds on the host clock the trace uses.
double host_microseconds();

}  // namespace nnplug::emu
