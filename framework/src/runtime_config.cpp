#include "runtime_config.h"

#include <acl/acl_base.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>

#include "logging.h"
#include "spelling.h"

namespace nnplug {
namespace {

// Keys of the top level. `application` belongs to the host program (for example the
// training example's settings) and is not read by the runtime.
const std::vector<std::string> kTopLevelKeys = {"backend", "log_level", "plugin_paths", "allow_insecure_plugins",
                                                "backends", "application"};

// Thrown inside this file only, turned into a ConfigError at the boundary.
struct ParseFailure {
    std::string message;
};

std::string where(const std::string& file, const YAML::Mark& mark) {
    return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& key) {
    if (!node.IsScalar())
        throw ParseFailure{fmt::format("{}: key '{}' must be a single value", where(file, node.Mark()), key)};
    return node.Scalar();
}

void read_backend_options(const std::string& file, const YAML::Node& backends, RuntimeConfig& config) {
    if (!backends.IsMap())
        throw ParseFailure{fmt::format("{}: key 'backends' must map backend names to options",
                                       where(file, backends.Mark()))};
    for (const auto& entry : backends) {
        const std::string name = entry.first.Scalar();
        auto& options = config.backend_options[name];
        if (entry.second.IsNull()) continue;
        if (!entry.second.IsMap())
            throw ParseFailure{fmt::format("{}: key 'backends.{}' must map option names to values",
                                           where(file, entry.second.Mark()), name)};
        for (const auto& option : entry.second) {
            const std::string key = option.first.Scalar();
            options.push_back({key, scalar(file, option.second, "backends." + name + "." + key),
                               where(file, option.first.Mark())});
        }
    }
}

void read_document(const std::string& file, const YAML::Node& root, RuntimeConfig& config) {
    if (root.IsNull()) return;  // an empty file keeps every default
    if (!root.IsMap())
        throw ParseFailure{fmt::format("{}: the top level must be a mapping of keys to values",
                                       where(file, root.Mark()))};
    const auto folder = std::filesystem::absolute(file).parent_path();
    for (const auto& entry : root) {
        const std::string key = entry.first.Scalar();
        const YAML::Node& value = entry.second;
        if (key == "backend") {
            // A path is relative to this file, like plugin_paths, not to the working directory.
            config.backend = scalar(file, value, key);
            const std::filesystem::path path = config.backend;
            if (config.backend.find('/') != std::string::npos && path.is_relative())
                config.backend = (folder / path).string();
        } else if (key == "allow_insecure_plugins") {
            const std::string text = scalar(file, value, key);
            if (text != "true" && text != "false")
                throw ParseFailure{fmt::format("{}: key '{}' has value '{}'; expected true or false",
                                               where(file, value.Mark()), key, text)};
            config.allow_insecure_plugins = text == "true";
        } else if (key == "log_level") {
            config.log_level = scalar(file, value, key);
            if (!parse_log_level(config.log_level))
                throw ParseFailure{fmt::format(
                    "{}: key 'log_level' has value '{}'; expected trace, debug, info, warn, error or off",
                    where(file, value.Mark()), config.log_level)};
        } else if (key == "plugin_paths") {
            if (!value.IsSequence())
                throw ParseFailure{fmt::format("{}: key 'plugin_paths' must be a list of folders",
                                               where(file, value.Mark()))};
            for (const auto& item : value) {
                std::filesystem::path path = scalar(file, item, key);
                config.plugin_paths.push_back(path.is_absolute() ? path : folder / path);
            }
        } else if (key == "backends") {
            read_backend_options(file, value, config);
        } else if (key == "application") {
            // the host program's own section
        } else {
            throw ParseFailure{fmt::format("{}: unknown key '{}'{}", where(file, entry.first.Mark()),
                                           key, did_you_mean(key, kTopLevelKeys))};
        }
    }
}

}  // namespace

bool load_runtime_config(const std::filesystem::path& path, RuntimeConfig& config, ConfigError& error) {
    const std::string file = path.string();
    std::ifstream stream(path);
    if (!stream || std::filesystem::is_directory(path)) {
        error = {ACL_ERROR_INVALID_FILE, fmt::format("aclInit: cannot open config file '{}'", file)};
        return false;
    }
    RuntimeConfig parsed;
    parsed.source = file;
    try {
        read_document(file, YAML::Load(stream), parsed);
    } catch (const ParseFailure& failure) {
        error = {ACL_ERROR_PARSE_FILE, "aclInit: " + failure.message};
        return false;
    } catch (const YAML::Exception& exception) {
        error = {ACL_ERROR_PARSE_FILE, fmt::format("aclInit: {}: malformed YAML: {}",
                                                   where(file, exception.mark), exception.msg)};
        return false;
    }
    config = std::move(parsed);
    return true;
}

}  // namespace nnplug
