#include "log_line.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace nnplug::emu {

std::optional<LogLevel> parse_log_level(const std::string& name) {
    static const char* const names[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    if (name == "warning") return LogLevel::warn;
    for (int i = 0; i < 7; ++i)
        if (name == names[i]) return static_cast<LogLevel>(i);
    return std::nullopt;
}

void write_log_line(LogLevel level, const std::string& message) {
    static const char* const names[] = {"trace", "debug", "info", "warning", "error", "critical", "off"};
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::time_t seconds = system_clock::to_time_t(now);
    const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm local{};
    localtime_r(&seconds, &local);
    char stamp[16];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
    // One fprintf per line, so lines of concurrent streams do not interleave.
    std::fprintf(stderr, "[%s.%03lld] [nnplug] [%s] %s\n", stamp, static_cast<long long>(millis),
                 names[static_cast<int>(level)], message.c_str());
}

}  // namespace nnplug::emu
