// libFuzzer target: atlas_emu's Chrome trace (chrome_trace.h) and the options that shape it.
//
// The input is read front to back (past its end every byte reads 0). Byte 0 picks a part:
//   even  the writer: a device name (a length byte, its bytes), then up to 64 events, each a
//         kind byte (% 4: stream event, core event, an elementwise kernel's statistics, a
//         class kernel's), a track (int16), a name (length byte, bytes), begin and end (raw
//         doubles: NaN, infinities, 1e-300 and 1e300 included) and the statistics' numbers
//         (raw int64s and a raw double for the estimated device time)
//   odd   the plugin: up to 7 options (a key byte picks one of atlas_emu's keys or an unknown
//         one; a value byte picks arbitrary bytes or a number, whole or not, in or out of the
//         key's range), then create() with a trace file, a copy on a stream, and destroy(),
//         which writes the trace
//
// The contract checked: every trace file is JSON (nlohmann::json parses it) whose events
// hold what was added (the names as written, bytes outside ASCII as their Latin-1
// characters; times numbers, or null for an infinity or NaN), and no line of it is longer
// than its name's escapes and a few hundred bytes; an option given as a number outside its
// range is refused with a message naming the option and both bounds.
#include <dlfcn.h>
#include <nnplug/plugin.h>
#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chrome_trace.h"
#include "trace_statistics.h"

namespace {

namespace fs = std::filesystem;
using nnplug::emu::ChromeTrace;

[[noreturn]] void broken(const std::string& what) {
    std::fprintf(stderr, "fuzz_trace: contract broken: %s\n", what.c_str());
    std::abort();
}

class Input {
public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
    template <typename T>
    T raw() {
        unsigned char bytes[sizeof(T)];
        for (auto& b : bytes) b = byte();
        T value;
        std::memcpy(&value, bytes, sizeof value);
        return value;
    }
    std::string text() {
        const size_t length = byte();
        std::string s;
        for (size_t i = 0; i < length; ++i) s += static_cast<char>(byte());
        return s;
    }
    bool done() const { return at_ >= size_; }

private:
    const uint8_t* data_;
    size_t size_;
    size_t at_ = 0;
};

const fs::path& scratch() {
    static const fs::path folder = [] {
        std::string pattern = (fs::temp_directory_path() / "nnplug-fuzz-trace.XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) broken("mkdtemp failed");
        return fs::path(pattern);
    }();
    return folder;
}

void remove_scratch() {
    std::error_code ignored;
    fs::remove_all(scratch(), ignored);
}

// The text json_escape promises: each byte as the character of that code point (Latin-1).
std::string as_latin1(const std::string& bytes) {
    std::string utf8;
    for (const char c : bytes) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x80) {
            utf8 += c;
        } else {
            utf8 += static_cast<char>(0xc0 | (b >> 6));
            utf8 += static_cast<char>(0x80 | (b & 0x3f));
        }
    }
    return utf8;
}

// The trace file parsed, after checking that no line is longer than `longest`.
nlohmann::json read_trace(const fs::path& path, size_t longest) {
    std::ifstream in(path, std::ios::binary);
    if (!in) broken("no trace file at " + path.string());
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.size() > longest)
            broken("a trace line of " + std::to_string(line.size()) + " bytes: " + line.substr(0, 300));
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        broken(std::string("the trace is not JSON: ") + error.what() + "\n" + text.substr(0, 2000));
    }
}

bool near(const nlohmann::json& written, double expected) {
    if (!std::isfinite(expected)) return written.is_null();
    if (!written.is_number()) return false;
    // Three decimals below 1e15, 17 significant digits above.
    const double tolerance = std::max(0.0006, std::fabs(expected) * 1e-15);
    return std::fabs(written.get<double>() - expected) <= tolerance;
}

struct Added {
    std::string name;
    double begin_us, end_us;
    bool statistics;      // args from statistics_json, whose device time is checked
    int64_t bytes_moved;  // args' bytesMoved (bytes for a copy, tiles for a core)
    double device_us;
};

