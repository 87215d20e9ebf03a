// atlas_emu: an emulated Ascend NPU server of one or more devices. Device memory is
// a checked arena per device, streams are asynchronous FIFOs, kernels run on emulated
// AI cores through a Unified Buffer of the SoC's size. It runs CANN-style host code
// without an NPU and reports the mistakes the hardware would punish.
#include <nnplug/plugin.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "chrome_trace.h"
#include "class_kernel.h"
#include "class_ops.h"
#include "core_pool.h"
#include "device_arena.h"
#include "device_stream.h"
#include "elementwise_kernel.h"
#include "elementwise_op.h"
#include "elementwise_tiling.h"
#include "log_line.h"
#include "nll_kernel.h"
#include "soc_profile.h"
#include "trace_statistics.h"

namespace nnplug::emu {
namespace {

using sdk::fail;

constexpr long long kMaxDevices = 64;

std::string address(const void* pointer) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", pointer);
    return text;
}

// The ops this backend runs, one entry per op kind.
const std::vector<ElementwiseOp>& registered_ops() {
    static const std::vector<ElementwiseOp> ops = [] {
        std::vector<ElementwiseOp> all;
#define NNPLUG_OP_SOURCE(stem) register_##stem(all);
#include "atlas_emu_op_sources.inc"
#undef NNPLUG_OP_SOURCE
        return all;
    }();
    return ops;
}

const ElementwiseOp* find_op(int32_t kind) {
    for (const ElementwiseOp& op : registered_ops())
        if (op.kind == kind) return &op;
    return nullptr;
}

// --- options ------------------------------------------------------------------

// What the options of one context say.
struct Settings {
    SocProfile soc;
    int64_t tile_elements = 0;
    bool check_inputs = false;
    LogLevel log_level = LogLevel::warn;
    int host_threads = 0;  // 0: every CPU
    int devices = 1;
    std::string trace_path;
};

nnplug_option_info option_info(const char* key, const char* default_value, const char* description) {
    nnplug_option_info info{};
    info.key = key;
    info.default_value = default_value;
    info.description = description;
    return info;
}

const nnplug_option_info kOptions[] = {
    option_info("soc", "Ascend910B", "SoC to emulate: Ascend910, Ascend910B or Ascend310P"),
    option_info("devices", "1",
                "devices of the emulated server, 1 to 64, each with its own memory and streams"),
    option_info("vector_cores", "0", "vector cores a kernel may use; 0 takes the SoC's count"),
    option_info("ub_kib", "0", "Unified Buffer per core in KiB; 0 takes the SoC's size"),
    option_info("memory_mib", "0", "device memory capacity per device in MiB; 0 takes the SoC's capacity"),
    option_info("bandwidth_gbps", "0",
                "device memory bandwidth in GB/s for the time estimate, 0.01 to 1e6; 0 takes the SoC's"),
    option_info("host_threads", "0",
                "host threads that run the emulated cores of all devices; 0 uses every CPU"),
    option_info("tile_elements", "0",
                "elements per tile; 0 derives it from the UB size (set it to test a kernel's limits)"),
    option_info("check_inputs", "false",
                "report inputs outside the op's domain as a kernel error at synchronize"),
    option_info("log_level", "warn", "debug prints per-launch statistics; NNPLUG_LOG_LEVEL overrides"),
    option_info(
        "trace", "",
        "file for a Chrome trace-event JSON of streams and cores (device N > 0 writes <name>.devN.<ext>); "
        "NNPLUG_TRACE overrides"),
};

// The device memory bandwidth an option may set, in GB/s.
constexpr double kMinBandwidthGbps = 0.01;
constexpr double kMaxBandwidthGbps = 1e6;

// Reads the options; false with a one-line reason.
bool read_options(const nnplug_option* options, size_t count, Settings& settings, std::string& error) {
    std::string soc = "Ascend910B";
    for (size_t i = 0; i < count; ++i)
        if (std::strcmp(options[i].key, "soc") == 0) soc = options[i].value;
    const auto profile = soc_profile(soc);
    if (!profile) {
        error = "option soc = '" + soc + "' is not an emulated SoC; choose one of";
        for (const auto& name : soc_names()) error += " " + name;
        return false;
    }
    settings.soc = *profile;
    std::string level = "warn";
    for (size_t i = 0; i < count; ++i) {
        const std::string key = options[i].key;
        const char* value = options[i].value;
        long long whole = 0;
        double number = 0;
        const auto whole_in = [&](long long minimum, long long maximum) {
            if (sdk::parse_integer(value, minimum, maximum, whole)) return true;
            error = "option " + key + " = '" + value + "' is not a whole number in [" +
                    std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
            return false;
        };
        if (key == "soc") {
            continue;
        } else if (key == "devices") {
            if (!whole_in(1, kMaxDevices)) return false;
            settings.devices = static_cast<int>(whole);
        } else if (key == "vector_cores") {
            if (!whole_in(0, 4096)) return false;
            if (whole > 0) settings.soc.vector_cores = static_cast<int>(whole);
        } else if (key == "ub_kib") {
            if (!whole_in(0, 1 << 20)) return false;
            if (whole > 0) settings.soc.ub_bytes = whole * 1024;
        } else if (key == "memory_mib") {
            if (!whole_in(0, 1ll << 30)) return false;
            if (whole > 0) settings.soc.memory_bytes = whole * 1024 * 1024;
        } else if (key == "bandwidth_gbps") {
            // Bounded, so that a time estimate (bytes over bandwidth) stays a number of a few
            // digits: 1e-300 made it 300 digits long.
            if (!sdk::parse_nonnegative(value, number) ||
                (number != 0 && (number < kMinBandwidthGbps || number > kMaxBandwidthGbps))) {
                char bounds[96];
                std::snprintf(bounds, sizeof bounds, "0 (the SoC's) or a number from %g to %g",
                              kMinBandwidthGbps, kMaxBandwidthGbps);
                error = "option bandwidth_gbps = '" + std::string(value) + "' is not " + bounds;
                return false;
            }
            if (number > 0) settings.soc.bandwidth_gbps = number;
        } else if (key == "host_threads") {
            if (!whole_in(0, 1024)) return false;
            settings.host_threads = static_cast<int>(whole);
        } else if (key == "tile_elements") {
            if (!whole_in(0, 1ll << 40)) return false;
            settings.tile_elements = whole;
        } else if (key == "check_inputs") {
            if (!sdk::parse_bool(value, settings.check_inputs)) {
                error = "option check_inputs = '" + std::string(value) + "' is not true or false";
                return false;
            }
        } else if (key == "log_level") {
            level = value;
        } else if (key == "trace") {
            settings.trace_path = value;
        } else {
            error = "unknown option '" + key + "'";
            return false;
        }
    }
    if (const char* from_environment = sdk::environment("NNPLUG_LOG_LEVEL")) level = from_environment;
    const auto parsed = parse_log_level(level);
    if (!parsed) {
        error = "log level '" + level + "' is not one of trace, debug, info, warn, error, off";
        return false;
    }
    settings.log_level = *parsed;
    if (const char* from_environment = sdk::environment("NNPLUG_TRACE"))
        settings.trace_path = from_environment;
    return true;
}

// Device 0 writes the trace file as named; device N > 0 inserts ".devN" before the
// extension (trace.json -> trace.dev1.json), so the devices never share a file.
std::string trace_path_of_device(const std::string& path, int device) {
    if (device == 0) return path;
    const std::string tag = ".dev" + std::to_string(device);
    const size_t name = path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1;
    const size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || dot <= name) return path + tag;
    return path.substr(0, dot) + tag + path.substr(dot);
}

