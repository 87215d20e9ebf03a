// atlas_emu: an emulated Ascend NPU. Device memory is a checked arena, streams
// are asynchronous FIFOs, kernels run on emulated AI cores through a Unified
// Buffer of the SoC's size. It runs CANN-style host code without an NPU and
// reports the mistakes the hardware would punish.
#include <nnplug/plugin.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "bce_kernel.h"
#include "bce_tiling.h"
#include "chrome_trace.h"
#include "core_pool.h"
#include "device_arena.h"
#include "device_stream.h"
#include "log_line.h"
#include "soc_profile.h"

namespace nnplug::emu {
namespace {

thread_local std::string recent_error;

nnplug_status fail(nnplug_status status, std::string message) {
    recent_error = std::move(message);
    return status;
}

std::string address(const void* pointer) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", pointer);
    return text;
}

struct EmuContext {
    SocProfile soc;
    DeviceLimits limits;
    KernelOptions kernel;
    LogLevel log_level = LogLevel::warn;
    std::unique_ptr<DeviceArena> arena;
    std::unique_ptr<CorePool> cores;
    std::unique_ptr<ChromeTrace> trace;  // null unless tracing

    std::mutex streams_mutex;
    std::unordered_map<void*, std::unique_ptr<DeviceStream>> streams;
    int next_stream_id = 1;