// Statistics args from the input's numbers, as the plugin builds them.
std::string statistics_args(Input& in, int kind, Added& added) {
    added.bytes_moved = in.raw<int64_t>();
    if (kind == 2) {
        nnplug::emu::ElementwiseTiling tiling;
        tiling.block_dim = in.raw<int32_t>();
        tiling.tiles_per_core = in.raw<int64_t>();
        tiling.tile_elements = in.raw<int64_t>();
        tiling.ub_bytes = in.raw<int64_t>();
        tiling.workspace_bytes = in.raw<uint64_t>();
        added.device_us = in.raw<double>();
        added.statistics = true;
        return nnplug::emu::statistics_json(tiling, added.bytes_moved, added.device_us);
    }
    nnplug::emu::ClassTiling tiling;
    tiling.block_dim = in.raw<int32_t>();
    tiling.rows_per_core = in.raw<int64_t>();
    tiling.tile_elements = in.raw<int64_t>();
    tiling.tiles_per_row = in.raw<int64_t>();
    tiling.ub_bytes = in.raw<int64_t>();
    return nnplug::emu::class_statistics_json(tiling, added.bytes_moved);
}

void check_event(const nlohmann::json& event, const Added& added) {
    if (event.value("name", std::string()) != as_latin1(added.name))
        broken("event name " + event.value("name", std::string("(none)")) + " for " + as_latin1(added.name));
    if (!event.contains("ts") || (event["ts"].is_null() == std::isfinite(added.begin_us)))
        broken("ts of an event that began at " + std::to_string(added.begin_us) + ": " + event.dump());
    if (!event.contains("dur") || !near(event["dur"], added.end_us - added.begin_us))
        broken("dur of " + std::to_string(added.end_us - added.begin_us) + " written as " + event.dump());
    const auto& args = event.at("args");
    if (!args.is_object()) broken("args not an object: " + event.dump());
    for (const char* key : {"bytes", "tiles", "bytesMoved"})
        if (args.contains(key) && args[key] != added.bytes_moved)
            broken(std::string(key) + " " + std::to_string(added.bytes_moved) + " written as " + args.dump());
    if (added.statistics && !near(args.at("estimatedDeviceUs"), added.device_us))
        broken("estimatedDeviceUs " + std::to_string(added.device_us) + " written as " + args.dump());
}

// Events straight into a ChromeTrace, then its file checked against them.
void fuzz_writer(Input& in) {
    const std::string device = in.text();
    const fs::path path = scratch() / "writer.json";
    ChromeTrace trace(path.string(), device);
    std::vector<Added> added;
    while (!in.done() && added.size() < 64) {
        const int kind = in.byte() % 4;
        const int track = in.raw<int16_t>();
        Added event{};  // read field by field: the input's order
        event.name = in.text();
        event.begin_us = in.raw<double>();
        event.end_us = in.raw<double>();
        std::string args;
        if (kind < 2) {
            event.bytes_moved = in.raw<int64_t>();
            args = std::string(kind == 0 ? "{\"bytes\":" : "{\"tiles\":") +
                   std::to_string(event.bytes_moved) + "}";
        } else {
            args = statistics_args(in, kind, event);
        }
        if (kind == 1)
            trace.core_event(track, event.name, event.begin_us, event.end_us, args);
        else
            trace.stream_event(track, event.name, event.begin_us, event.end_us, args);
        added.push_back(event);
    }
    std::string error;
    if (!trace.write(error)) broken("write failed: " + error);
    if (added.empty()) return;  // nothing to write: no file
    const nlohmann::json json = read_trace(path, 6 * 255 + 512);
    size_t next = 0;
    for (const auto& event : json.at("traceEvents")) {
        if (event.at("ph") == "M" && event.at("name") == "process_name" &&
            event.at("args").at("name") != as_latin1(device))
            broken("device name written as " + event.dump());
        if (event.at("ph") != "X") continue;
        if (next == added.size()) broken("more events than were added");
        check_event(event, added[next++]);
    }
    if (next != added.size()) broken(std::to_string(next) + " events of " + std::to_string(added.size()));
    fs::remove(path);
}

// atlas_emu's numeric options and the ranges its documentation gives them.
struct NumericOption {
    const char* key;
    double minimum, maximum;
    bool whole;
    const char* bounds;  // how the refusal states the range
    double cheap;        // an in-range value used instead, where a large one costs memory or threads
};
const NumericOption kNumeric[] = {
    {"devices", 1, 64, true, "[1, 64]", 1},
    {"vector_cores", 0, 4096, true, "[0, 4096]", 0},
    {"ub_kib", 0, 1 << 20, true, "[0, 1048576]", 0},
    {"memory_mib", 0, 1 << 30, true, "[0, 1073741824]", 64},
    {"bandwidth_gbps", 0.01, 1e6, false, "from 0.01 to 1e+06", 0},
    {"host_threads", 0, 1024, true, "[0, 1024]", 2},
    {"tile_elements", 0, double(1ll << 40), true, "[0, 1099511627776]", 0},
};
const char* const kOtherKeys[] = {"soc", "check_inputs", "log_level", "unknown"};

