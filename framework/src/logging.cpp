#include "logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace nnplug {

spdlog::logger& log() {
    // Not registered globally, so a host program's own spdlog setup is left alone.
    static auto logger = [] {
        auto created = std::make_shared<spdlog::logger>(
            "nnplug", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
        created->set_pattern("[%H:%M:%S.%e] [nnplug] [%^%l%$] %v");
        created->set_level(spdlog::level::warn);
        return created;
    }();
    return *logger;
}

std::optional<spdlog::level::level_enum> parse_log_level(const std::string& name) {
    if (name == "warning") return spdlog::level::warn;
    const auto level = spdlog::level::from_str(name);
    // from_str answers "off" for anything it does not know.
    if (level == spdlog::level::off && name != "off") return std::nullopt;
    return level;
}

}  // namespace nnplug