// --- contexts -----------------------------------------------------------------

// One pool of emulated-core threads per process and thread count: the devices share
// the host's CPUs, as the streams of one device already do.
std::shared_ptr<CorePool> shared_core_pool(int host_threads) {
    static std::mutex mutex;
    static std::map<int, std::weak_ptr<CorePool>> pools;
    std::lock_guard lock(mutex);
    std::weak_ptr<CorePool>& slot = pools[host_threads];
    if (auto pool = slot.lock()) return pool;
    auto pool = std::make_shared<CorePool>(host_threads);
    slot = pool;
    return pool;
}

// One emulated device.
struct EmuContext {
    SocProfile soc;
    DeviceLimits limits;
    KernelOptions kernel;
    LogLevel log_level = LogLevel::warn;
    int device = 0;
    int devices = 1;
    std::unique_ptr<DeviceArena> arena;
    std::shared_ptr<CorePool> cores;
    std::unique_ptr<ChromeTrace> trace;  // null unless tracing

    std::mutex streams_mutex;
    // Shared: a launch or synchronize racing aclrtDestroyStream keeps the stream it found
    // alive until it is done with it.
    std::unordered_map<void*, std::shared_ptr<DeviceStream>> streams;
    int next_stream_id = 1;

    bool logs(LogLevel level) const { return level >= log_level; }
    // "Ascend910B", or "Ascend910B device 3" on a server of several devices.
    std::string name() const {
        return devices > 1 ? soc.name + " device " + std::to_string(device) : soc.name;
    }
};