const nnplug_plugin& atlas_emu() {
    static const nnplug_plugin* plugin = [] {
        void* library = dlopen(NNPLUG_ATLAS_EMU_PLUGIN, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (library == nullptr) broken(std::string("cannot load atlas_emu: ") + dlerror());
        const auto entry = reinterpret_cast<nnplug_plugin_entry_fn>(dlsym(library, NNPLUG_PLUGIN_ENTRY_NAME));
        if (entry == nullptr) broken("atlas_emu has no entry");
        return entry();
    }();
    return *plugin;
}

// One option from the input; `refusal` receives what a refusal must say when the value is a
// number out of its option's range, `known` is false when the input cannot tell.
std::pair<std::string, std::string> fuzzed_option(Input& in, std::vector<std::string>& refusal, bool& known) {
    const size_t choice = in.byte() % (std::size(kNumeric) + std::size(kOtherKeys));
    if (choice >= std::size(kNumeric)) {
        known = false;
        return {kOtherKeys[choice - std::size(kNumeric)], in.text()};
    }
    const NumericOption& option = kNumeric[choice];
    const uint8_t how = in.byte();
    if (how % 2 == 0) {
        known = false;
        return {option.key, in.text()};
    }
    // A number: whole (an int32), or a raw double printed in full.
    const double value = how % 4 == 1 ? double(in.raw<int32_t>()) : in.raw<double>();
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    const bool in_range = std::isfinite(value) && value >= option.minimum && value <= option.maximum &&
                          (!option.whole || value == std::floor(value));
    if (!std::isfinite(value) || (option.whole && value != std::floor(value))) known = false;
    if (in_range) {
        if (value > option.cheap && option.cheap > 0) std::snprintf(text, sizeof text, "%g", option.cheap);
    } else if (!(std::string(option.key) == "bandwidth_gbps" && value == 0)) {
        if (refusal.empty()) refusal = {option.key, option.bounds};
    }
    return {option.key, text};
}

// create() with fuzzed options and a trace file, a copy on a stream, destroy(): the trace
// written is JSON; a number out of range is refused with its bounds.
void fuzz_plugin(Input& in) {
    const fs::path path = scratch() / "plugin.json";
    std::vector<std::pair<std::string, std::string>> given{{"log_level", "off"}};
    std::vector<std::string> refusal;
    bool known = true;
    for (int count = in.byte() % 8; count > 0; --count) given.push_back(fuzzed_option(in, refusal, known));
    given.emplace_back("trace", path.string());
    std::vector<nnplug_option> options;
    for (const auto& [key, value] : given) options.push_back({key.c_str(), value.c_str()});
    const nnplug_plugin& plugin = atlas_emu();
    void* ctx = nullptr;
    if (plugin.create(options.data(), options.size(), 0, &ctx) != NNPLUG_OK) {
        const std::string error = plugin.last_error(nullptr);
        if (known && !refusal.empty() &&
            (error.find(refusal[0]) == std::string::npos || error.find(refusal[1]) == std::string::npos))
            broken("option " + refusal[0] + " refused without its bounds " + refusal[1] + ": " + error);
        return;
    }
    if (known && !refusal.empty()) broken("option " + refusal[0] + " out of " + refusal[1] + " accepted");
    void* stream = nullptr;
    void* device = nullptr;
    char host[64] = {};
    const nnplug_device_i& calls = *plugin.device;
    if (calls.stream_create(ctx, &stream) != NNPLUG_OK ||
        calls.malloc(ctx, sizeof host, &device) != NNPLUG_OK ||
        calls.memcpy_async(ctx, device, host, sizeof host, NNPLUG_MEMCPY_HOST_TO_DEVICE, stream) !=
            NNPLUG_OK ||
        calls.stream_synchronize(ctx, stream) != NNPLUG_OK)
        broken(std::string("a copy on a created context failed: ") + plugin.last_error(ctx));
    calls.stream_destroy(ctx, stream);
    calls.free(ctx, device);
    plugin.destroy(ctx);
    const nlohmann::json json = read_trace(path, 512);
    if (json.at("traceEvents").back().at("args").at("bytes") != sizeof host)
        broken("the copy's event: " + json.dump());
    fs::remove(path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // The plugin's own environment overrides would replace the fuzzed options.
    unsetenv("NNPLUG_TRACE");
    unsetenv("NNPLUG_LOG_LEVEL");
    atlas_emu();
    std::atexit(remove_scratch);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Input in(data, size);
    if (in.byte() % 2 == 0)
        fuzz_writer(in);
    else
        fuzz_plugin(in);
    return 0;
}
