#include "logging.h"

#include <nnplug/escaped_text.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>
#include <string>
#include <string_view>

namespace nnplug {
namespace {

// Writes each message with the bytes outside printable ASCII escaped and its length bounded:
// log lines quote paths, config values and plugin text, and each must stay one line of a few
// KiB that cannot move the cursor.
class EscapingSink : public spdlog::sinks::sink {
public:
    explicit EscapingSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}
    void log(const spdlog::details::log_msg& message) override {
        const std::string text =
            bounded_line(std::string_view(message.payload.data(), message.payload.size()));
        spdlog::details::log_msg copy = message;
        copy.payload = text;
        inner_->log(copy);
    }
    void flush() override { inner_->flush(); }
    void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
    void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
        inner_->set_formatter(std::move(formatter));
    }

private:
    std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

spdlog::logger& log() {
    // Not registered globally, so a host program's own spdlog setup is left alone.
    static auto logger = [] {
        auto created = std::make_shared<spdlog::logger>(
            "nnplug",
            std::make_shared<EscapingSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
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