    bool logs(LogLevel level) const { return level >= log_level; }
};

EmuContext& as_context(void* ctx) { return *static_cast<EmuContext*>(ctx); }

constexpr nnplug_option_info kOptions[] = {
    {"soc", "Ascend910B", "SoC to emulate: Ascend910, Ascend910B or Ascend310P"},
    {"vector_cores", "0", "vector cores a kernel may use; 0 takes the SoC's count"},
    {"ub_kib", "0", "Unified Buffer per core in KiB; 0 takes the SoC's size"},
    {"memory_mib", "0", "device memory capacity in MiB; 0 takes the SoC's capacity"},
    {"bandwidth_gbps", "0", "device memory bandwidth in GB/s for the time estimate; 0 takes the SoC's"},
    {"host_threads", "0", "host threads that run the emulated cores; 0 uses every CPU"},
    {"tile_elements", "0", "elements per tile; 0 derives it from the UB size (set it to test a kernel's limits)"},
    {"check_inputs", "false", "report self values outside [0, 1] as a kernel error at synchronize"},
    {"log_level", "warn", "debug prints per-launch statistics; NNPLUG_LOG_LEVEL overrides"},
    {"trace", "", "file for a Chrome trace-event JSON of streams and cores; NNPLUG_TRACE overrides"},
};

bool parse_integer(const char* text, long long minimum, long long maximum, long long& value) {
    char* end = nullptr;
    errno = 0;
    value = std::strtoll(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' && value >= minimum && value <= maximum;
}

bool parse_number(const char* text, double& value) {
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text, &end);
    return errno == 0 && end != text && *end == '\0' && std::isfinite(value) && value >= 0;
}

bool parse_bool(const std::string& text, bool& value) {
    if (text == "true" || text == "on" || text == "yes" || text == "1") return value = true, true;
    if (text == "false" || text == "off" || text == "no" || text == "0") return value = false, true;
    return false;
}

const char* environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

// Reads the options into context; false with a one-line reason.
bool read_options(const nnplug_option* options, size_t count, EmuContext& context, long long& host_threads,
                  std::string& trace_path, std::string& error) {
    std::string soc = "Ascend910B";
    for (size_t i = 0; i < count; ++i)
        if (std::string(options[i].key) == "soc") soc = options[i].value;
    const auto profile = soc_profile(soc);
    if (!profile) {
        error = "option soc = '" + soc + "' is not an emulated SoC; choose one of";
        for (const auto& name : soc_names()) error += " " + name;
        return false;
    }
    context.soc = *profile;
    std::string level = "warn";
    for (size_t i = 0; i < count; ++i) {
        const std::string key = options[i].key;
        const char* value = options[i].value;
        long long whole = 0;
        double number = 0;
        const auto whole_at_least = [&](long long minimum, long long maximum) {
            if (parse_integer(value, minimum, maximum, whole)) return true;
            error = "option " + key + " = '" + value + "' is not a whole number in [" + std::to_string(minimum) +
                    ", " + std::to_string(maximum) + "]";
            return false;
        };
        if (key == "soc") {
            continue;
        } else if (key == "vector_cores") {
            if (!whole_at_least(0, 4096)) return false;
            if (whole > 0) context.soc.vector_cores = static_cast<int>(whole);
        } else if (key == "ub_kib") {
            if (!whole_at_least(0, 1 << 20)) return false;
            if (whole > 0) context.soc.ub_bytes = whole * 1024;
        } else if (key == "memory_mib") {
            if (!whole_at_least(0, 1ll << 30)) return false;
            if (whole > 0) context.soc.memory_bytes = whole * 1024 * 1024;
        } else if (key == "bandwidth_gbps") {
            if (!parse_number(value, number)) {
                error = "option bandwidth_gbps = '" + std::string(value) + "' is not a number >= 0";
                return false;
            }
            if (number > 0) context.soc.bandwidth_gbps = number;
        } else if (key == "host_threads") {
            if (!whole_at_least(0, 1024)) return false;
            host_threads = whole;
        } else if (key == "tile_elements") {
            if (!whole_at_least(0, 1ll << 40)) return false;
            context.limits.tile_elements = whole;
        } else if (key == "check_inputs") {
            if (!parse_bool(value, context.kernel.check_inputs)) {
                error = "option check_inputs = '" + std::string(value) + "' is not true or false";
                return false;
            }
        } else if (key == "log_level") {
            level = value;
        } else if (key == "trace") {
            trace_path = value;
        } else {
            error = "unknown option '" + key + "'";
            return false;
        }
    }
    if (const char* from_environment = environment("NNPLUG_LOG_LEVEL")) level = from_environment;
    const auto parsed = parse_log_level(level);
    if (!parsed) {
        error = "log level '" + level + "' is not one of trace, debug, info, warn, error, off";
        return false;
    }
    context.log_level = *parsed;
    if (const char* from_environment = environment("NNPLUG_TRACE")) trace_path = from_environment;
    return true;
}

nnplug_status create(const nnplug_option* options, size_t option_count, void** ctx, char* error,
                     size_t error_len) {
    try {
        auto context = std::make_unique<EmuContext>();
        long long host_threads = 0;
        std::string trace_path, reason;
        if (!read_options(options, option_count, *context, host_threads, trace_path, reason)) {
            std::snprintf(error, error_len, "%s", reason.c_str());
            return NNPLUG_ERR_INVALID_ARGUMENT;
        }
        context->limits.vector_cores = context->soc.vector_cores;
        context->limits.ub_bytes = context->soc.ub_bytes;
        context->kernel.ub_bytes = context->soc.ub_bytes;
        context->kernel.soc_name = context->soc.name.c_str();
        context->arena = std::make_unique<DeviceArena>(context->soc.memory_bytes);
        const int threads = host_threads > 0 ? static_cast<int>(host_threads)
                                             : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        context->cores = std::make_unique<CorePool>(threads);
        if (!trace_path.empty())
            context->trace = std::make_unique<ChromeTrace>(trace_path, "atlas_emu " + context->soc.name);
        *ctx = context.release();
        return NNPLUG_OK;
    } catch (const std::exception& exception) {
        std::snprintf(error, error_len, "%s", exception.what());
        return NNPLUG_ERR_OUT_OF_MEMORY;
    }
}

void write_trace(EmuContext& context) {
    std::string error;
    if (context.trace && !context.trace->write(error) && context.logs(LogLevel::warn))
        write_log_line(LogLevel::warn, "atlas_emu: " + error);
}

void destroy(void* ctx) {
    auto* context = static_cast<EmuContext*>(ctx);
    context->streams.clear();  // each waits for its pending work
    write_trace(*context);
    delete context;
}

const char* soc_name(void* ctx) { return as_context(ctx).soc.name.c_str(); }

uint32_t dtype_mask(void* ctx) {
    uint32_t mask = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16);
    if (as_context(ctx).soc.bfloat16) mask |= NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16);
    return mask;
}