EmuContext& as_context(void* ctx) {
    return *static_cast<EmuContext*>(ctx);
}

nnplug_status create(const nnplug_option* options, size_t option_count, int32_t device, void** ctx) {
    return sdk::fenced("atlas_emu", [&] {
        Settings settings;
        std::string reason;
        if (!read_options(options, option_count, settings, reason))
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, reason);
        if (device < 0 || device >= settings.devices)
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, "device " + std::to_string(device) +
                                                         " does not exist: option devices is " +
                                                         std::to_string(settings.devices));
        auto context = std::make_unique<EmuContext>();
        context->soc = settings.soc;
        context->log_level = settings.log_level;
        context->device = device;
        context->devices = settings.devices;
        context->limits.vector_cores = settings.soc.vector_cores;
        context->limits.ub_bytes = settings.soc.ub_bytes;
        context->limits.tile_elements = settings.tile_elements;
        context->kernel.ub_bytes = settings.soc.ub_bytes;
        context->kernel.check_inputs = settings.check_inputs;
        context->kernel.soc_name = context->soc.name.c_str();
        try {
            context->arena = std::make_unique<DeviceArena>(settings.soc.memory_bytes, device);
        } catch (const std::runtime_error& error) {
            return fail(NNPLUG_ERR_OUT_OF_MEMORY, error.what());
        }
        const int threads = settings.host_threads > 0
                                ? settings.host_threads
                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        context->cores = shared_core_pool(threads);
        if (!settings.trace_path.empty())
            context->trace = std::make_unique<ChromeTrace>(trace_path_of_device(settings.trace_path, device),
                                                           "atlas_emu " + context->name());
        *ctx = context.release();
        return NNPLUG_OK;
    });
}

void write_trace(EmuContext& context) {
    std::string error;
    if (context.trace && !context.trace->write(error) && context.logs(LogLevel::warn))
        write_log_line(LogLevel::warn, "atlas_emu: " + error);
}

void destroy(void* ctx) {
    auto* context = static_cast<EmuContext*>(ctx);
    try {
        context->streams.clear();  // each waits for its pending work
        write_trace(*context);
    } catch (...) {
        // Nothing may cross the C boundary; the context goes all the same.
    }
    delete context;
}

uint32_t device_count(void* ctx) {
    return static_cast<uint32_t>(as_context(ctx).devices);
}

const char* soc_name(void* ctx) {
    return as_context(ctx).soc.name.c_str();
}

uint32_t dtype_mask(void* ctx) {
    uint32_t mask = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F16) |
                    NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) |
                    NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_U8);
    if (as_context(ctx).soc.bfloat16) mask |= NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_BF16);
    return mask;
}

// --- memory -------------------------------------------------------------------

// Where a pointer outside this device's arena points: the host, or another device.
std::string foreign_location(const void* pointer) {
    const int device = DeviceArena::device_holding(pointer);
    return device < 0 ? "is host memory" : "is memory of device " + std::to_string(device);
}

