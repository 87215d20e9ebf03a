// libFuzzer target: tensors and every aclnn op through the public C API, both phases,
// on cpu_tbb and atlas_emu.
//
// The input is read front to back (past its end every byte reads 0):
//   backend  byte % 3: cpu_tbb, atlas_emu Ascend910B, atlas_emu Ascend910 (no bfloat16);
//            ignored when NNPLUG_BACKEND is set, which then picks the backend of every run
//   op       byte % (the number of ops): the conformance catalog's order (op_catalog.h):
//            BinaryCrossEntropy, ...Backward, ...WithLogits, ...WithLogitsBackward,
//            ...WithLogitsTargetBackward, MseLoss, MseLossBackward
//   flags    byte: 1 own stream, 2 repeatable executor (run twice), 4 run a consumed executor
//            again, 8 workspaceSize one byte short, 16 null workspace, 32 destroy the tensors
//            between the phases
//   reduction byte: 0 to 2, or 3 to 6 give -1, 3, 100, INT64_MIN
//   self shape: rank byte % 10 (up to 9: more than the ops accept), a byte per dimension
//            (0 to 4, or from 240 on a special size: 5 ... 1000, INT64_MAX, -1, 2^31, 2^62);
//            at most 4096 elements of ordinary dimensions
//   per operand, in signature order: shape (as self, broadcast to it, [], [1], its own,
//            absent), dtype (float32/16, bfloat16, other dtypes, any int32), format (any
//            int32), strides (contiguous, padded, column-major, zero, arbitrary, huge), offset,
//            storage (exact, with slack, the view's dims, one element short, 0-d), data (own
//            device buffer from aclrtMalloc sized from the storage, null, host memory,
//            another operand's buffer — overlapping outputs and inputs — or a destroyed tensor)
//   the rest fills the buffers, in the order they were made, storage and guard bytes (then
//   a fixed pattern: 0x3e bytes).
//
// NNPLUG_FUZZ_STATS=1 prints at exit how many inputs each backend took and how many calls
// of each op got past the first phase and ran.
//
// Besides the sanitizers, the run checks the documented contract: a refused call leaves a
// message and hands out no executor; a consumed executor does not run again; aclGetViewShape
// and aclGetDataType return what was given; and no byte outside the outputs' view elements
// changes, in any buffer, including 64 guard bytes after each storage.
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_acl_support.h"
#include "op_catalog.h"

extern "C" {
aclTensor* nnplug_fuzz_create_tensor(const int64_t* view_dims, uint64_t view_rank, int32_t dtype,
                                     const int64_t* strides, int64_t offset, int32_t format,
                                     const int64_t* storage_dims, uint64_t storage_rank, void* data);
int32_t nnplug_fuzz_data_type(const aclTensor* tensor, int32_t* dtype);
size_t nnplug_fuzz_dtype_size(int32_t dtype);
}