const char* last_error(void*) { return recent_error.c_str(); }

// --- memory -------------------------------------------------------------------

nnplug_status device_malloc(void* ctx, size_t bytes, void** pointer) {
    std::string error;
    void* allocated = as_context(ctx).arena->allocate(bytes, error);
    if (allocated == nullptr) return fail(NNPLUG_ERR_OUT_OF_MEMORY, error);
    *pointer = allocated;
    return NNPLUG_OK;
}

nnplug_status device_free(void* ctx, void* pointer) {
    std::string error;
    if (!as_context(ctx).arena->release(pointer, error))
        return fail(NNPLUG_ERR_BAD_HANDLE, address(pointer) + ": " + error);
    return NNPLUG_OK;
}

const char* kind_name(int32_t kind) {
    switch (kind) {
    case NNPLUG_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case NNPLUG_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case NNPLUG_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    default: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    }
}

// Whether one side of a copy is where the kind says; else the reason.
bool check_side(const DeviceArena& arena, const char* side, const void* pointer, size_t bytes, bool device,
                int32_t kind, std::string& error) {
    if (device) {
        if (arena.in_live_block(pointer, bytes)) return true;
        error = std::string(side) + " " + address(pointer) +
                (arena.in_region(pointer) ? " is device memory but " + std::to_string(bytes) +
                                                " bytes from it are not inside one live aclrtMalloc block"
                                          : " is host memory") +
                ", yet kind " + kind_name(kind) + " needs device memory there";
        return false;
    }
    if (!arena.in_region(pointer)) return true;
    error = std::string(side) + " " + address(pointer) + " is device memory, yet kind " + kind_name(kind) +
            " needs host memory there";
    return false;
}

bool check_copy(const EmuContext& context, void* dst, const void* src, size_t bytes, int32_t kind,
                std::string& error) {
    const bool src_device = kind == NNPLUG_MEMCPY_DEVICE_TO_HOST || kind == NNPLUG_MEMCPY_DEVICE_TO_DEVICE;
    const bool dst_device = kind == NNPLUG_MEMCPY_HOST_TO_DEVICE || kind == NNPLUG_MEMCPY_DEVICE_TO_DEVICE;
    return check_side(*context.arena, "dst", dst, bytes, dst_device, kind, error) &&
           check_side(*context.arena, "src", src, bytes, src_device, kind, error);
}

nnplug_status device_memcpy(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind) {
    std::string error;
    if (!check_copy(as_context(ctx), dst, src, bytes, kind, error)) return fail(NNPLUG_ERR_INVALID_ARGUMENT, error);
    std::memmove(dst, src, bytes);
    return NNPLUG_OK;
}

nnplug_status device_memset(void* ctx, void* pointer, int32_t value, size_t bytes) {
    if (!as_context(ctx).arena->in_live_block(pointer, bytes))
        return fail(NNPLUG_ERR_INVALID_ARGUMENT, address(pointer) + " (" + std::to_string(bytes) +
                                                     " bytes) is not inside one live aclrtMalloc block");
    std::memset(pointer, value, bytes);
    return NNPLUG_OK;
}

// --- streams ------------------------------------------------------------------

DeviceStream* find_stream(EmuContext& context, void* stream) {
    std::lock_guard lock(context.streams_mutex);
    const auto found = context.streams.find(stream);
    return found == context.streams.end() ? nullptr : found->second.get();
}

nnplug_status stream_create(void* ctx, void** stream) {
    auto& context = as_context(ctx);
    try {
        std::lock_guard lock(context.streams_mutex);
        auto created = std::make_unique<DeviceStream>(context.next_stream_id++);
        *stream = created.get();
        context.streams.emplace(*stream, std::move(created));
        return NNPLUG_OK;
    } catch (const std::exception& exception) {
        return fail(NNPLUG_ERR_INTERNAL, std::string("cannot start a stream: ") + exception.what());
    }
}