nnplug_status device_malloc(void* ctx, size_t bytes, void** pointer) {
    return sdk::fenced("atlas_emu", [&] {
        std::string error;
        void* allocated = as_context(ctx).arena->allocate(bytes, error);
        if (allocated == nullptr) return fail(NNPLUG_ERR_OUT_OF_MEMORY, error);
        *pointer = allocated;
        return NNPLUG_OK;
    });
}

nnplug_status device_free(void* ctx, void* pointer) {
    return sdk::fenced("atlas_emu", [&] {
        const auto& context = as_context(ctx);
        const int owner = DeviceArena::device_holding(pointer);
        if (owner >= 0 && owner != context.device)
            return fail(NNPLUG_ERR_BAD_HANDLE, address(pointer) + ": pointer is memory of device " +
                                                   std::to_string(owner) + ", not of the current device " +
                                                   std::to_string(context.device) +
                                                   "; free it with that device set");
        std::string error;
        if (!context.arena->release(pointer, error))
            return fail(NNPLUG_ERR_BAD_HANDLE, address(pointer) + ": " + error);
        return NNPLUG_OK;
    });
}

const char* kind_name(int32_t kind) {
    switch (kind) {
        case NNPLUG_MEMCPY_HOST_TO_HOST:
            return "ACL_MEMCPY_HOST_TO_HOST";
        case NNPLUG_MEMCPY_HOST_TO_DEVICE:
            return "ACL_MEMCPY_HOST_TO_DEVICE";
        case NNPLUG_MEMCPY_DEVICE_TO_HOST:
            return "ACL_MEMCPY_DEVICE_TO_HOST";
        default:
            return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    }
}

// Whether one side of a copy is where the kind says; else the reason.
bool check_side(const EmuContext& context, const char* side, const void* pointer, size_t bytes, bool device,
                int32_t kind, std::string& error) {
    const DeviceArena& arena = *context.arena;
    if (device) {
        if (arena.in_live_block(pointer, bytes)) return true;
        error = std::string(side) + " " + address(pointer) +
                (arena.in_region(pointer) ? " is device memory but " + std::to_string(bytes) +
                                                " bytes from it are not inside one live aclrtMalloc block"
                                          : " " + foreign_location(pointer)) +
                ", yet kind " + kind_name(kind) + " needs device memory there";
        if (!arena.in_region(pointer) && context.devices > 1)
            error += " (of device " + std::to_string(context.device) + ", the current one)";
        return false;
    }
    if (DeviceArena::device_holding(pointer) < 0) return true;
    error = std::string(side) + " " + address(pointer) + " is device memory, yet kind " + kind_name(kind) +
            " needs host memory there";
    return false;
}

bool check_copy(const EmuContext& context, void* dst, const void* src, size_t bytes, int32_t kind,
                std::string& error) {
    const bool src_device = kind == NNPLUG_MEMCPY_DEVICE_TO_HOST || kind == NNPLUG_MEMCPY_DEVICE_TO_DEVICE;
    const bool dst_device = kind == NNPLUG_MEMCPY_HOST_TO_DEVICE || kind == NNPLUG_MEMCPY_DEVICE_TO_DEVICE;
    return check_side(context, "dst", dst, bytes, dst_device, kind, error) &&
           check_side(context, "src", src, bytes, src_device, kind, error);
}

nnplug_status device_memcpy(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind) {
    return sdk::fenced("atlas_emu", [&] {
        std::string error;
        if (!check_copy(as_context(ctx), dst, src, bytes, kind, error))
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, error);
        std::memmove(dst, src, bytes);
        return NNPLUG_OK;
    });
}

nnplug_status device_memset(void* ctx, void* pointer, int32_t value, size_t bytes) {
    return sdk::fenced("atlas_emu", [&] {
        if (!as_context(ctx).arena->in_live_block(pointer, bytes))
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, address(pointer) + " (" + std::to_string(bytes) +
                                                         " bytes) is not inside one live aclrtMalloc block");
        std::memset(pointer, value, bytes);
        return NNPLUG_OK;
    });
}

// --- streams ------------------------------------------------------------------

std::shared_ptr<DeviceStream> find_stream(EmuContext& context, void* stream) {
    std::lock_guard lock(context.streams_mutex);
    const auto found = context.streams.find(stream);
    return found == context.streams.end() ? nullptr : found->second;
}

