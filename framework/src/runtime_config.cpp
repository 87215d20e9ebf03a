#include "runtime_config.h"

#include <acl/acl_base.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <nnplug/escaped_text.h>
#include <nnplug/plugin.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>

#include "install_layout.h"
#include "logging.h"
#include "plugin_locator.h"
#include "spelling.h"
#include "yaml_document.h"

namespace nnplug {
namespace {

// Keys of the top level. `application` belongs to the host program (for example the
// training example's settings) and is not read by the runtime.
const std::vector<std::string> kTopLevelKeys = {"backend",   "ops",          "fallback",
                                                "log_level", "plugin_paths", "allow_insecure_plugins",
                                                "backends",  "application"};

// Thrown inside this file only, turned into a ConfigError at the boundary.
struct ParseFailure {
    std::string message;
};

std::string where(const std::string& file, const YAML::Mark& mark) {
    return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

// A value of the config. One holding a NUL (YAML's "\0") is refused: a backend path, a
// folder or an option handed on as a C string would end there and name something else
// ("libnnplug_cpu_tbb.so\0.txt" loaded libnnplug_cpu_tbb.so).
std::string scalar(const std::string& file, const YAML::Node& node, const std::string& key) {
    if (!node.IsScalar())
        throw ParseFailure{fmt::format("{}: key '{}' must be a single value", where(file, node.Mark()), key)};
    if (const size_t nul = node.Scalar().find('\0'); nul != std::string::npos)
        throw ParseFailure{
            fmt::format("{}: key '{}' has value '{}', which holds a NUL byte at byte {}; no name, "
                        "path or option may",
                        where(file, node.Mark()), key, brief(node.Scalar(), PATH_MAX), nul + 1)};
    return node.Scalar();
}

// YAML forbids a key twice in one mapping, but the parser keeps both; the later one would
// silently win here, or not, depending on which reader looks.
void refuse_repeated_keys(const std::string& file, const YAML::Node& mapping, const std::string& prefix) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& entry : mapping) {
        const std::string key = entry.first.Scalar();
        const auto [first, fresh] = seen.emplace(key, entry.first.Mark());
        if (!fresh)
            throw ParseFailure{fmt::format("{}: key '{}{}' appears twice (first at line {})",
                                           where(file, entry.first.Mark()), prefix, key,
                                           first->second.line + 1)};
    }
}

void read_backend_options(const std::string& file, const YAML::Node& backends, RuntimeConfig& config) {
    if (!backends.IsMap())
        throw ParseFailure{fmt::format("{}: key 'backends' must map backend names to options",
                                       where(file, backends.Mark()))};
    refuse_repeated_keys(file, backends, "backends.");
    for (const auto& entry : backends) {
        const std::string name = entry.first.Scalar();
        auto& options = config.backend_options[name];
        if (entry.second.IsNull()) continue;
        if (!entry.second.IsMap())
            throw ParseFailure{fmt::format("{}: key 'backends.{}' must map option names to values",
                                           where(file, entry.second.Mark()), name)};
        refuse_repeated_keys(file, entry.second, "backends." + name + ".");
        for (const auto& option : entry.second) {
            const std::string key = option.first.Scalar();
            options.push_back({key, scalar(file, option.second, "backends." + name + "." + key),
                               where(file, option.first.Mark())});
        }
    }
}

// A backend named by a path is relative to the config file, like plugin_paths, not to the
// working directory; a name (no '/') stays as written.
std::string backend_reference(const std::filesystem::path& folder, const std::string& text) {
    const std::filesystem::path path = text;
    if (text.find('/') != std::string::npos && path.is_relative()) return (folder / path).string();
    return text;
}

// ops: {aclnnName: backend, ...}, each name one of the ops this runtime has.
void read_op_routes(const std::string& file, const std::filesystem::path& folder, const YAML::Node& ops,
                    RuntimeConfig& config) {
    if (ops.IsNull()) return;
    if (!ops.IsMap())
        throw ParseFailure{
            fmt::format("{}: key 'ops' must map aclnn op names to backends", where(file, ops.Mark()))};
    refuse_repeated_keys(file, ops, "ops.");
    std::vector<std::string> known;
    for (int kind = 0; kind < NNPLUG_OP_KIND_COUNT; ++kind) known.emplace_back(nnplug_op_api_name(kind));
    for (const auto& entry : ops) {
        const std::string op = entry.first.Scalar();
        if (std::find(known.begin(), known.end(), op) == known.end())
            throw ParseFailure{fmt::format("{}: key 'ops' names '{}', which is not an op of this runtime{}",
                                           where(file, entry.first.Mark()), op, did_you_mean(op, known))};
        const std::string backend = scalar(file, entry.second, "ops." + op);
        if (backend.empty())
            throw ParseFailure{
                fmt::format("{}: key 'ops.{}' names no backend", where(file, entry.second.Mark()), op)};
        config.op_backends[op] = backend_reference(folder, backend);
    }
}

// The name a backend reference stands for: libnnplug_<name>.so for a path, else itself.
std::string backend_name_of(const std::string& reference) {
    if (reference.find('/') == std::string::npos) return reference;
    return backend_of_file_name(std::filesystem::path(reference).filename().string()).value_or(reference);
}

// Every section under `backends:` must be a backend this config could load: a misspelt one
// (cpu_tbbb) would otherwise be ignored, and its options with it.
void refuse_unknown_backend_sections(const std::string& file, const YAML::Node& backends,
                                     const RuntimeConfig& config) {
    std::vector<std::string> known = available_backends(plugin_search_path(config.plugin_paths));
    known.insert(known.end(), {"cpu_tbb", "atlas_emu", backend_name_of(config.backend)});
    if (!config.fallback.empty()) known.push_back(backend_name_of(config.fallback));
    for (const auto& [op, backend] : config.op_backends) known.push_back(backend_name_of(backend));
    for (const auto& entry : backends) {
        const std::string name = entry.first.Scalar();
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        std::sort(known.begin(), known.end());
        known.erase(std::unique(known.begin(), known.end()), known.end());
        throw ParseFailure{fmt::format(
            "{}: key 'backends.{}' names no backend: none is selected, routed to or on the plugin search "
            "path by that name{}",
            where(file, entry.first.Mark()), name, did_you_mean(name, known))};
    }
}

void read_document(const std::string& file, const YAML::Node& root, RuntimeConfig& config) {
    if (root.IsNull()) return;  // an empty file keeps every default
    if (!root.IsMap())
        throw ParseFailure{
            fmt::format("{}: the top level must be a mapping of keys to values", where(file, root.Mark()))};
    refuse_repeated_keys(file, root, "");
    const auto folder = std::filesystem::absolute(file).parent_path();
    for (const auto& entry : root) {
        const std::string key = entry.first.Scalar();
        const YAML::Node& value = entry.second;
        if (key == "backend") {
            const std::string backend = scalar(file, value, key);
            if (backend.empty())
                throw ParseFailure{
                    fmt::format("{}: key 'backend' names no backend", where(file, value.Mark()))};
            config.backend = backend_reference(folder, backend);
        } else if (key == "ops") {
            read_op_routes(file, folder, value, config);
        } else if (key == "fallback") {
            const std::string fallback = scalar(file, value, key);
            if (fallback.empty())
                throw ParseFailure{fmt::format("{}: key 'fallback' is empty; name a backend, or none",
                                               where(file, value.Mark()))};
            config.fallback = fallback == "none" ? "" : backend_reference(folder, fallback);
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
            throw ParseFailure{fmt::format("{}: unknown key '{}'{}", where(file, entry.first.Mark()), key,
                                           did_you_mean(key, kTopLevelKeys))};
        }
    }
    // After the loop: the sections are checked against every backend the file names.
    if (const YAML::Node backends = root["backends"]; backends && backends.IsMap())
        refuse_unknown_backend_sections(file, backends, config);
}

// The file's bytes, read from one descriptor after fstat shows a regular file of at most
// kMaxConfigBytes: a FIFO or a device would block or never end, a huge file would take
// seconds and gigabytes to parse.
bool read_config_text(const std::filesystem::path& path, std::string& text, ConfigError& error) {
    const std::string file = path.string();
    const int fd = open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        error = {ACL_ERROR_INVALID_FILE,
                 fmt::format("aclInit: cannot open config file '{}': {}", file, std::strerror(errno))};
        return false;
    }
    struct stat status {};
    const bool examined = fstat(fd, &status) == 0;
    if (!examined || !S_ISREG(status.st_mode)) {
        close(fd);
        error = {
            ACL_ERROR_INVALID_FILE,
            fmt::format("aclInit: config file '{}' is not a regular file (a folder, FIFO, socket or device)",
                        file)};
        return false;
    }
    if (status.st_size > static_cast<off_t>(kMaxConfigBytes)) {
        close(fd);
        error = {ACL_ERROR_INVALID_FILE,
                 fmt::format("aclInit: config file '{}' is {} bytes; a config is at most {}", file,
                             status.st_size, kMaxConfigBytes)};
        return false;
    }
    char buffer[65536];
    ssize_t got = 0;
    while ((got = read(fd, buffer, sizeof buffer)) > 0 && text.size() <= kMaxConfigBytes)
        text.append(buffer, static_cast<size_t>(got));
    close(fd);
    if (got < 0 || text.size() > kMaxConfigBytes) {
        error = {ACL_ERROR_INVALID_FILE,
                 fmt::format("aclInit: config file '{}' cannot be read whole (at most {} bytes)", file,
                             kMaxConfigBytes)};
        return false;
    }
    return true;
}

}  // namespace

