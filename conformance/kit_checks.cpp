// The kit's groups that do not compare numbers: every first-phase error with its code, the
// second phase's misuse, empty calls, a host-memory operand (a refusal must be well-formed),
// and the device memory rules of aclrtMalloc, aclrtMemcpy, aclrtMemset and aclrtFree; and two
// checks of the random group: views past 2^31 elements, a gradient's finite differences.
#include <nnplug/op_schema.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#include "kit_internal.h"

namespace nnplug::conformance {
namespace {

constexpr float kSentinel = 1234.5f;

// The arguments of one call, built from a valid one and then spoiled.
struct Call {
    std::vector<const aclTensor*> tensors;
    std::vector<AttrArg> attrs;
    bool null_workspace_size = false, null_executor = false;
};

struct ErrorCase {
    std::string name;
    aclnnStatus status;
    std::string fragment;  // a part of the message
    std::function<void(Call&)> spoil;
};

bool is_loss(const OpUnderTest& op) {
    return op.schema.reducing;
}

int slot_of(const OpUnderTest& op, const std::string& role) {
    for (size_t i = 0; i < op.operands.size(); ++i)
        if (op.operands[i] == role) return static_cast<int>(i);
    return -1;
}

// Tensors the error cases swap in; all freed with the object.
class Scratch {
public:
    Scratch() {
        if (aclrtMalloc(&device_, 4096, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            throw std::runtime_error(std::string("aclrtMalloc: ") + aclGetRecentErrMsg());
        aclrtMemset(device_, 4096, 0, 4096);
    }
    ~Scratch() {
        for (aclTensor* t : tensors_) aclDestroyTensor(t);
        aclrtFree(device_);
    }
    // A tensor over the scratch buffer (zeros: 0.0 in every float dtype), or over `data`
    // holding storage_elements elements.
    const aclTensor* make(const std::vector<int64_t>& view, aclDataType dtype,
                          std::vector<int64_t> strides = {}, int64_t offset = 0,
                          aclFormat format = ACL_FORMAT_ND, void* data = nullptr,
                          int64_t storage_elements = 256) {
        if (strides.empty()) strides = contiguous_strides(view);
        const std::vector<int64_t> storage = {storage_elements};
        aclTensor* t = aclCreateTensor(view.data(), view.size(), dtype, strides.data(), offset, format,
                                       storage.data(), storage.size(), data != nullptr ? data : device_);
        if (t == nullptr) throw std::runtime_error(std::string("aclCreateTensor: ") + aclGetRecentErrMsg());
        tensors_.push_back(t);
        return t;
    }

private:
    void* device_ = nullptr;
    std::vector<aclTensor*> tensors_;
};

// A real attribute with a range (from the published schema) refused below it, above it and
// as NaN.
void append_attr_cases(const OpUnderTest& op, std::vector<ErrorCase>& cases) {
    const nnplug_op_schema& schema = published_schema(op);
    for (size_t a = 1; a < schema.attr_count; ++a) {
        const nnplug_attr_schema& attr = schema.attrs[a];
        const bool real = attr.type == NNPLUG_ATTR_ARG_DOUBLE || attr.type == NNPLUG_ATTR_ARG_FLOAT;
        if (!real || attr.range == nullptr) continue;
        std::vector<std::pair<std::string, double>> values = {{"nan", std::nan("")}};
        if (std::isfinite(attr.min_real)) values.emplace_back("below", attr.min_real - 1.0);
        if (std::isfinite(attr.max_real)) values.emplace_back("above", attr.max_real + 1.0);
        for (const auto& [word, value] : values)
            cases.push_back({std::string(attr.name) + "_" + word, ACLNN_ERR_PARAM_INVALID,
                             std::string(attr.name) + " ", [a, type = attr.type, value = value](Call& call) {
                                 call.attrs.at(a) = type == NNPLUG_ATTR_ARG_FLOAT
                                                        ? AttrArg::float32(static_cast<float>(value))
                                                        : AttrArg::real(value);
                             }});
    }
}

std::vector<ErrorCase> error_cases(const OpUnderTest& op, Scratch& scratch, const DeviceTensor& self) {
    std::vector<ErrorCase> cases;
    const int out = slot_of(op, op.output);
    const nnplug_op_schema& schema = published_schema(op);
    for (const std::string& role : op.operands) {
        const int slot = slot_of(op, role);
        // Messages name an operand as the aclnn signature does, which may differ from its
        // role (CANN's gradOut plays the role gradOutput).
        const std::string name = schema.operands[slot].name;
        if (role != "weight" && role != "posWeight")
            cases.push_back({"null_" + role, ACLNN_ERR_PARAM_NULLPTR, name + " is null",
                             [slot](Call& call) { call.tensors[slot] = nullptr; }});
        cases.push_back(
            {"dtype_int32_" + role, ACLNN_ERR_PARAM_INVALID, "has dtype int32", [slot, &scratch](Call& call) {
                 call.tensors[slot] = scratch.make({4, 5}, ACL_INT32);
             }});
    }
    cases.push_back({"null_workspace_size", ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is null",
                     [](Call& call) { call.null_workspace_size = true; }});
    cases.push_back({"null_executor", ACLNN_ERR_PARAM_NULLPTR, "executor is null",
                     [](Call& call) { call.null_executor = true; }});
    cases.push_back({"rank_9", ACLNN_ERR_PARAM_INVALID, "at most 8", [&op, &scratch](Call& call) {
                         const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 4, 5};
                         for (const char* role : {"self", "target", op.output.c_str()})
                             call.tensors[slot_of(op, role)] = scratch.make(nine, ACL_FLOAT);
                     }});
    cases.push_back({"shape_target", ACLNN_ERR_PARAM_INVALID, "target shape", [&op, &scratch](Call& call) {
                         call.tensors[slot_of(op, "target")] = scratch.make({3, 5}, ACL_FLOAT);
                     }});
    for (const char* role : {"gradOutput", "weight", "posWeight"}) {
        const int slot = slot_of(op, role);
        if (slot < 0) continue;
        cases.push_back(
            {std::string("broadcast_") + role, ACLNN_ERR_PARAM_INVALID, "cannot broadcast",
             [slot, &scratch](Call& call) { call.tensors[slot] = scratch.make({4}, ACL_FLOAT); }});
    }
    cases.push_back({"shape_" + op.output, ACLNN_ERR_PARAM_INVALID, op.output + " shape [5,4]",
                     [out, &scratch](Call& call) {
                         call.tensors[out] = scratch.make({5, 4}, ACL_FLOAT);
                     }});
    // (A loss takes any reduction but none as reducing, so its out is one element here.)
    for (int64_t reduction : {op.schema.max_reduction + 1, int64_t{-1}})
        cases.push_back({"reduction_" + std::to_string(reduction), ACLNN_ERR_PARAM_INVALID,
                         "reduction " + std::to_string(reduction),
                         [&op, out, reduction, &scratch](Call& call) {
                             call.attrs[0] = reduction;
                             if (is_loss(op)) call.tensors[out] = scratch.make({}, ACL_FLOAT);
                         }});
    if (is_loss(op))
        cases.push_back({"reduced_out_shape", ACLNN_ERR_PARAM_INVALID,
                         op.schema.reduced_zero_d_only ? "must be [] (0-d)" : "must be [] or [1]",
                         [](Call& call) { call.attrs[0] = 1; }});
    append_attr_cases(op, cases);
    if (op.schema.out_dtype_is_target)
        cases.push_back({"dtype_" + op.output + "_not_target", ACLNN_ERR_PARAM_INVALID, "must be equal",
                         [out, &scratch](Call& call) {
                             call.tensors[out] = scratch.make({4, 5}, ACL_FLOAT16);
                         }});
    if (op.schema.checks_format)
        cases.push_back({"format_target", ACLNN_ERR_PARAM_INVALID, "format", [&op, &scratch](Call& call) {
                             call.tensors[slot_of(op, "target")] =
                                 scratch.make({4, 5}, ACL_FLOAT, {}, 0, ACL_FORMAT_NCHW);
                         }});
    cases.push_back({op.output + "_overlaps_itself", ACLNN_ERR_PARAM_INVALID, "overlap itself",
                     [out, &scratch](Call& call) {
                         call.tensors[out] = scratch.make({4, 5}, ACL_FLOAT, {0, 1});
                     }});
    cases.push_back(
        {op.output + "_overlaps_self", ACLNN_ERR_PARAM_INVALID, "share memory",
         [out, &self, &scratch](Call& call) {
             // out one element past self's start in self's buffer: not the same view.
             call.tensors[out] = scratch.make({4, 5}, ACL_FLOAT, {5, 1}, 1, ACL_FORMAT_ND, self.data(), 21);
         }});
    return cases;
}

// A valid call: every operand [4,5] float32 and present, reduction none; owns its tensors.
struct ValidCall {
    explicit ValidCall(const OpUnderTest& op) {
        call.attrs = call_attrs(op, 0);
        for (const std::string& role : op.operands) {
            const bool is_out = role == op.output;
            // self's buffer holds 21 elements, so that an output may be shifted into it.
            std::vector<float> values(role == "self" ? 21 : 20, is_out ? kSentinel : 0.25f);
            const std::vector<int64_t> storage = {static_cast<int64_t>(values.size())};
            tensors.push_back(std::make_unique<DeviceTensor>(values, storage, std::vector<int64_t>{4, 5},
                                                             std::vector<int64_t>{5, 1}, 0, ACL_FLOAT));
            call.tensors.push_back(tensors.back()->get());
            if (is_out) out = tensors.back().get();
            if (role == "self") self = tensors.back().get();
        }
    }
    std::vector<std::unique_ptr<DeviceTensor>> tensors;
    Call call;
    const DeviceTensor* out = nullptr;
    const DeviceTensor* self = nullptr;
};

void record(KitContext& kit, const OpUnderTest& op, const std::string& name, const std::string& fault) {
    if (fault.empty())
        kit.report.pass(kGroupErrors, op.api);
    else
        kit.report.fail(kGroupErrors, op.api, name, fault);
}

// The first phase of the valid call spoiled by `error`: refused with its status and a one-line
// message naming the op, no executor, out untouched; "" or what broke.
std::string first_phase_fault(const OpUnderTest& op, const ValidCall& valid, const ErrorCase& error,
                              const std::vector<uint8_t>& out_before) {
    Call call = valid.call;
    error.spoil(call);
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus status =
        op.first_phase(call.tensors, call.attrs, call.null_workspace_size ? nullptr : &workspace,
                       call.null_executor ? nullptr : &executor);
    const std::string message = aclGetRecentErrMsg();
    std::string fault;
    if (status != error.status)
        fault = "status " + std::to_string(status) + ", expected " + std::to_string(error.status) +
                (status == ACLNN_SUCCESS ? "" : " (" + message + ")");
    else if (message.find(error.fragment) == std::string::npos || message.rfind(op.api, 0) != 0)
        fault = "the message does not name the op and say '" + error.fragment + "': " + message;
    else if (message.find('\n') != std::string::npos)
        fault = "the message is not one line: " + message;
    else if (executor != nullptr)
        fault = "a refused call handed out an executor";
    else if (valid.out->storage_bytes() != out_before)
        fault = "a refused call wrote into its output";
    if (status == ACLNN_SUCCESS && executor != nullptr) aclDestroyAclOpExecutor(executor);
    return fault;
}

// The second phase with a null executor: ACLNN_ERR_PARAM_NULLPTR, saying so.
void check_null_executor(KitContext& kit, const OpUnderTest& op) {
    const aclnnStatus status = op.second_phase(nullptr, 0, nullptr, nullptr);
    const std::string message = aclGetRecentErrMsg();
    std::string fault;
    if (status != ACLNN_ERR_PARAM_NULLPTR || message.find("executor is null") == std::string::npos)
        fault = "status " + std::to_string(status) + " (" + message + "), expected " +
                std::to_string(ACLNN_ERR_PARAM_NULLPTR);
    record(kit, op, "run_null_executor", fault);
}

// An executor already consumed by its run: a second run is ACLNN_ERR_PARAM_INVALID, saying so.
void check_consumed_executor(KitContext& kit, const OpUnderTest& op, const Call& valid) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    std::string fault;
    void* workspace = nullptr;
    if (op.first_phase(valid.tensors, valid.attrs, &workspace_size, &executor) != ACLNN_SUCCESS) {
        fault = std::string("the valid call was refused: ") + aclGetRecentErrMsg();
    } else {
        if (workspace_size > 0) aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
        if (op.second_phase(workspace, workspace_size, executor, nullptr) != ACLNN_SUCCESS ||
            aclrtSynchronizeStream(nullptr) != ACL_SUCCESS)
            fault = std::string("the valid call failed: ") + aclGetRecentErrMsg();
        else if (op.second_phase(workspace, workspace_size, executor, nullptr) != ACLNN_ERR_PARAM_INVALID)
            fault = "running a consumed executor again was not ACLNN_ERR_PARAM_INVALID";
        else if (std::string(aclGetRecentErrMsg()).find("consumed") == std::string::npos)
            fault = std::string("running a consumed executor: the message does not say so: ") +
                    aclGetRecentErrMsg();
        if (workspace != nullptr) aclrtFree(workspace);
    }
    record(kit, op, "run_consumed_executor", fault);
}

// An empty self: workspace 0, and the run writes nothing into an elementwise output.
void check_empty_self(KitContext& kit, const OpUnderTest& op, const Call& valid, Scratch& scratch) {
    std::string fault;
    const std::vector<int64_t> empty = {0, 5};
    Call call = valid;
    for (size_t i = 0; i < op.operands.size(); ++i) call.tensors[i] = scratch.make(empty, ACL_FLOAT);
    uint64_t workspace_size = 1;
    aclOpExecutor* executor = nullptr;
    if (op.first_phase(call.tensors, call.attrs, &workspace_size, &executor) != ACLNN_SUCCESS)
        fault = std::string("refused: ") + aclGetRecentErrMsg();
    else if (workspace_size != 0)
        fault = "asked for a workspace of " + std::to_string(workspace_size) + " bytes";
    else if (op.second_phase(nullptr, 0, executor, nullptr) != ACLNN_SUCCESS ||
             aclrtSynchronizeStream(nullptr) != ACL_SUCCESS)
        fault = std::string("the run failed: ") + aclGetRecentErrMsg();
    record(kit, op, "empty_self", fault);
}

}  // namespace

void run_error_group(KitContext& kit, const OpUnderTest& op) {
    const char* group = kGroupErrors;
    try {
        Scratch scratch;
        const ValidCall valid(op);
        const auto out_before = valid.out->storage_bytes();
        for (const ErrorCase& error : error_cases(op, scratch, *valid.self)) {
            running(group, op.api, error.name);
            record(kit, op, error.name, first_phase_fault(op, valid, error, out_before));
        }
        // The second phase's misuse: a null executor, and an executor already consumed by its run.
        check_null_executor(kit, op);
        check_consumed_executor(kit, op, valid.call);
        check_empty_self(kit, op, valid.call, scratch);
    } catch (const std::exception& error) {
        kit.report.fail(group, op.api, "setup", error.what());
    }
}

// A host-memory operand: the backend either computes the call as with device memory or
// refuses it at the first phase with a message; the default stream is used.
void run_refusal_group(KitContext& kit, const OpUnderTest& op) {
    const RandomCase c = concurrency_case(op, kit.seed + 7, {3, 70});
    const char* group = kGroupRefusals;
    running(group, op.api, "host_memory_self");
    try {
        UploadedCase uploaded(c.golden);
        std::string message;
        if (uploaded.run(nullptr, message) != ACLNN_SUCCESS) {
            kit.report.fail(group, op.api, "host_memory_self", "the device-memory call failed: " + message);
            return;
        }
        const auto device_result = uploaded.output();
        uploaded.reset_output();
        const GoldenTensor& self = c.golden.tensors.at("self");
        std::vector<uint8_t> host(self.storage);
        aclTensor* host_self =
            aclCreateTensor(self.view.data(), self.view.size(), self.dtype, self.strides.data(), self.offset,
                            ACL_FORMAT_ND, self.storage_shape.data(), self.storage_shape.size(), host.data());
        std::vector<const aclTensor*> arguments = uploaded.arguments();
        arguments[slot_of(op, "self")] = host_self;
        uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus first = op.first_phase(arguments, c.golden.attrs, &workspace_size, &executor);
        std::string fault;
        if (first != ACLNN_SUCCESS) {
            message = aclGetRecentErrMsg();
            fault = refusal_fault(op, first, message);
            if (fault.empty() && message.find("self") == std::string::npos)
                fault = "the refusal does not name the operand self: " + message;
            if (fault.empty()) {
                kit.report.refuse(group, op.api, "host_memory_self", message);
                aclDestroyTensor(host_self);
                return;
            }
        } else {
            void* workspace = nullptr;
            if (workspace_size > 0) aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
            if (op.second_phase(workspace, workspace_size, executor, nullptr) != ACLNN_SUCCESS ||
                aclrtSynchronizeStream(nullptr) != ACL_SUCCESS)
                fault = std::string("accepted at the first phase, then failed: ") + aclGetRecentErrMsg();
            else if (uploaded.output() != device_result)
                fault = "accepted, but the result differs from the same call with device memory";
            if (workspace != nullptr) aclrtFree(workspace);
        }
        aclDestroyTensor(host_self);
        if (fault.empty())
            kit.report.pass(group, op.api);
        else
            kit.report.fail(group, op.api, "host_memory_self", fault);
    } catch (const std::exception& error) {
        kit.report.fail(group, op.api, "host_memory_self", error.what());
    }
}

namespace {

// One memory rule: "" when it holds, else what broke.
struct MemoryCase {
    const char* name;
    std::function<std::string()> check;
};

std::string code_fault(const char* what, aclError got, aclError want) {
    const std::string message = aclGetRecentErrMsg();
    if (got != want)
        return std::string(what) + " returned " + std::to_string(got) + ", expected " + std::to_string(want) +
               (message.empty() ? "" : " (" + message + ")");
    if (want != ACL_SUCCESS && message.empty()) return std::string(what) + " failed without a message";
    return "";
}

std::vector<uint8_t> pattern(size_t bytes, unsigned seed) {
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i)
        data[i] = static_cast<uint8_t>((i * 131 + size_t{seed} * 17 + (i >> 8)) & 0xff);
    return data;
}

// Blocks of odd and large sizes are 32-byte aligned and give back what was copied in.
std::string malloc_sizes_roundtrip() {
    for (size_t bytes : {size_t{1}, size_t{3}, size_t{32}, size_t{4097}, size_t{1} << 20}) {
        void* device = nullptr;
        if (auto f = code_fault("aclrtMalloc", aclrtMalloc(&device, bytes, ACL_MEM_MALLOC_HUGE_FIRST),
                                ACL_SUCCESS);
            !f.empty())
            return f + " for " + std::to_string(bytes) + " bytes";
        if (reinterpret_cast<uintptr_t>(device) % 32 != 0)
            return "aclrtMalloc(" + std::to_string(bytes) + ") is not 32-byte aligned";
        const auto data = pattern(bytes, static_cast<unsigned>(bytes));
        std::vector<uint8_t> back(bytes);
        aclrtMemcpy(device, bytes, data.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
        aclrtMemcpy(back.data(), bytes, device, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        aclrtFree(device);
        if (back != data) return std::to_string(bytes) + " bytes did not come back as they were copied in";
    }
    return std::string();
}

// Sixteen live blocks, each set to its own byte: none overwrites another.
std::string blocks_do_not_overlap() {
    std::vector<void*> blocks(16, nullptr);
    for (size_t i = 0; i < blocks.size(); ++i) {
        if (aclrtMalloc(&blocks[i], 1000, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            return std::string("aclrtMalloc failed: ") + aclGetRecentErrMsg();
        aclrtMemset(blocks[i], 1000, static_cast<int32_t>(i + 1), 1000);
    }
    std::string fault;
    for (size_t i = 0; i < blocks.size() && fault.empty(); ++i) {
        std::vector<uint8_t> back(1000);
        aclrtMemcpy(back.data(), 1000, blocks[i], 1000, ACL_MEMCPY_DEVICE_TO_HOST);
        for (uint8_t byte : back)
            if (byte != i + 1) fault = "block " + std::to_string(i) + " was overwritten by another";
    }
    for (void* block : blocks) aclrtFree(block);
    return fault;
}

// A device-to-device copy between offsets inside two blocks moves those bytes only.
std::string copy_device_to_device_at_offsets() {
    void *a = nullptr, *b = nullptr;
    aclrtMalloc(&a, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&b, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    const auto data = pattern(4096, 7);
    aclrtMemcpy(a, 4096, data.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemset(b, 4096, 0, 4096);
    std::string fault = code_fault("aclrtMemcpy device to device",
                                   aclrtMemcpy(static_cast<char*>(b) + 100, 3000, static_cast<char*>(a) + 7,
                                               2000, ACL_MEMCPY_DEVICE_TO_DEVICE),
                                   ACL_SUCCESS);
    std::vector<uint8_t> back(4096);
    aclrtMemcpy(back.data(), 4096, b, 4096, ACL_MEMCPY_DEVICE_TO_HOST);
    for (size_t i = 0; i < 4096 && fault.empty(); ++i) {
        const uint8_t want = i >= 100 && i < 2100 ? data[i - 100 + 7] : 0;
        if (back[i] != want) fault = "byte " + std::to_string(i) + " of the destination is wrong";
    }
    aclrtFree(a);
    aclrtFree(b);
    return fault;
}

// aclrtMemset from an offset inside a block sets those bytes only.
std::string memset_within_block() {
    void* a = nullptr;
    aclrtMalloc(&a, 256, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(a, 256, 0x11, 256);
    std::string fault =
        code_fault("aclrtMemset", aclrtMemset(static_cast<char*>(a) + 10, 246, 0x7f, 20), ACL_SUCCESS);
    std::vector<uint8_t> back(256);
    aclrtMemcpy(back.data(), 256, a, 256, ACL_MEMCPY_DEVICE_TO_HOST);
    for (size_t i = 0; i < 256 && fault.empty(); ++i)
        if (back[i] != (i >= 10 && i < 30 ? 0x7f : 0x11)) fault = "byte " + std::to_string(i) + " is wrong";
    aclrtFree(a);
    return fault;
}

// A block freed twice: the second aclrtFree is refused.
std::string free_twice_refused() {
    void* a = nullptr;
    aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    if (auto f = code_fault("the first aclrtFree", aclrtFree(a), ACL_SUCCESS); !f.empty()) return f;
    return code_fault("a second aclrtFree of one block", aclrtFree(a), ACL_ERROR_INVALID_PARAM);
}

// aclrtFree of host memory is refused.
std::string free_of_host_memory_refused() {
    std::vector<uint8_t> host(64);
    return code_fault("aclrtFree of host memory", aclrtFree(host.data()), ACL_ERROR_INVALID_PARAM);
}

// aclrtMalloc of 0 bytes is refused.
std::string malloc_zero_refused() {
    void* a = nullptr;
    return code_fault("aclrtMalloc of 0 bytes", aclrtMalloc(&a, 0, ACL_MEM_MALLOC_HUGE_FIRST),
                      ACL_ERROR_INVALID_PARAM);
}

// aclrtMalloc of 2^60 bytes is refused as a bad allocation.
std::string malloc_over_2e48_refused() {
    void* a = nullptr;
    return code_fault("aclrtMalloc of 2^60 bytes",
                      aclrtMalloc(&a, size_t{1} << 60, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_BAD_ALLOC);
}

// aclrtMalloc of 2^47 bytes is refused as more than the device holds.
std::string malloc_beyond_device_memory() {
    void* a = nullptr;
    const aclError status = aclrtMalloc(&a, size_t{1} << 47, ACL_MEM_MALLOC_HUGE_FIRST);
    if (status == ACL_SUCCESS) {
        aclrtFree(a);
        return std::string("128 TiB of device memory was handed out");
    }
    return code_fault("aclrtMalloc of 2^47 bytes", status, ACL_ERROR_RT_MEMORY_ALLOCATION);
}

// aclrtMemcpy of more bytes than destMax is refused.
std::string copy_past_dest_max_refused() {
    void* a = nullptr;
    aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    std::vector<uint8_t> host(128);
    std::string fault =
        code_fault("aclrtMemcpy with count above destMax",
                   aclrtMemcpy(a, 64, host.data(), 128, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    aclrtFree(a);
    return fault;
}

// Many rounds of aclrtMalloc and aclrtFree of one size all succeed.
std::string malloc_free_reuse() {
    for (int round = 0; round < 64; ++round) {
        void* a = nullptr;
        if (aclrtMalloc(&a, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            return "round " + std::to_string(round) + ": " + aclGetRecentErrMsg();
        if (aclrtFree(a) != ACL_SUCCESS)
            return "round " + std::to_string(round) + ": " + aclGetRecentErrMsg();
    }
    return std::string();
}

// Three asynchronous copies on one stream run in order.
std::string async_copy_in_stream_order() {
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS)
        return std::string("aclrtCreateStream: ") + aclGetRecentErrMsg();
    void *a = nullptr, *b = nullptr;
    aclrtMalloc(&a, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&b, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST);
    const auto data = pattern(1 << 16, 3);
    std::vector<uint8_t> back(1 << 16);
    std::string fault = code_fault(
        "aclrtMemcpyAsync",
        aclrtMemcpyAsync(a, 1 << 16, data.data(), 1 << 16, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
    if (fault.empty())
        fault = code_fault("aclrtMemcpyAsync",
                           aclrtMemcpyAsync(b, 1 << 16, a, 1 << 16, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                           ACL_SUCCESS);
    if (fault.empty())
        fault =
            code_fault("aclrtMemcpyAsync",
                       aclrtMemcpyAsync(back.data(), 1 << 16, b, 1 << 16, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                       ACL_SUCCESS);
    if (fault.empty())
        fault = code_fault("aclrtSynchronizeStream", aclrtSynchronizeStream(stream), ACL_SUCCESS);
    if (fault.empty() && back != data) fault = "three copies in stream order did not give the data back";
    aclrtFree(a);
    aclrtFree(b);
    aclrtDestroyStream(stream);
    return fault;
}

}  // namespace

void run_memory_group(KitContext& kit) {
    const char* group = kGroupMemory;
    const std::vector<MemoryCase> cases = {
        {"malloc_sizes_roundtrip", malloc_sizes_roundtrip},
        {"blocks_do_not_overlap", blocks_do_not_overlap},
        {"copy_device_to_device_at_offsets", copy_device_to_device_at_offsets},
        {"memset_within_block", memset_within_block},
        {"free_twice_refused", free_twice_refused},
        {"free_of_host_memory_refused", free_of_host_memory_refused},
        {"malloc_zero_refused", malloc_zero_refused},
        {"malloc_over_2e48_refused", malloc_over_2e48_refused},
        {"malloc_beyond_device_memory", malloc_beyond_device_memory},
        {"copy_past_dest_max_refused", copy_past_dest_max_refused},
        {"malloc_free_reuse", malloc_free_reuse},
        {"async_copy_in_stream_order", async_copy_in_stream_order},
    };
    for (const MemoryCase& c : cases) {
        running(group, "device", c.name);
        std::string fault;
        try {
            fault = c.check();
        } catch (const std::exception& error) {
            fault = error.what();
        }
        if (fault.empty())
            kit.report.pass(group, "device");
        else
            kit.report.fail(group, "device", c.name, fault);
    }
}

}  // namespace nnplug::conformance

namespace nnplug::conformance {
namespace {

// Element offsets past 2^31 (and byte offsets past 2^33): self's second row starts this far
// into its storage, so 32-bit index arithmetic wraps. Only the pages of the touched elements
// are ever written; the rest of the allocation stays virtual.
constexpr int64_t kFarRow = (int64_t{1} << 31) + 5;

// self as a [2, 3] float32 view whose rows are kFarRow elements apart; frees everything.
class SparseSelf {
public:
    explicit SparseSelf(const std::vector<float>& values) {
        const int64_t elements = kFarRow + 3;
        if (aclrtMalloc(&device_, static_cast<size_t>(elements) * 4, ACL_MEM_MALLOC_HUGE_FIRST) !=
            ACL_SUCCESS) {
            why_not_ = std::string("the device cannot hold the 8 GiB view: ") + aclGetRecentErrMsg();
            return;
        }
        for (int64_t row = 0; row < 2; ++row) {
            char* at = static_cast<char*>(device_) + row * kFarRow * 4;
            if (aclrtMemcpy(at, 12, values.data() + row * 3, 12, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
                throw std::runtime_error(std::string("aclrtMemcpy: ") + aclGetRecentErrMsg());
        }
        const std::vector<int64_t> view = {2, 3}, strides = {kFarRow, 1}, storage = {elements};
        tensor_ = aclCreateTensor(view.data(), view.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND,
                                  storage.data(), storage.size(), device_);
        if (tensor_ == nullptr)
            throw std::runtime_error(std::string("aclCreateTensor: ") + aclGetRecentErrMsg());
    }
    ~SparseSelf() {
        if (tensor_ != nullptr) aclDestroyTensor(tensor_);
        if (device_ != nullptr) aclrtFree(device_);
    }
    SparseSelf(const SparseSelf&) = delete;
    SparseSelf& operator=(const SparseSelf&) = delete;
    const aclTensor* get() const { return tensor_; }
    const std::string& why_not() const { return why_not_; }

private:
    void* device_ = nullptr;
    aclTensor* tensor_ = nullptr;
    std::string why_not_;
};

}  // namespace

namespace {

// A value of role for a finite-difference check: away from the clamps and edges where a
// central difference would straddle a kink (a probability near 0 or 1; x = y, and
// |x - y| = 1 for a real target, which lies 0.25 to 0.75 from self).
float smooth_value(const std::string& role, const KitRules& kit, float self, std::mt19937_64& random) {
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    if (role == "self")
        return kit.self_values == SelfValues::kProbability ? 0.15f + 0.7f * unit(random)
               : kit.self_values == SelfValues::kLogit     ? -3.0f + 6.0f * unit(random)
                                                           : -2.0f + 4.0f * unit(random);
    if (role == "target" && kit.target_values == TargetValues::kSign) return random() % 2 ? 1.0f : -1.0f;
    if (role == "target" && kit.target_values == TargetValues::kPositive) return 0.2f + 0.7f * unit(random);
    if (role == "target" && kit.self_values == SelfValues::kReal)
        return self + (random() % 2 ? 1.0f : -1.0f) * (0.25f + 0.5f * unit(random));
    if (role == "target") return unit(random);
    return 0.5f + unit(random);  // weight, posWeight
}

// The loss (reduction sum) of self_values with the other inputs as given, on the backend.
double loss_sum(const OpUnderTest& loss, const std::map<std::string, std::vector<float>>& inputs) {
    std::vector<std::unique_ptr<DeviceTensor>> owned;
    std::vector<const aclTensor*> tensors;
    for (const std::string& role : loss.operands) {
        const bool out = role == loss.output;
        const auto found = inputs.find(role);
        if (!out && found == inputs.end()) {
            tensors.push_back(nullptr);
            continue;
        }
        owned.push_back(out ? std::make_unique<DeviceTensor>(std::vector<float>{0.0f}, std::vector<int64_t>{})
                            : std::make_unique<DeviceTensor>(
                                  found->second, std::vector<int64_t>{int64_t(found->second.size())}));
        tensors.push_back(owned.back()->get());
    }
    if (run_op(loss, tensors, call_attrs(loss, NNPLUG_REDUCTION_SUM)) != ACLNN_SUCCESS)
        throw std::runtime_error(std::string(loss.api) + ": " + aclGetRecentErrMsg());
    for (size_t i = 0; i < loss.operands.size(); ++i)
        if (loss.operands[i] == loss.output) return owned.back()->storage()[0];
    return 0;
}

}  // namespace

// A gradient the schema links to its loss (gradient_of) against central differences of the
// backend's own loss: float32, reduction sum, 24 elements of self, the other inputs fixed.
void run_finite_differences(KitContext& kit, const OpUnderTest& op) {
    const char* group = kGroupRandom;
    const std::string name = "finite_differences";
    const nnplug_op_schema* schema = nullptr;
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i)
        if (std::strcmp(nnplug_op_schema_at(i)->api, op.api) == 0) schema = nnplug_op_schema_at(i);
    if (schema == nullptr || schema->gradient_of < 0) return;
    running(group, op.api, name);
    try {
        const char* loss_api = nnplug_op_api_name(schema->gradient_of);
        const auto loss = std::find_if(op_catalog().begin(), op_catalog().end(), [&](const OpUnderTest& o) {
            return std::strcmp(o.api, loss_api) == 0;
        });
        if (loss == op_catalog().end())
            throw std::runtime_error(std::string("no catalog entry for ") + loss_api);
        std::mt19937_64 random(kit.seed + 31);
        std::map<std::string, std::vector<float>> inputs;
        for (const std::string& role : loss->operands)  // self comes before target
            if (role != loss->output)
                for (size_t e = 0; e < 24; ++e)
                    inputs[role].push_back(smooth_value(
                        role, loss->kit, e < inputs["self"].size() ? inputs["self"][e] : 0.0f, random));
        // The gradient of the sum with gradOutput 1 (0-d: it broadcasts to self).
        std::vector<std::unique_ptr<DeviceTensor>> owned;
        std::vector<const aclTensor*> tensors;
        for (const std::string& role : op.operands) {
            const bool known = inputs.count(role) != 0;
            if (role == "gradOutput")
                owned.push_back(
                    std::make_unique<DeviceTensor>(std::vector<float>{1.0f}, std::vector<int64_t>{}));
            else if (role == op.output || known)
                owned.push_back(std::make_unique<DeviceTensor>(
                    known ? inputs[role] : std::vector<float>(24, 0.0f), std::vector<int64_t>{24}));
            tensors.push_back(role == "gradOutput" || role == op.output || known ? owned.back()->get()
                                                                                 : nullptr);
        }
        if (run_op(op, tensors, call_attrs(op, NNPLUG_REDUCTION_SUM)) != ACLNN_SUCCESS)
            throw std::runtime_error(std::string(op.api) + ": " + aclGetRecentErrMsg());
        const std::vector<float> analytic = owned.back()->storage();
        const std::string wrt = op.kit.gradient_wrt;
        for (size_t e = 0; e < 24; ++e) {
            const float x = inputs[wrt][e], step = 1e-2f * std::max(1.0f, std::abs(x));
            auto shifted = inputs;
            shifted[wrt][e] = x + step;
            const double up = loss_sum(*loss, shifted);
            shifted[wrt][e] = x - step;
            const double difference = (up - loss_sum(*loss, shifted)) / (2.0 * step);
            if (std::abs(difference - analytic[e]) > 2e-3 + 2e-2 * std::abs(difference))
                return kit.report.fail(group, op.api, name,
                                       "element " + std::to_string(e) + " of the gradient is " +
                                           std::to_string(analytic[e]) + ", the loss's central difference " +
                                           std::to_string(difference));
        }
        kit.report.pass(group, op.api);
    } catch (const std::exception& error) {
        kit.report.fail(group, op.api, name, error.what());
    }
}

// The op with self dense, then with self as the sparse view over the same values: the
// outputs must be the same bits (a backend's layout never changes a result).
void run_large_offset_case(KitContext& kit, const OpUnderTest& op) {
    const char* group = kGroupRandom;
    const std::string name = "self_offsets_past_2_31";
    running(group, op.api, name);
    try {
        const std::vector<float> self_values = {0.125f, 0.25f, 0.375f, 0.5f, 0.625f, 0.75f};
        std::vector<std::unique_ptr<DeviceTensor>> owned;
        std::vector<const aclTensor*> tensors;
        const DeviceTensor* out = nullptr;
        int self_slot = -1;
        for (const std::string& role : op.operands) {
            const bool is_out = role == op.output;
            owned.push_back(std::make_unique<DeviceTensor>(
                role == "self" ? self_values : std::vector<float>(6, is_out ? 1234.5f : 0.3f),
                std::vector<int64_t>{2, 3}));
            if (role == "self") self_slot = static_cast<int>(tensors.size());
            if (is_out) out = owned.back().get();
            tensors.push_back(owned.back()->get());
        }
        if (run_op(op, tensors, call_attrs(op, 0)) != ACLNN_SUCCESS) {
            kit.report.refuse(group, op.api, name, std::string("the dense call: ") + aclGetRecentErrMsg());
            return;
        }
        const std::vector<uint8_t> dense = out->storage_bytes();
        SparseSelf sparse(self_values);
        if (sparse.get() == nullptr) {
            kit.report.refuse(group, op.api, name, sparse.why_not());
            return;
        }
        tensors[static_cast<size_t>(self_slot)] = sparse.get();
        out->upload(std::vector<uint8_t>(dense.size(), 0));
        if (const aclnnStatus status = run_op(op, tensors, call_attrs(op, 0))) {
            kit.report.refuse(group, op.api, name,
                              "status " + std::to_string(status) + ": " + aclGetRecentErrMsg());
            return;
        }
        const std::vector<float> got = out->storage(), want = decode(dense, ACL_FLOAT);
        for (size_t i = 0; i < want.size(); ++i)
            if (std::memcmp(&got[i], &want[i], 4) != 0) {
                kit.report.fail(group, op.api, name,
                                "element " + std::to_string(i) + " is " + std::to_string(got[i]) +
                                    " with self's rows 2^31 elements apart, " + std::to_string(want[i]) +
                                    " with self dense (64-bit element offsets?)");
                return;
            }
        kit.report.pass(group, op.api);
    } catch (const std::exception& e) {
        kit.report.fail(group, op.api, name, e.what());
    }
}

}  // namespace nnplug::conformance