nnplug_status stream_create(void* ctx, void** stream) {
    return sdk::fenced("atlas_emu", [&] {
        auto& context = as_context(ctx);
        std::lock_guard lock(context.streams_mutex);
        auto created = std::make_shared<DeviceStream>(context.next_stream_id++);
        *stream = created.get();
        context.streams.emplace(*stream, std::move(created));
        return NNPLUG_OK;
    });
}

nnplug_status stream_destroy(void* ctx, void* stream) {
    return sdk::fenced("atlas_emu", [&] {
        auto& context = as_context(ctx);
        std::shared_ptr<DeviceStream> doomed;
        {
            std::lock_guard lock(context.streams_mutex);
            const auto found = context.streams.find(stream);
            if (found == context.streams.end()) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
            doomed = std::move(found->second);
            context.streams.erase(found);
        }
        // As CANN's aclrtDestroyStream: waits for the work enqueued so far. A call racing
        // this one still holds the stream; the last holder stops its worker.
        doomed->wait_until_drained();
        return NNPLUG_OK;
    });
}

nnplug_status stream_synchronize(void* ctx, void* stream) {
    return sdk::fenced("atlas_emu", [&] {
        auto& context = as_context(ctx);
        const std::shared_ptr<DeviceStream> found = find_stream(context, stream);
        if (found == nullptr) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
        WorkResult result = found->synchronize();
        write_trace(context);
        if (result.status != NNPLUG_OK) return fail(result.status, result.message);
        return NNPLUG_OK;
    });
}

nnplug_status device_memcpy_async(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind,
                                  void* stream) {
    return sdk::fenced("atlas_emu", [&] {
        auto& context = as_context(ctx);
        std::string error;
        if (!check_copy(context, dst, src, bytes, kind, error))
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, error);
        const std::shared_ptr<DeviceStream> target = find_stream(context, stream);
        if (target == nullptr) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
        const int stream_id = target->id();
        target->enqueue([&context, dst, src, bytes, kind, stream_id] {
            const double begin = host_microseconds();
            std::memmove(dst, src, bytes);
            if (context.trace)
                context.trace->stream_event(stream_id, std::string("aclrtMemcpyAsync ") + kind_name(kind),
                                            begin, host_microseconds(),
                                            "{\"bytes\":" + std::to_string(bytes) + "}");
            return WorkResult{};
        });
        return NNPLUG_OK;
    });
}

// --- ops ----------------------------------------------------------------------

// What prepare decides once per executor; shared with the launches still queued when
// the runtime releases it.
struct Plan {
    int32_t kind = -1;
    const ElementwiseOp* op = nullptr;  // null for an op with a class axis
    int64_t numel = 0;                  // of the descriptor it was made for, to catch a mismatched launch
    ElementwiseTiling tiling;
    // An op with a class axis: its tiling when the cross-entropy kernel (class_kernel.h) or
    // the NLLLoss kernel (nll_kernel.h) runs it, else the shared row model
    // (common/class_ops.h) runs it on the stream.
    bool class_kernel = false;
    ClassTiling class_tiling;
    bool nll_kernel = false;
    NllTiling nll_tiling;
};
using PlanHandle = std::shared_ptr<const Plan>;

// Why no kernel of atlas_emu can run desc (one line), or null.
const char* kernel_refusal(const nnplug_op_desc& desc) {
    if (common::is_class_op(desc.op))
        return nnplug_desc_class_axis(&desc) >= 0 ? nullptr
                                                  : "the class-axis op's descriptor has no class axis";
    if (find_op(desc.op) == nullptr) return "atlas_emu has no kernel for this op kind";
    return elementwise_refusal(desc);
}