nnplug_status stream_destroy(void* ctx, void* stream) {
    auto& context = as_context(ctx);
    std::unique_ptr<DeviceStream> doomed;
    {
        std::lock_guard lock(context.streams_mutex);
        const auto found = context.streams.find(stream);
        if (found == context.streams.end()) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
        doomed = std::move(found->second);
        context.streams.erase(found);
    }
    doomed.reset();  // waits for the stream's pending work
    return NNPLUG_OK;
}

nnplug_status stream_synchronize(void* ctx, void* stream) {
    auto& context = as_context(ctx);
    DeviceStream* found = find_stream(context, stream);
    if (found == nullptr) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
    WorkResult result = found->synchronize();
    write_trace(context);
    if (result.status != NNPLUG_OK) return fail(result.status, result.message);
    return NNPLUG_OK;
}

nnplug_status device_memcpy_async(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind, void* stream) {
    auto& context = as_context(ctx);
    std::string error;
    if (!check_copy(context, dst, src, bytes, kind, error)) return fail(NNPLUG_ERR_INVALID_ARGUMENT, error);
    DeviceStream* target = find_stream(context, stream);
    if (target == nullptr) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
    const int stream_id = target->id();
    target->enqueue([&context, dst, src, bytes, kind, stream_id] {
        const double begin = host_microseconds();
        std::memmove(dst, src, bytes);
        if (context.trace)
            context.trace->stream_event(stream_id, std::string("aclrtMemcpyAsync ") + kind_name(kind), begin,
                                        host_microseconds(), "{\"bytes\":" + std::to_string(bytes) + "}");
        return WorkResult{};
    });
    return NNPLUG_OK;
}

// --- ops ----------------------------------------------------------------------

BceTiling tiling_for(const EmuContext& context, const nnplug_op_desc& desc) { return plan_bce(desc, context.limits); }

// Refuses operands that are not device memory, as an NPU cannot read host pages.
nnplug_status bce_supports(void* ctx, const nnplug_op_desc* desc, char* reason, size_t reason_len) {
    static const char* const names[kOperands] = {"gradOutput", "self", "target", "weight", "out"};
    const auto& context = as_context(ctx);
    for (int o = 0; o < kOperands; ++o) {
        const nnplug_tensor& t = operand(*desc, o);
        if (!t.present || (o == kGrad && desc->op != NNPLUG_OP_BCE_BACKWARD)) continue;
        const size_t bytes = static_cast<size_t>(std::max<int64_t>(t.storage_bytes, 1));
        if (context.arena->in_live_block(t.data, bytes)) continue;
        if (!context.arena->in_region(t.data))
            std::snprintf(reason, reason_len,
                          "%s data %p is host memory, not device memory: allocate it with aclrtMalloc and copy "
                          "the data in with aclrtMemcpy (ACL_MEMCPY_HOST_TO_DEVICE)",
                          names[o], t.data);
        else
            std::snprintf(reason, reason_len,
                          "%s data %p (%" PRId64 " bytes) is not inside one live aclrtMalloc block "
                          "(freed, or the storage runs past the allocation)",
                          names[o], t.data, t.storage_bytes);
        return NNPLUG_ERR_INVALID_ARGUMENT;
    }
    return NNPLUG_OK;
}

nnplug_status bce_workspace(void* ctx, const nnplug_op_desc* desc, uint64_t* bytes) {
    *bytes = tiling_for(as_context(ctx), *desc).workspace_bytes;
    return NNPLUG_OK;
}

std::string statistics_json(const BceTiling& tiling, int64_t bytes_moved, double device_us) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "{\"blockDim\":%d,\"tilesPerCore\":%" PRId64 ",\"tileElements\":%" PRId64 ",\"ubBytes\":%" PRId64
                  ",\"workspaceBytes\":%" PRIu64 ",\"bytesMoved\":%" PRId64 ",\"estimatedDeviceUs\":%.3f}",
                  tiling.block_dim, tiling.tiles_per_core, tiling.tile_elements, tiling.ub_bytes,
                  tiling.workspace_bytes, bytes_moved, device_us);
    return text;
}