bool load_runtime_config(const std::filesystem::path& path, RuntimeConfig& config, ConfigError& error) {
    const std::string file = path.string();
    std::string text;
    if (!read_config_text(path, text, error)) return false;
    RuntimeConfig parsed;
    parsed.source = file;
    try {
        const YamlDocument document = load_first_yaml_document(text);
        if (document.second_start)
            throw ParseFailure{fmt::format("{}: a second YAML document ('---'); a config is one document",
                                           where(file, *document.second_start))};
        read_document(file, document.root, parsed);
    } catch (const ParseFailure& failure) {
        error = {ACL_ERROR_PARSE_FILE, "aclInit: " + failure.message};
        return false;
    } catch (const YAML::Exception& exception) {
        error = {ACL_ERROR_PARSE_FILE,
                 fmt::format("aclInit: {}: malformed YAML: {}", where(file, exception.mark), exception.msg)};
        return false;
    }
    config = std::move(parsed);
    return true;
}

namespace {

const char* environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

// Which file to read: the argument, $NNPLUG_CONFIG, the installed default, or none.
std::optional<std::filesystem::path> config_file(const char* argument) {
    if (argument != nullptr && *argument != '\0') return std::filesystem::path(argument);
    if (const char* from_environment = environment("NNPLUG_CONFIG"))
        return std::filesystem::path(from_environment);
    const auto bundled = bundled_default_config();
    if (std::filesystem::exists(bundled)) return bundled;
    return std::nullopt;
}

}  // namespace

bool load_effective_config(const char* argument, RuntimeConfig& config, ConfigError& error) {
    RuntimeConfig effective;
    if (const auto file = config_file(argument))
        if (!load_runtime_config(*file, effective, error)) return false;
    if (const char* backend = environment("NNPLUG_BACKEND")) effective.backend = backend;
    if (const char* level = environment("NNPLUG_LOG_LEVEL")) effective.log_level = level;
    if (const char* insecure = environment("NNPLUG_ALLOW_INSECURE_PLUGINS")) {
        const std::string_view value = insecure;
        if (value != "1" && value != "0" && value != "true" && value != "false") {
            error = {
                ACL_ERROR_INVALID_PARAM,
                fmt::format("aclInit: NNPLUG_ALLOW_INSECURE_PLUGINS is '{}'; expected 1, 0, true or false",
                            value)};
            return false;
        }
        effective.allow_insecure_plugins = value == "1" || value == "true";
    }
    if (!parse_log_level(effective.log_level)) {
        error = {ACL_ERROR_INVALID_PARAM,
                 fmt::format("aclInit: log level '{}' is not one of trace, debug, info, warn, error, off",
                             effective.log_level)};
        return false;
    }
    config = std::move(effective);
    return true;
}

}  // namespace nnplug