// Why the SoC has no CrossEntropyLoss kernel for desc, as CANN registers them, or "";
// `operand` names the target when its dtype is what the kernels lack.
std::string cross_entropy_refusal(const nnplug_op_desc& desc, const SocProfile& soc, int32_t* operand) {
    const bool forward = desc.op == NNPLUG_OP_CROSS_ENTROPY_LOSS;
    if (!forward && desc.op != NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD) return {};
    if (!soc.cross_entropy)
        return "is not available on " + soc.name +
               ", as in CANN (its kernels are for the Atlas A2/A3 series and Ascend950): use Ascend910B";
    const int32_t target =
        forward ? int32_t{NNPLUG_CROSS_ENTROPY_LOSS_TARGET} : int32_t{NNPLUG_CROSS_ENTROPY_LOSS_GRAD_TARGET};
    if (soc.cross_entropy_int32_targets || desc.operands[target].dtype != NNPLUG_DTYPE_I32) return {};
    if (operand != nullptr) *operand = target;
    return "has dtype int32; the CrossEntropyLoss kernels of " + soc.name + " take int64 targets, as in CANN";
}

// Refuses operands that are not device memory of this device, as an NPU cannot read
// host pages; the runtime puts the operand's name in front of the reason.
nnplug_status op_supports(void* ctx, const nnplug_op_desc* desc, int32_t* operand) {
    return sdk::fenced("atlas_emu", [&] {
        const auto& context = as_context(ctx);
        if (operand != nullptr) *operand = -1;
        if (const char* refusal = kernel_refusal(*desc)) return fail(NNPLUG_ERR_UNSUPPORTED, refusal);
        if (std::string refusal = cross_entropy_refusal(*desc, context.soc, operand); !refusal.empty())
            return fail(NNPLUG_ERR_UNSUPPORTED, refusal);
        for (int32_t slot = 0; slot < desc->operand_count; ++slot) {
            const nnplug_tensor& t = desc->operands[slot];
            if (!sdk::present(t)) continue;
            const size_t bytes = static_cast<size_t>(std::max<int64_t>(t.storage_bytes, 1));
            if (context.arena->in_live_block(t.data, bytes)) continue;
            if (operand != nullptr) *operand = slot;
            char reason[320];
            const int owner = DeviceArena::device_holding(t.data);
            if (owner == context.device)
                std::snprintf(reason, sizeof reason,
                              "data %p (%" PRId64
                              " bytes) is not inside one live aclrtMalloc block "
                              "(freed, or the storage runs past the allocation)",
                              t.data, t.storage_bytes);
            else if (owner >= 0)
                std::snprintf(
                    reason, sizeof reason,
                    "data %p is memory of device %d, not of device %d that runs the op: run it with "
                    "device %d set (aclrtSetDevice) or copy the data over",
                    t.data, owner, context.device, owner);
            else
                std::snprintf(
                    reason, sizeof reason,
                    "data %p is host memory, not device memory: allocate it with aclrtMalloc and copy "
                    "the data in with aclrtMemcpy (ACL_MEMCPY_HOST_TO_DEVICE)",
                    t.data);
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, reason);
        }
        return NNPLUG_OK;
    });
}

// The tiling, computed once per executor: launches reuse it.
nnplug_status op_prepare(void* ctx, const nnplug_op_desc* desc, void** plan, uint64_t* workspace_bytes) {
    return sdk::fenced("atlas_emu", [&] {
        if (const char* refusal = kernel_refusal(*desc)) return fail(NNPLUG_ERR_UNSUPPORTED, refusal);
        auto planned = std::make_shared<Plan>();
        planned->kind = desc->op;
        planned->op = find_op(desc->op);
        planned->numel = desc->numel;
        if (planned->op != nullptr) planned->tiling = plan_elementwise(*desc, as_context(ctx).limits);
        planned->class_kernel = runs_in_class_kernel(*desc);
        if (planned->class_kernel) planned->class_tiling = plan_class(*desc, as_context(ctx).limits);
        planned->nll_kernel = runs_in_nll_kernel(*desc);
        if (planned->nll_kernel) planned->nll_tiling = plan_nll(*desc, as_context(ctx).limits);
        *workspace_bytes = planned->tiling.workspace_bytes;
        *plan = new PlanHandle(std::move(planned));
        return NNPLUG_OK;
    });
}

void op_release(void*, void* plan) {
    delete static_cast<PlanHandle*>(plan);
}

