#include "two_phase.h"

#include <fmt/format.h>
#include <nnplug/plugin_support.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "op_planner.h"
#include "operand_memory.h"
#include "runtime.h"
#include "tensor.h"

namespace nnplug {
namespace {

const nnplug_op_i* find_op(const nnplug_plugin& plugin, nnplug_op_kind kind) {
    for (size_t i = 0; i < plugin.op_count; ++i)
        if (plugin.ops[i]->op == kind) return plugin.ops[i];
    return nullptr;
}

// A reduction over no elements: the mean is NaN (0/0), the sum 0, a batchmean over a first
// dimension that is not empty 0 (0/N); a total weight is 0. The bit patterns are static, so
// an asynchronous copy may read them after the call has returned.
const void* empty_value_bits(EmptyValue value, const nnplug_op_desc& desc, int32_t dtype) {
    const int64_t reduction = sdk::reduction(desc);
    static const uint32_t kZero = 0;
    static const uint32_t kNanF32 = 0x7fc00000u;
    static const uint16_t kNanF16 = 0x7e00u;
    static const uint16_t kNanBf16 = 0x7fc0u;
    if (value == EmptyValue::kZero || reduction != NNPLUG_REDUCTION_MEAN || sdk::reduce_count(desc) > 0)
        return &kZero;
    return dtype == NNPLUG_DTYPE_F16    ? static_cast<const void*>(&kNanF16)
           : dtype == NNPLUG_DTYPE_BF16 ? static_cast<const void*>(&kNanBf16)
                                        : static_cast<const void*>(&kNanF32);
}

// With an empty self, what the run still writes: each reduced output of an op that writes a
// reduction over no elements (OpSchema::empty_reduction_written) gets its empty value.
void plan_empty_values(const OpSchema& schema, const nnplug_op_desc& desc, bool empty_self,
                       aclOpExecutor& executor) {
    // Over no rows with reduction none there is nothing to write (a kOneElement output, such
    // as a total weight, is written only when the call reduces).
    if (!empty_self || !schema.empty_reduction_written || sdk::reduction(desc) == NNPLUG_REDUCTION_NONE)
        return;
    for (int32_t slot = 0; slot < desc.operand_count; ++slot) {
        const nnplug_tensor& operand = desc.operands[slot];
        if ((operand.flags & NNPLUG_OPERAND_REDUCED) && (operand.flags & NNPLUG_OPERAND_OUTPUT))
            executor.empty_values[slot] =
                empty_value_bits(schema.operands[static_cast<size_t>(slot)].empty_value, desc, operand.dtype);
    }
}

// Writes one empty value into its output, in stream order.
nnplug_status write_empty_value(Runtime& runtime, const nnplug_tensor& out, const void* source,
                                void* stream) {
    const size_t bytes = nnplug_dtype_size(out.dtype);
    void* destination = static_cast<char*>(out.data) + out.offset * static_cast<int64_t>(bytes);
    const nnplug_device_i& device = runtime.device_table();
    if (device.memory_kind == NNPLUG_MEMORY_HOST) {
        // A tensor of a host-memory device may lie anywhere in host memory, not only in the
        // aclrtMalloc blocks its copies are checked against: the runtime writes it itself.
        const nnplug_status status = device.stream_synchronize(runtime.context(), stream);
        if (status == NNPLUG_OK) std::memcpy(destination, source, bytes);
        return status;
    }
    if (device.memcpy_async != nullptr)
        return device.memcpy_async(runtime.context(), destination, source, bytes,
                                   NNPLUG_MEMCPY_HOST_TO_DEVICE, stream);
    const nnplug_status status = device.stream_synchronize(runtime.context(), stream);
    if (status != NNPLUG_OK) return status;
    return device.memcpy(runtime.context(), destination, source, bytes, NNPLUG_MEMCPY_HOST_TO_DEVICE);
}

aclnnStatus write_empty_values(Runtime& runtime, const aclOpExecutor& executor, void* stream) {
    for (int32_t slot = 0; slot < executor.desc.operand_count; ++slot) {
        if (executor.empty_values[slot] == nullptr) continue;
        const nnplug_status status =
            write_empty_value(runtime, executor.desc.operands[slot], executor.empty_values[slot], stream);
        if (status != NNPLUG_OK) {
            runtime.fail_from_backend(executor.api, status);
            return ACLNN_ERR_RUNTIME_ERROR;
        }
    }
    return ACLNN_SUCCESS;
}

// The backend one call is tried on: the device's own, or one ops are routed to.
struct Candidate {
    const nnplug_plugin* plugin;
    void* context;
    RoutedBackend* routed;  // null: the device's backend
};

Candidate candidate_of(Runtime& runtime, const RouteTarget& target) {
    if (target.routed != nullptr) return {&target.routed->plugin(), target.routed->context(), target.routed};
    return {&runtime.plugin(), runtime.context(), nullptr};
}

// What trying one backend gave: an executor, a refusal another backend may take over
// (reason set), or a failure that ends the call (message and status set).
enum class Outcome { kPrepared, kRefused, kFailed };

Outcome try_backend(Runtime& runtime, const OpSchema& schema, const nnplug_op_desc& desc, bool nothing_to_run,
                    const RouteTarget& target, aclOpExecutor& created, aclnnStatus& status,
                    std::string& reason) {
    if (!target.unavailable.empty()) {
        reason = fmt::format("backend '{}' is not available: {}", target.name, target.unavailable);
        status = ACLNN_ERR_RUNTIME_ERROR;
        return Outcome::kRefused;
    }
    const Candidate backend = candidate_of(runtime, target);
    // The tensors are the device backend's memory; another backend may only read it when
    // both keep device memory in host memory.
    if (backend.routed != nullptr && (runtime.device_table().memory_kind != NNPLUG_MEMORY_HOST ||
                                      backend.plugin->device->memory_kind != NNPLUG_MEMORY_HOST)) {
        set_last_error(
            "{}: routed to backend '{}', but the tensors are memory of backend '{}', and {} keeps its "
            "own device memory; an op runs on another backend only when both use host memory",
            schema.api, backend.plugin->name, runtime.plugin().name,
            runtime.device_table().memory_kind != NNPLUG_MEMORY_HOST ? runtime.plugin().name
                                                                     : backend.plugin->name);
        status = ACLNN_ERR_PARAM_INVALID;
        return Outcome::kFailed;
    }
    const nnplug_op_i* op = find_op(*backend.plugin, schema.kind);
    if (op == nullptr) {
        reason = fmt::format("backend '{}' does not implement this op", backend.plugin->name);
        status = ACLNN_ERR_PARAM_INVALID;
        return Outcome::kRefused;
    }
    created.op = op;
    created.context = backend.context;
    created.routed = backend.routed;
    if (nothing_to_run) return Outcome::kPrepared;
    if (op->supports != nullptr) {
        int32_t refused = -1;
        const nnplug_status supported = op->supports(backend.context, &desc, &refused);
        if (supported != NNPLUG_OK) {
            const char* text = backend.plugin->last_error(backend.context);
            const bool named = refused >= 0 && static_cast<size_t>(refused) < schema.operands.size();
            reason = fmt::format(
                "{}{}{}", named ? schema.operands[refused].name : "", named ? " " : "",
                text && *text ? text : fmt::format("refused by backend '{}'", backend.plugin->name));
            status = aclnn_status_from(supported);
            return Outcome::kRefused;
        }
    }
    const nnplug_status prepared =
        op->prepare(backend.context, &desc, &created.plan, &created.workspace_bytes);
    if (prepared != NNPLUG_OK) {
        const char* text = backend.plugin->last_error(backend.context);
        set_last_error("{}: {}", schema.api, text && *text ? text : "the backend failed without a message");
        status = aclnn_status_from(prepared);
        return Outcome::kFailed;
    }
    return Outcome::kPrepared;
}

aclnnStatus prepare_executor(Runtime& runtime, const OpSchema& schema, const nnplug_op_desc& desc,
                             bool nothing_to_run, const aclTensor* const* tensors, uint64_t* workspace_size,
                             aclOpExecutor** executor) {
    auto created = std::make_unique<aclOpExecutor>();
    created->desc = desc;
    created->device = runtime.current_device();
    created->api = schema.api;
    created->schema = &schema;
    std::copy(tensors, tensors + schema.operands.size(), created->tensors);
    created->nothing_to_run = nothing_to_run;
    plan_empty_values(schema, desc, nothing_to_run, *created);
    for (int32_t slot = 0; slot < desc.operand_count; ++slot) {
        if (created->empty_values[slot] == nullptr) continue;
        const char* what = schema.operands[static_cast<size_t>(slot)].name;
        if (!runtime.check_on_current_device(schema.api, what, desc.operands[slot].data))
            return ACLNN_ERR_PARAM_INVALID;
    }
    if (!nothing_to_run)
        if (const aclnnStatus status = check_operand_devices(runtime, schema.api, schema, desc))
            return status;
    if (const aclnnStatus status = check_operand_extents(runtime, schema.api, schema, desc)) return status;

    OpRouting& routing = runtime.routing();
    const RouteTarget& target = routing.target(schema.kind);
    aclnnStatus status = ACLNN_SUCCESS;
    std::string reason;
    Outcome outcome = try_backend(runtime, schema, desc, nothing_to_run, target, *created, status, reason);
    const RouteTarget* fallback = routing.fallback();
    if (outcome == Outcome::kRefused && fallback != nullptr && fallback->name != target.name) {
        routing.warn_once(fmt::format("{}\n{}", schema.api, reason),
                          fmt::format("{}: {}; its calls like this one go to the fallback backend '{}'",
                                      schema.api, reason, fallback->name));
        std::string fallback_reason;
        outcome =
            try_backend(runtime, schema, desc, nothing_to_run, *fallback, *created, status, fallback_reason);
        if (outcome == Outcome::kRefused)
            reason = fmt::format("{}; the fallback {}", reason, fallback_reason);
    }
    if (outcome == Outcome::kRefused) set_last_error("{}: {}", schema.api, reason);
    if (outcome != Outcome::kPrepared) return status;
    *workspace_size = created->workspace_bytes;
    *executor = runtime.register_executor(std::move(created));
    return ACLNN_SUCCESS;
}

// A routed op runs on its backend's stream in the caller's stream order: the caller's
// stream is drained first, and the routed run waited for before the call returns, as the
// two backends share no events.
aclnnStatus launch_routed(Runtime& runtime, const char* api, aclOpExecutor& executor, void* workspace,
                          uint64_t workspace_size, void* stream) {
    const nnplug_status drained = runtime.device_table().stream_synchronize(runtime.context(), stream);
    if (drained != NNPLUG_OK) {
        runtime.fail_from_backend(api, drained);
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    RoutedBackend& backend = *executor.routed;
    std::lock_guard lock(backend.launch_mutex());
    nnplug_status status = executor.op->launch(backend.context(), executor.plan, &executor.desc, workspace,
                                               workspace_size, backend.stream());
    if (status == NNPLUG_OK)
        status = backend.plugin().device->stream_synchronize(backend.context(), backend.stream());
    if (status == NNPLUG_OK) return ACLNN_SUCCESS;
    const char* reason = backend.plugin().last_error(backend.context());
    set_last_error("{}: backend '{}': {}", api, backend.plugin().name,
                   reason && *reason ? reason : "the backend failed without a message");
    return status == NNPLUG_ERR_INVALID_ARGUMENT ? ACLNN_ERR_PARAM_INVALID : ACLNN_ERR_RUNTIME_ERROR;
}

// The checks of a claimed executor before it runs; its fields stay valid while claimed.
aclnnStatus check_run_arguments(Runtime& runtime, const char* api, void* workspace, uint64_t workspace_size,
                                const aclOpExecutor& executor) {
    if (workspace_size < executor.workspace_bytes) {
        set_last_error("{}: workspaceSize {} is smaller than the {} bytes the first phase asked for", api,
                       workspace_size, executor.workspace_bytes);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (workspace == nullptr && executor.workspace_bytes > 0) {
        set_last_error("{}: workspace is null but {} bytes were asked for", api, executor.workspace_bytes);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (executor.workspace_bytes > 0 && !runtime.check_on_current_device(api, "workspace", workspace))
        return ACLNN_ERR_PARAM_INVALID;
    // The backend is told of all workspaceSize bytes: they must fit the block they start in.
    if (!runtime.check_within_block(api, "workspace", workspace, workspace_size))
        return ACLNN_ERR_PARAM_INVALID;
    return ACLNN_SUCCESS;
}

aclnnStatus launch_claimed(Runtime& runtime, const char* api, void* workspace, uint64_t workspace_size,
                           aclOpExecutor* executor, void* resolved) {
    if (executor->writes_empty_values()) return write_empty_values(runtime, *executor, resolved);
    if (executor->nothing_to_run) return ACLNN_SUCCESS;  // an empty self: nothing to write
    if (executor->routed != nullptr)
        return launch_routed(runtime, api, *executor, workspace, workspace_size, resolved);
    const nnplug_status status = executor->op->launch(runtime.context(), executor->plan, &executor->desc,
                                                      workspace, workspace_size, resolved);
    if (status == NNPLUG_OK) return ACLNN_SUCCESS;
    runtime.fail_from_backend(api, status);
    // A bad handle here is a stream another thread destroyed after it was resolved.
    return status == NNPLUG_ERR_INVALID_ARGUMENT || status == NNPLUG_ERR_BAD_HANDLE ? ACLNN_ERR_PARAM_INVALID
                                                                                    : ACLNN_ERR_RUNTIME_ERROR;
}

aclnnStatus run_executor(const char* api, void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                         aclrtStream stream) {
    RuntimeLease runtime(api);
    if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
    // Claimed at once, so that an aclDestroyAclOpExecutor racing this call cannot free it.
    if (const aclnnStatus status = runtime->claim(api, executor)) return status;
    bool ran = false;
    struct Finish {
        Runtime& runtime;
        aclOpExecutor* executor;
        const bool& ran;
        ~Finish() { runtime.finish_run(executor, ran); }
    } finish{*runtime, executor, ran};
    if (const aclnnStatus status = check_run_arguments(*runtime, api, workspace, workspace_size, *executor))
        return status;
    if (executor->moved.load() && !executor->nothing_to_run) {  // aclSetTensorAddr moved an operand
        if (const aclnnStatus status = check_output_overlap(api, *executor->schema, executor->desc))
            return status;
        executor->moved = false;
    }
    void* resolved = runtime->resolve_stream(api, stream);
    if (resolved == nullptr) return ACLNN_ERR_PARAM_INVALID;
    ran = true;
    return launch_claimed(*runtime, api, workspace, workspace_size, executor, resolved);
}

// Whether an entry point passes each attribute in the type its schema declares.
bool attr_types_match(const OpSchema& schema, const AttrValue* attrs, size_t count) {
    for (size_t a = 0; a < count; ++a) {
        const AttrType declared = schema.attrs[a].type;
        const AttrType given = attrs[a].type;
        if (given != declared && !(declared == AttrType::kFloat && given == AttrType::kDouble)) return false;
    }
    return true;
}

}  // namespace

aclnnStatus first_phase(const OpSchema& schema, const aclTensor* const* tensors, size_t tensor_count,
                        const AttrValue* attrs, size_t attr_count, uint64_t* workspace_size,
                        aclOpExecutor** executor) noexcept {
    try {
        RuntimeLease runtime(schema.api);
        if (!runtime) return ACLNN_ERR_RUNTIME_ERROR;
        if (workspace_size == nullptr || executor == nullptr) {
            set_last_error("{}: {} is null", schema.api,
                           workspace_size == nullptr ? "workspaceSize" : "executor");
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        if (tensor_count != schema.operands.size() || attr_count != schema.attrs.size() ||
            tensor_count > TensorHold::kMaxTensors || !attr_types_match(schema, attrs, attr_count)) {
            set_last_error(
                "{}: internal error: the entry point passes {} tensors and {} attributes, its schema "
                "has {} and {} (or their types differ)",
                schema.api, tensor_count, attr_count, schema.operands.size(), schema.attrs.size());
            return ACLNN_ERR_INNER;
        }
        // The call's tensors stay allocated until it returns, whatever other threads destroy.
        // One that was not live at the start is replaced by a tensor that never is, so the
        // planner reports it by name and never reads it, even if its address is reused.
        static const aclTensor kNeverLive{};
        const TensorHold hold(tensors, tensor_count);
        const aclTensor* held[TensorHold::kMaxTensors];
        for (size_t i = 0; i < tensor_count; ++i) {
            const aclTensor* given = tensors[i];
            held[i] = given == nullptr || hold.held(i) ? given : &kNeverLive;
        }
        // The dtype and SoC rules are those of the backend the op is routed to.
        const Candidate backend = candidate_of(*runtime, runtime->routing().target(schema.kind));
        const DeviceTraits device{soc_name_of(*backend.plugin, backend.context),
                                  backend.plugin->dtype_mask(backend.context)};
        const OpCall call{held, attrs};
        nnplug_op_desc desc;
        bool empty_self = false;
        if (const aclnnStatus status = plan_op(schema, call, device, desc, empty_self)) return status;
        return prepare_executor(*runtime, schema, desc, empty_self, tensors, workspace_size, executor);
    } catch (const std::bad_alloc&) {
        set_last_error("{}: out of host memory", schema.api);
        return ACLNN_ERR_INNER;
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", schema.api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

aclnnStatus second_phase(const OpSchema& schema, void* workspace, uint64_t workspace_size,
                         aclOpExecutor* executor, aclrtStream stream) noexcept {
    try {
        return run_executor(schema.api, workspace, workspace_size, executor, stream);
    } catch (const std::exception& exception) {
        set_last_error("{}: internal error: {}", schema.api, exception.what());
        return ACLNN_ERR_INNER;
    }
}

}  // namespace nnplug