WorkResult run_launch(EmuContext& context, const nnplug_op_desc& desc, const BceTiling& tiling, void* workspace,
                      int stream_id) {
    const double begin = host_microseconds();
    LaunchStats stats;
    const std::string fault = run_bce(desc, tiling, workspace, context.kernel, *context.cores, stats);
    const double end = host_microseconds();
    // Bytes over the SoC's memory bandwidth: these kernels are bandwidth bound on an NPU.
    const double device_us = static_cast<double>(stats.bytes_moved) / (context.soc.bandwidth_gbps * 1e3);
    const char* api = op_api_name(desc);
    if (context.logs(LogLevel::debug)) {
        char line[512];
        std::snprintf(line, sizeof line,
                      "atlas_emu: %s on %s stream %d: blockDim %d, %" PRId64 " tile(s) per core of %" PRId64
                      " elements, UB %" PRId64 " of %" PRId64 " bytes, workspace %" PRIu64 " bytes, moved %" PRId64
                      " bytes, estimated device time %.3f us at %.1f GB/s (host %.1f us)%s",
                      api, context.soc.name.c_str(), stream_id, tiling.block_dim, tiling.tiles_per_core,
                      tiling.tile_elements, tiling.ub_bytes, context.soc.ub_bytes, tiling.workspace_bytes,
                      stats.bytes_moved, device_us, context.soc.bandwidth_gbps, end - begin,
                      fault.empty() ? "" : ", FAULT");
        write_log_line(LogLevel::debug, line);
    }
    if (context.trace) {
        context.trace->stream_event(stream_id, api, begin, end, statistics_json(tiling, stats.bytes_moved, device_us));
        for (const auto& span : stats.spans)
            context.trace->core_event(span.core, span.kernel, span.begin_us, span.end_us,
                                      "{\"tiles\":" + std::to_string(span.tiles) + "}");
    }
    if (!fault.empty()) return {NNPLUG_ERR_KERNEL, std::string(api) + ": " + fault};
    return {};
}

nnplug_status bce_launch(void* ctx, const nnplug_op_desc* desc, void* workspace, uint64_t workspace_bytes,
                         void* stream) {
    auto& context = as_context(ctx);
    try {
        const BceTiling tiling = tiling_for(context, *desc);
        if (tiling.workspace_bytes > 0 &&
            (workspace_bytes < tiling.workspace_bytes ||
             !context.arena->in_live_block(workspace, static_cast<size_t>(tiling.workspace_bytes))))
            return fail(NNPLUG_ERR_INVALID_ARGUMENT,
                        "workspace " + address(workspace) + " is not " + std::to_string(tiling.workspace_bytes) +
                            " bytes of device memory from aclrtMalloc");
        DeviceStream* target = find_stream(context, stream);
        if (target == nullptr) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
        const int stream_id = target->id();
        target->enqueue([&context, copy = *desc, tiling, workspace, stream_id] {
            return run_launch(context, copy, tiling, workspace, stream_id);
        });
        return NNPLUG_OK;
    } catch (const std::exception& exception) {
        return fail(NNPLUG_ERR_INTERNAL, std::string("cannot enqueue the kernel: ") + exception.what());
    }
}

const nnplug_op_i kOps[] = {
    {NNPLUG_OP_BCE_FORWARD, bce_supports, bce_workspace, bce_launch},
    {NNPLUG_OP_BCE_BACKWARD, bce_supports, bce_workspace, bce_launch},
};

const nnplug_plugin kPlugin = {
    NNPLUG_PLUGIN_ABI_VERSION,
    sizeof(nnplug_plugin),
    "atlas_emu",
    "emulated Ascend NPU: device memory arena, asynchronous streams, AI cores with Unified Buffer tiling",
    kOptions,
    sizeof kOptions / sizeof kOptions[0],
    create,
    destroy,
    soc_name,
    dtype_mask,
    last_error,
    {NNPLUG_MEMORY_DEVICE, device_malloc, device_free, device_memcpy, device_memcpy_async, device_memset,
     stream_create, stream_destroy, stream_synchronize},
    kOps,
    sizeof kOps / sizeof kOps[0],
};

}  // namespace
}  // namespace nnplug::emu

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) { return &nnplug::emu::kPlugin; }