// An op with a class axis, on the stream worker: the cross-entropy or NLLLoss kernel
// through the Unified Buffer, or the shared row model; a target outside the classes fails
// the stream (reported at its synchronize).
WorkResult run_class_launch(EmuContext& context, const nnplug_op_desc& desc, const Plan& plan,
                            int stream_id) {
    const char* api = nnplug_op_api_name(desc.op);
    const double begin = host_microseconds();
    LaunchStats stats;
    std::string fault, args = "{\"rowModel\":true}";
    if (plan.class_kernel) {
        fault = run_class_kernel(desc, plan.class_tiling, context.kernel, *context.cores, stats);
        args = class_statistics_json(plan.class_tiling, stats.bytes_moved);
    } else if (plan.nll_kernel) {
        fault = run_nll_kernel(desc, plan.nll_tiling, context.kernel, *context.cores, stats);
        args = nll_statistics_json(plan.nll_tiling, stats.bytes_moved);
    } else {
        fault = common::run_class_op(desc, [](int64_t count, auto&& body) { body(int64_t{0}, count); });
    }
    if (context.trace) {
        context.trace->stream_event(stream_id, api, begin, host_microseconds(), args);
        for (const auto& span : stats.spans)
            context.trace->core_event(span.core, span.kernel, span.begin_us, span.end_us,
                                      "{\"tiles\":" + std::to_string(span.tiles) + "}");
    }
    if (!fault.empty()) return {NNPLUG_ERR_INVALID_ARGUMENT, std::string(api) + ": " + fault};
    return {};
}

WorkResult run_launch(EmuContext& context, const nnplug_op_desc& desc, const Plan& plan, void* workspace,
                      int stream_id) {
    if (plan.op == nullptr) return run_class_launch(context, desc, plan, stream_id);
    const ElementwiseTiling& tiling = plan.tiling;
    const char* api = nnplug_op_api_name(plan.op->kind);
    const double begin = host_microseconds();
    LaunchStats stats;
    const std::string fault =
        run_elementwise(desc, *plan.op, tiling, workspace, context.kernel, *context.cores, stats);
    const double end = host_microseconds();
    // Bytes over the SoC's memory bandwidth: these kernels are bandwidth bound on an NPU.
    const double device_us = static_cast<double>(stats.bytes_moved) / (context.soc.bandwidth_gbps * 1e3);
    if (context.logs(LogLevel::debug)) {
        char line[512];
        std::snprintf(line, sizeof line,
                      "atlas_emu: %s on %s stream %d: blockDim %d, %" PRId64 " tile(s) per core of %" PRId64
                      " elements, UB %" PRId64 " of %" PRId64 " bytes, workspace %" PRIu64
                      " bytes, moved %" PRId64
                      " bytes, estimated device time %.3f us at %.1f GB/s (host %.1f us)%s",
                      api, context.name().c_str(), stream_id, tiling.block_dim, tiling.tiles_per_core,
                      tiling.tile_elements, tiling.ub_bytes, context.soc.ub_bytes, tiling.workspace_bytes,
                      stats.bytes_moved, device_us, context.soc.bandwidth_gbps, end - begin,
                      fault.empty() ? "" : ", FAULT");
        write_log_line(LogLevel::debug, line);
    }
    if (context.trace) {
        context.trace->stream_event(stream_id, api, begin, end,
                                    statistics_json(tiling, stats.bytes_moved, device_us));
        for (const auto& span : stats.spans)
            context.trace->core_event(span.core, span.kernel, span.begin_us, span.end_us,
                                      "{\"tiles\":" + std::to_string(span.tiles) + "}");
    }
    if (!fault.empty()) return {NNPLUG_ERR_KERNEL, std::string(api) + ": " + fault};
    return {};
}