namespace {

constexpr int64_t kMaxViewElements = 4096;     // ordinary dimensions are clamped to this
constexpr int64_t kMaxStorageBytes = 1 << 20;  // larger storages get no buffer (data null)
constexpr uint64_t kMaxWorkspace = 64 << 20;

using namespace nnplug::fuzz;

// With NNPLUG_FUZZ_STATS set, what the inputs did, printed at exit: how often each op got
// past its first phase and ran, and how often the backend changed.
struct Stats {
    long inputs[3] = {}, switches = 0, planned[NNPLUG_OP_KIND_COUNT] = {}, ran[NNPLUG_OP_KIND_COUNT] = {},
         tensors = 0, refused_tensors = 0;
} g_stats;

void finalize_at_exit() {
    if (std::getenv("NNPLUG_FUZZ_STATS") != nullptr) {
        std::fprintf(stderr,
                     "fuzz_ops: inputs cpu_tbb %ld, Ascend910B %ld, Ascend910 %ld; backend changes %ld; "
                     "tensors %ld (%ld refused)\n",
                     g_stats.inputs[0], g_stats.inputs[1], g_stats.inputs[2], g_stats.switches,
                     g_stats.tensors, g_stats.refused_tensors);
        for (int op = 0; op < NNPLUG_OP_KIND_COUNT; ++op)
            std::fprintf(stderr, "fuzz_ops: op %d planned %ld, ran %ld\n", op, g_stats.planned[op],
                         g_stats.ran[op]);
    }
    finalize_backend();
}

void count_backend(int choice) {
    bool changed = false;
    ++g_stats.inputs[use_backend(choice, changed)];
    if (changed) ++g_stats.switches;
}

// The ops, from the conformance catalog (each op folder's entry): their operands in signature
// order and both phases. The op byte picks one modulo their count.
using nnplug::conformance::call_attrs;
using nnplug::conformance::OpUnderTest;

const std::vector<OpUnderTest>& ops() {
    return nnplug::conformance::op_catalog();
}

int self_slot(const OpUnderTest& op) {
    for (size_t i = 0; i < op.operands.size(); ++i)
        if (op.operands[i] == "self") return static_cast<int>(i);
    return 0;
}

// Saturating arithmetic for sizes the input may make huge.
int64_t saturating_multiply(int64_t a, int64_t b) {
    int64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}
int64_t saturating_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

std::vector<int64_t> read_shape(Input& in) {
    static const int64_t kSpecial[] = {
        5, 7, 16, 33, 64, 1000, std::numeric_limits<int64_t>::max(), -1, int64_t{1} << 31, int64_t{1} << 62,
        0, 1, 2,  3,  4,  8};
    std::vector<int64_t> dims(in.byte() % 10);
    int64_t ordinary = 1;
    for (auto& dim : dims) {
        const uint8_t code = in.byte();
        dim = code >= 240 ? kSpecial[code - 240] : code % 5;
        if (code < 240 || (dim >= 0 && dim <= 8)) {
            if (saturating_multiply(ordinary, dim) > kMaxViewElements) dim = 1;
            ordinary = saturating_multiply(ordinary, dim);
        }
    }
    return dims;
}

struct Operand {
    aclTensor* tensor = nullptr;
    bool destroyed = false;
    int buffer = -1;  // index of the buffer its data is in
    int32_t dtype = 0;
    std::vector<int64_t> view, strides;
    int64_t offset = 0;
};

// Builds one operand from the input; the tensor may be refused (null), absent, or destroyed.
Operand make_operand(Input& in, const std::vector<int64_t>& self_shape, bool is_self, bool is_output,
                     std::vector<Buffer>& buffers, std::vector<Operand>& made) {
    Operand operand;
    // Shape.
    const uint8_t shape_code = in.byte() % 8;
    std::vector<int64_t> view = self_shape;
    if (!is_self) {
        switch (shape_code) {
            case 2: {  // broadcast to self: leading dims dropped, some dims 1
                const size_t dropped = in.byte() % (view.size() + 1);
                view.erase(view.begin(), view.begin() + static_cast<std::ptrdiff_t>(dropped));
                const uint8_t ones = in.byte();
                for (size_t k = 0; k < view.size(); ++k)
                    if (ones & (1u << (k % 8))) view[k] = 1;
                break;
            }
            case 3:
                view.clear();
                break;
            case 4:
                view = {1};
                break;
            case 5:
                view = read_shape(in);
                break;
            case 6:
                return operand;  // absent
            default:
                break;  // self's shape
        }
    }
    // Dtype.
    static const int32_t kFloats[] = {ACL_FLOAT, ACL_FLOAT,   ACL_FLOAT16, ACL_BF16,
                                      ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const int32_t kOthers[] = {ACL_INT32,     ACL_DOUBLE,     ACL_INT8,   ACL_UINT8,       ACL_INT16,
                                      ACL_UINT16,    ACL_UINT32,     ACL_INT64,  ACL_UINT64,      ACL_BOOL,
                                      ACL_COMPLEX64, ACL_COMPLEX128, ACL_STRING, ACL_DT_UNDEFINED};
    const uint8_t dtype_code = in.byte();
    int32_t dtype = kFloats[dtype_code % 7];
    if (dtype_code % 8 == 7) {
        const uint8_t other = in.byte();
        dtype = other % 16 < 14 ? kOthers[other % 16] : in.i32();
    }
    // Format.
    const uint8_t format_code = in.byte() % 8;
    int32_t format = ACL_FORMAT_ND;
    if (format_code == 5) format = ACL_FORMAT_NCHW;
    if (format_code == 6) format = ACL_FORMAT_NHWC;
    if (format_code == 7) {
        const uint8_t other = in.byte() % 4;
        format = other == 0   ? ACL_FORMAT_NC1HWC0
                 : other == 1 ? ACL_FORMAT_FRACTAL_Z
                 : other == 2 ? -1
                              : in.i32();
    }
    // Strides.
    const size_t rank = view.size();
    std::vector<int64_t> strides(rank, 1);
    const uint8_t layout = in.byte() % 8;
    {
        int64_t step = 1;
        const int64_t pad = layout == 3 ? 1 + in.byte() % 3 : 1;
        for (size_t k = rank; k-- > 0;) {
            strides[k] = saturating_multiply(step, k + 1 == rank ? 1 : pad);
            step = saturating_multiply(strides[k], std::max<int64_t>(view[k], 1));
        }
        if (layout == 4) {  // column-major
            step = 1;
            for (size_t k = 0; k < rank; ++k) {
                strides[k] = step;
                step = saturating_multiply(step, std::max<int64_t>(view[k], 1));
            }
        }
        if (layout == 5) {  // zero strides: repeated elements
            const uint8_t zeros = in.byte();
            for (size_t k = 0; k < rank; ++k)
                if (zeros & (1u << (k % 8))) strides[k] = 0;
        }
        if (layout == 6)
            for (auto& stride : strides) stride = in.byte() % 9;
        if (layout == 7 && rank > 0) {
            static const int64_t kHuge[] = {std::numeric_limits<int64_t>::max() / 4,
                                            std::numeric_limits<int64_t>::max(), -1, int64_t{1} << 40};
            strides[in.byte() % rank] = kHuge[in.byte() % 4];
        }
    }
    // Offset.
    const uint8_t offset_code = in.byte();
    static const int64_t kOffsets[] = {1000, std::numeric_limits<int64_t>::max(), -1, int64_t{1} << 40};
    const int64_t offset = offset_code >= 252 ? kOffsets[offset_code - 252] : offset_code % 8;
    // The storage the view needs: offset + sum((dim - 1) * stride) + 1 elements.
    bool empty_view = false;
    int64_t needed = std::max<int64_t>(offset, 0);
    for (size_t k = 0; k < rank; ++k) {
        if (view[k] == 0) empty_view = true;
        if (view[k] > 0 && strides[k] > 0)
            needed = saturating_add(needed, saturating_multiply(view[k] - 1, strides[k]));
    }
    needed = empty_view ? 0 : saturating_add(needed, 1);
    const uint8_t storage_code = in.byte() % 8;
    std::vector<int64_t> storage = {needed};
    if (storage_code == 4) storage = {saturating_add(needed, in.byte() % 64)};
    if (storage_code == 5) storage = view;
    if (storage_code == 6) storage = {needed - 1};
    if (storage_code == 7) storage.clear();  // 0-d: one element
    // Data.
    const uint8_t data_code = in.byte();
    const size_t element_size = std::max<size_t>(nnplug_fuzz_dtype_size(dtype), 1);
    void* data = nullptr;
    int buffer = -1;
    if (data_code & 4 && !made.empty()) {
        // Another operand's buffer, viewed as a 1-d storage of this dtype: outputs over inputs.
        const Operand& other = made[in.byte() % made.size()];
        if (other.buffer >= 0) {
            buffer = other.buffer;
            data = buffers[static_cast<size_t>(buffer)].data;
            storage = {
                static_cast<int64_t>(buffers[static_cast<size_t>(buffer)].storage_bytes / element_size)};
        }
    }
    if (buffer < 0 && data_code % 4 != 3) {
        int64_t elements = 1;
        for (int64_t dim : storage) elements = dim < 0 ? 0 : saturating_multiply(elements, dim);
        const int64_t bytes = saturating_multiply(elements, static_cast<int64_t>(element_size));
        if (bytes <= kMaxStorageBytes) {
            // Its bytes are filled once every operand is described.
            buffers.push_back(make_buffer(data_code % 4 != 2, static_cast<size_t>(bytes)));
            buffer = static_cast<int>(buffers.size()) - 1;
            data = buffers.back().data;
        }
    }

    operand.tensor = nnplug_fuzz_create_tensor(view.data(), view.size(), dtype, strides.data(), offset,
                                               format, storage.data(), storage.size(), data);
    ++g_stats.tensors;
    if (operand.tensor == nullptr) {
        ++g_stats.refused_tensors;
        expect_message("aclCreateTensor");
        return operand;
    }
    operand.buffer = buffer;
    operand.dtype = dtype;
    operand.view = view;
    operand.strides = strides;
    operand.offset = offset;
    // What the tensor says of itself.
    int64_t* dims = nullptr;
    uint64_t dims_count = 0;
    if (aclGetViewShape(operand.tensor, &dims, &dims_count) != ACLNN_SUCCESS ||
        std::vector<int64_t>(dims, dims + dims_count) != view)
        broken("aclGetViewShape does not return the view given");
    delete[] dims;
    int32_t read_dtype = 0;
    if (nnplug_fuzz_data_type(operand.tensor, &read_dtype) != ACLNN_SUCCESS || read_dtype != dtype)
        broken("aclGetDataType does not return the dtype given");
    if (data_code & 8) {  // destroyed before use: the ops must report it, never read it
        aclDestroyTensor(operand.tensor);
        operand.destroyed = true;
    }
    (void)is_output;
    return operand;
}

// Marks the bytes of an output's view elements as ones the run may write.
void allow_output_writes(const Operand& out, std::vector<Buffer>& buffers) {
    if (out.tensor == nullptr || out.destroyed || out.buffer < 0) return;
    const size_t element_size = nnplug_fuzz_dtype_size(out.dtype);
    if (element_size == 0) return;
    allow_writes(buffers[static_cast<size_t>(out.buffer)], element_size, out.view, out.strides, out.offset);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    set_target_name("fuzz_ops");
    keep_plugins_loaded();
    std::atexit(finalize_at_exit);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Input in(data, size);
    count_backend(in.byte() % 3);
    const size_t op = in.byte() % ops().size();
    const OpUnderTest& shape = ops()[op];
    const uint8_t flags = in.byte();
    static const int64_t kReductions[] = {0, 1, 2, -1, 3, 100, std::numeric_limits<int64_t>::min()};
    const int64_t reduction = kReductions[in.byte() % 7];
    const std::vector<int64_t> self_shape = read_shape(in);

    std::vector<Buffer> buffers;
    std::vector<Operand> operands;
    for (size_t slot = 0; slot < shape.operands.size(); ++slot)
        operands.push_back(make_operand(in, self_shape, static_cast<int>(slot) == self_slot(shape),
                                        slot + 1 == shape.operands.size(), buffers, operands));
    std::vector<aclTensor*> tensors;
    for (const Operand& operand : operands) tensors.push_back(operand.tensor);
    // The buffers' contents: the rest of the input, after every operand's description.
    for (Buffer& buffer : buffers) {
        in.fill(buffer.before.data(), buffer.before.size());
        upload(buffer);
    }

    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const std::vector<const aclTensor*> arguments(tensors.begin(), tensors.end());
    const aclnnStatus planned =
        shape.first_phase(arguments, call_attrs(shape, reduction), &workspace_size, &executor);
    bool tensors_alive = true;
    if (planned != ACLNN_SUCCESS) {
        expect_message(shape.api);
        if (executor != nullptr)
            broken(std::string(shape.api) + " refused the call but handed out an executor");
    } else {
        if (executor == nullptr) broken(std::string(shape.api) + " succeeded without an executor");
        ++g_stats.planned[op];
        allow_output_writes(operands.back(), buffers);
        if (flags & 32) {  // the executor keeps what it needs
            for (Operand& operand : operands)
                if (operand.tensor != nullptr && !operand.destroyed) aclDestroyTensor(operand.tensor);
            tensors_alive = false;
        }
        void* workspace = nullptr;
        if (workspace_size > kMaxWorkspace) {
            aclDestroyAclOpExecutor(executor);
        } else {
            if (workspace_size > 0 &&
                aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
                broken("aclrtMalloc of the workspace failed");
            aclrtStream stream = nullptr;
            if ((flags & 1) && aclrtCreateStream(&stream) != ACL_SUCCESS) broken("aclrtCreateStream failed");
            const bool repeatable = (flags & 2) != 0;
            if (repeatable && aclSetAclOpExecutorRepeatable(executor) != ACLNN_SUCCESS)
                broken("aclSetAclOpExecutorRepeatable refused a live executor");
            const uint64_t passed_size =
                (flags & 8) && workspace_size > 0 ? workspace_size - 1 : workspace_size;
            void* passed_workspace = (flags & 16) ? nullptr : workspace;
            const aclnnStatus ran = shape.second_phase(passed_workspace, passed_size, executor, stream);
            if (ran != ACLNN_SUCCESS) expect_message(shape.api);
            if (ran == ACLNN_SUCCESS) ++g_stats.ran[op];
            const bool own_checks_refused =
                ran != ACLNN_SUCCESS &&
                (passed_size < workspace_size || (passed_workspace == nullptr && workspace_size > 0));
            if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) expect_message("aclrtSynchronizeStream");
            if (repeatable || own_checks_refused) {
                // Still live: runs again with the right arguments.
                if (shape.second_phase(workspace, workspace_size, executor, stream) != ACLNN_SUCCESS)
                    expect_message(shape.api);
                if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) expect_message("aclrtSynchronizeStream");
            }
            if (!repeatable && (flags & 4) && !own_checks_refused) {
                if (shape.second_phase(workspace, workspace_size, executor, stream) == ACLNN_SUCCESS)
                    broken(std::string(shape.api) + " ran a consumed executor again");
                expect_message(shape.api);
            }
            // Frees a live executor; a consumed one it remembers and leaves alone.
            aclDestroyAclOpExecutor(executor);
            if (stream != nullptr) aclrtDestroyStream(stream);
            if (workspace != nullptr) aclrtFree(workspace);
        }
    }

    // Nothing but the outputs' view elements may have changed, in any buffer.
    expect_untouched(buffers, shape.api);
    if (tensors_alive)
        for (Operand& operand : operands)
            if (operand.tensor != nullptr && !operand.destroyed) aclDestroyTensor(operand.tensor);
    for (Buffer& buffer : buffers) free_buffer(buffer);
    return 0;
}