nnplug_status op_launch(void* ctx, const void* plan, const nnplug_op_desc* desc, void* workspace,
                        uint64_t workspace_bytes, void* stream) {
    return sdk::fenced("atlas_emu", [&] {
        auto& context = as_context(ctx);
        if (plan == nullptr) return fail(NNPLUG_ERR_INVALID_ARGUMENT, "the launch has no plan from prepare");
        // The queued work holds the plan itself: the runtime may release its handle at once.
        PlanHandle planned = *static_cast<const PlanHandle*>(plan);
        if (desc->op != planned->kind || desc->numel != planned->numel)
            return fail(NNPLUG_ERR_INVALID_ARGUMENT,
                        "the descriptor is not the one its plan was prepared for");
        const uint64_t needed = planned->tiling.workspace_bytes;
        if (needed > 0 && (workspace_bytes < needed ||
                           !context.arena->in_live_block(workspace, static_cast<size_t>(needed))))
            return fail(NNPLUG_ERR_INVALID_ARGUMENT, "workspace " + address(workspace) + " is not " +
                                                         std::to_string(needed) +
                                                         " bytes of device memory from aclrtMalloc");
        const std::shared_ptr<DeviceStream> target = find_stream(context, stream);
        if (target == nullptr) return fail(NNPLUG_ERR_BAD_HANDLE, "unknown stream");
        const int stream_id = target->id();
        target->enqueue([&context, copy = *desc, planned = std::move(planned), workspace, stream_id] {
            return run_launch(context, copy, *planned, workspace, stream_id);
        });
        return NNPLUG_OK;
    });
}

// --- the plugin table -----------------------------------------------------------

// Built once, on the first call of the entry symbol; every member is set by name.
struct PluginTables {
    std::vector<nnplug_op_i> ops;
    std::vector<const nnplug_op_i*> op_pointers;
    nnplug_device_i device;
    nnplug_plugin plugin;

    PluginTables() {
        std::vector<int32_t> kinds;
        for (const ElementwiseOp& registered : registered_ops()) kinds.push_back(registered.kind);
        for (int32_t kind = 0; kind < NNPLUG_OP_KIND_COUNT; ++kind)
            if (common::is_class_op(kind)) kinds.push_back(kind);
        for (const int32_t kind : kinds) {
            auto op = sdk::table<nnplug_op_i>();
            op.op = kind;
            op.name = nnplug_op_api_name(kind);
            op.supports = op_supports;
            op.prepare = op_prepare;
            op.launch = op_launch;
            op.release = op_release;
            ops.push_back(op);
        }
        for (const nnplug_op_i& op : ops) op_pointers.push_back(&op);

        device = sdk::table<nnplug_device_i>();
        device.memory_kind = NNPLUG_MEMORY_DEVICE;
        device.malloc = device_malloc;
        device.free = device_free;
        device.memcpy = device_memcpy;
        device.memcpy_async = device_memcpy_async;
        device.memset = device_memset;
        device.stream_create = stream_create;
        device.stream_destroy = stream_destroy;
        device.stream_synchronize = stream_synchronize;

        plugin = sdk::table<nnplug_plugin>();
        plugin.abi_version = NNPLUG_PLUGIN_ABI_VERSION;
        plugin.name = "atlas_emu";
        plugin.description =
            "emulated Ascend NPU server: per-device memory arenas, asynchronous streams, AI cores with "
            "Unified "
            "Buffer tiling";
        plugin.options = kOptions;
        plugin.option_count = sizeof kOptions / sizeof kOptions[0];
        plugin.create = create;
        plugin.destroy = destroy;
        plugin.device_count = device_count;
        plugin.soc_name = soc_name;
        plugin.dtype_mask = dtype_mask;
        plugin.last_error = sdk::last_error;
        plugin.device = &device;
        plugin.ops = op_pointers.data();
        plugin.op_count = op_pointers.size();
    }
    PluginTables(const PluginTables&) = delete;
    PluginTables& operator=(const PluginTables&) = delete;
};

}  // namespace
}  // namespace nnplug::emu

extern "C" NNPLUG_PLUGIN_EXPORT const nnplug_plugin* nnplug_plugin_entry(void) {
    try {
        // Never destroyed: a program that exits without aclFinalize has libnnplug release
        // its executors and devices through these tables after this library's statics
        // are gone.
        static const nnplug::emu::PluginTables* tables = new nnplug::emu::PluginTables;
        return &tables->plugin;
    } catch (...) {
        return nullptr;  // out of host memory while building the tables
    }
}
