#include "aten_call.h"

#include <Python.h>
#include <c10/util/SmallVector.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/tensor_dtypes.h>

#include <algorithm>
#include <string>

namespace py = pybind11;

namespace nnplug::torch_ops {
namespace {

python::RuntimeState* g_runtime = nullptr;  // nnplug._nnplug's, for the life of the process
PyObject* g_error_type = nullptr;           // nnplug.Error

// The pending Python exception as torch's python_error: torch restores it where its call
// from Python ends, across its autograd engine's threads too, so it arrives as raised.
[[noreturn]] void throw_pending_python_error() {
    python_error error;
    error.persist();
    throw error;
}

// nnplug.ensure_initialized(): the runtime from the environment, on first use.
void initialize_from_python() {
    py::gil_scoped_acquire gil;
    try {
        py::module_::import("nnplug").attr("ensure_initialized")();
    } catch (py::error_already_set& e) {
        e.restore();
        throw_pending_python_error();
    }
}

aclDataType acl_dtype(at::ScalarType type) {
    switch (type) {
        case at::kFloat:
            return ACL_FLOAT;
        case at::kHalf:
            return ACL_FLOAT16;
        case at::kBFloat16:
            return ACL_BF16;
        case at::kLong:
            return ACL_INT64;
        case at::kInt:
            return ACL_INT32;
        case at::kByte:
            return ACL_UINT8;
        default:
            return ACL_DT_UNDEFINED;
    }
}

// Names as Python spells them: torch.float64, torch.sparse_coo.
std::string python_name(at::ScalarType type) {
    return "torch." + torch::utils::getDtypeNames(type).first;
}

std::string python_name(at::Layout layout) {
    switch (layout) {
        case at::kStrided:
            return "torch.strided";
        case at::kSparse:
            return "torch.sparse_coo";
        case at::kSparseCsr:
            return "torch.sparse_csr";
        case at::kSparseCsc:
            return "torch.sparse_csc";
        case at::kSparseBsr:
            return "torch.sparse_bsr";
        case at::kSparseBsc:
            return "torch.sparse_bsc";
        case at::kMkldnn:
            return "torch._mkldnn";
        default:
            return c10::str(layout);
    }
}

std::string dtype_list(std::initializer_list<at::ScalarType> dtypes) {
    std::string words;
    for (const at::ScalarType type : dtypes) {
        if (!words.empty()) words += type == *(dtypes.end() - 1) ? " and " : ", ";
        words += python_name(type);
    }
    return words;
}

// The ops read a view by address: it must lie in memory its storage holds (a storage resized
// under a view leaves the view reaching past it) and have memory at all (a tensor subclass
// that keeps its values elsewhere has none).
void check_within_storage(const at::Tensor& tensor, const char* op, const char* name) {
    if (tensor.numel() == 0) return;
    TORCH_CHECK_TYPE(
        tensor.has_storage() && tensor.data_ptr() != nullptr, "nnplug.torch.", op, ": ", name,
        " has no memory of its own (a tensor subclass or a tensor without storage); pass a plain tensor");
    int64_t last = tensor.storage_offset();
    for (int64_t d = 0; d < tensor.dim(); ++d) last += (tensor.size(d) - 1) * tensor.stride(d);
    const int64_t held =
        static_cast<int64_t>(tensor.storage().nbytes()) / static_cast<int64_t>(tensor.itemsize());
    TORCH_CHECK_VALUE(last < held, "nnplug.torch.", op, ": ", name, " reaches element ", last,
                      " of a storage of ", held, " (resized under the view)");
}

}  // namespace

[[noreturn]] void raise_nnplug_error(const python::AclFailure& failure) {
    py::gil_scoped_acquire gil;
    py::object error = py::reinterpret_borrow<py::object>(g_error_type)(failure.status(), failure.what());
    PyErr_SetObject(g_error_type, error.ptr());
    throw_pending_python_error();
}

void bind_runtime_state() {
    g_runtime = static_cast<python::RuntimeState*>(PyCapsule_Import(python::kRuntimeStateCapsule, 0));
    if (g_runtime == nullptr) throw py::error_already_set();
    g_error_type = py::object(py::module_::import("nnplug._error").attr("Error")).release().ptr();
}

at::Tensor resolved(const at::Tensor& tensor) {
    if (!tensor.defined()) return tensor;
    // torch's zeros without memory (an autograd gradient may be one): its values, made
    if (tensor._is_zerotensor())
        return at::zeros(tensor.sizes(), tensor.options().dtype(tensor.scalar_type()));
    if (!(tensor.is_neg() || tensor.is_conj())) return tensor;
    return tensor.resolve_conj().resolve_neg();
}

void check_operand(const at::Tensor& tensor, const char* op, const char* name,
                   std::initializer_list<at::ScalarType> dtypes) {
    TORCH_CHECK_TYPE(!tensor.is_nested() && tensor.device().is_cpu() && tensor.layout() == at::kStrided,
                     "nnplug.torch.", op, ": ", name, " is a ", tensor.device().type(), " ",
                     tensor.is_nested() ? std::string("nested") : python_name(tensor.layout()),
                     " tensor; nnplug takes strided CPU tensors");
    bool allowed = false;
    for (const at::ScalarType type : dtypes) allowed = allowed || tensor.scalar_type() == type;
    TORCH_CHECK_TYPE(allowed, "nnplug.torch.", op, ": ", name, " has dtype ",
                     python_name(tensor.scalar_type()), "; nnplug takes ", dtype_list(dtypes));
    TORCH_CHECK_TYPE(
        !tensor.is_neg() && !tensor.is_conj(), "nnplug.torch.", op, ": ", name,
        " has torch's negative or conjugate bit set; resolve it first (resolve_neg(), resolve_conj())");
    check_within_storage(tensor, op, name);
}

AclCall::AclCall() {
    if (!g_runtime->initialized.load()) initialize_from_python();
    stage_ = !g_runtime->device_memory_is_host.load();
}

aclTensor* const& AclCall::add(const at::Tensor& tensor, bool output) {
    TORCH_CHECK(count_ < kMaxOperands, "nnplug.torch: internal error: more than ", kMaxOperands, " operands");
    operands_[count_] = Operand{tensor, output};
    return handles_[count_++];
}

void AclCall::make_tensors() {
    try {
        for (size_t k = 0; k < count_; ++k) {
            const at::Tensor& t = operands_[k].tensor;
            if (!t.defined()) continue;
            tensors_[k] = std::make_unique<python::OperandTensor>(
                reinterpret_cast<uintptr_t>(t.data_ptr()), acl_dtype(t.scalar_type()), t.sizes().data(),
                t.strides().data(), t.sizes().size(), stage_);
            handles_[k] = tensors_[k]->get();
        }
    } catch (const python::AclFailure& failure) {
        raise_nnplug_error(failure);
    }
}

namespace {

// This thread's stream for the ops, kept across calls: a stream per call cost a worker
// thread's start and join on atlas_emu. Made again once the runtime was initialized anew
// (aclFinalize took the old one with it; a child of fork() initializes its own).
class ThreadStream {
public:
    ThreadStream() = default;
    ThreadStream(const ThreadStream&) = delete;
    ThreadStream& operator=(const ThreadStream&) = delete;
    ~ThreadStream() {
        if (current()) aclrtDestroyStream(stream_);
    }
    aclrtStream get() {
        if (!current()) {
            stream_ = nullptr;
            python::check_status(aclrtCreateStream(&stream_), "aclrtCreateStream");
            generation_ = g_runtime->generation.load();
        }
        return stream_;
    }

private:
    bool current() const {
        return stream_ != nullptr && g_runtime->initialized.load() &&
               generation_ == g_runtime->generation.load();
    }
    aclrtStream stream_ = nullptr;
    uint64_t generation_ = 0;
};

aclrtStream thread_stream() {
    thread_local ThreadStream stream;
    return stream.get();
}

// The key of a kept executor: the op, its attributes, then per operand whether it is
// there and an output, its dtype, rank, shape and strides.
using CallKey = c10::SmallVector<int64_t, 96>;

// A one-element operand's own copy in a kept call (a reduced loss, a total weight, the
// gradient of a scalar): the executor reads and writes it there, and a call copies the
// element in or out, where moving the executor to each call's fresh tensor (a new address
// almost every time) costs more than the copy.
struct alignas(64) ElementCopy {
    unsigned char bytes[16];
};

// A repeatable executor kept for calls like the one that made it, with the aclTensors its
// first phase was given (aclSetTensorAddr names them) and the addresses they hold now.
struct KeptCall {
    CallKey key;
    aclOpExecutor* executor = nullptr;
    uint64_t workspace_size = 0;
    std::array<std::unique_ptr<python::OperandTensor>, AclCall::kMaxOperands> tensors;
    std::array<void*, AclCall::kMaxOperands> addresses{};
    std::array<std::unique_ptr<ElementCopy>, AclCall::kMaxOperands> copies;  // null: moved instead
};

// This thread's kept executors, the most recently used first; those of a runtime that
// was finalized are dropped unrun (aclFinalize freed them).
class KeptCalls {
public:
    static constexpr size_t kCapacity = 32;
    KeptCalls() = default;
    KeptCalls(const KeptCalls&) = delete;
    KeptCalls& operator=(const KeptCalls&) = delete;
    ~KeptCalls() { clear(); }

    KeptCall* find(const CallKey& key) {
        if (generation_ != g_runtime->generation.load() || !g_runtime->initialized.load()) clear();
        for (size_t i = 0; i < calls_.size(); ++i) {
            if (calls_[i]->key != key) continue;
            std::rotate(calls_.begin(), calls_.begin() + static_cast<std::ptrdiff_t>(i),
                        calls_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
            return calls_.front().get();
        }
        return nullptr;
    }
    void keep(std::unique_ptr<KeptCall> call) {
        generation_ = g_runtime->generation.load();
        if (calls_.size() == kCapacity) drop(calls_.back().get());
        calls_.insert(calls_.begin(), std::move(call));
    }
    void drop(KeptCall* call) {
        for (auto it = calls_.begin(); it != calls_.end(); ++it) {
            if (it->get() != call) continue;
            if (current()) aclDestroyAclOpExecutor(call->executor);
            calls_.erase(it);
            return;
        }
    }

private:
    bool current() const {
        return g_runtime->initialized.load() && generation_ == g_runtime->generation.load();
    }
    void clear() {
        while (!calls_.empty()) drop(calls_.back().get());
    }
    std::vector<std::unique_ptr<KeptCall>> calls_;
    uint64_t generation_ = 0;
};

KeptCalls& kept_calls() {
    thread_local KeptCalls calls;
    return calls;
}

// `operands`: the call's, each a tensor (undefined: absent) and whether it is an output.
template <class Operands>
CallKey call_key(const char* name, std::initializer_list<int64_t> attrs, const Operands& operands,
                 size_t count) {
    CallKey key;
    key.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(name)));
    key.append(attrs.begin(), attrs.end());
    for (size_t k = 0; k < count; ++k) {
        const at::Tensor& t = operands[k].tensor;
        if (!t.defined()) {
            key.push_back(-1);
            continue;
        }
        key.push_back(static_cast<int64_t>(t.scalar_type()) << 8 | (operands[k].output ? 1 : 0) << 4 |
                      t.dim());
        key.append(t.sizes().begin(), t.sizes().end());
        key.append(t.strides().begin(), t.strides().end());
    }
    return key;
}

// Runs a kept executor on its thread's stream; a failed run drops it (its next call makes
// a fresh one, whose first phase says what is wrong) and raises.
void run_kept_executor(const char* name, KeptCalls& calls, KeptCall& call, python::RunFn second) {
    const aclrtStream stream = thread_stream();
    python::DeviceBuffer workspace(call.workspace_size);
    const aclnnStatus status = second(workspace.data(), call.workspace_size, call.executor, stream);
    if (status != ACLNN_SUCCESS) {
        const python::AclFailure failure(
            status, std::string(aclGetRecentErrMsg()) + " (status " + std::to_string(status) + ")");
        calls.drop(&call);
        throw failure;
    }
    python::check_status(aclrtSynchronizeStream(stream), name);
}

// After a kept call's first run: its one-element operands moved, once, to copies of their
// own (`operands`: the call's, each with its tensor).
template <class Operands>
void keep_element_copies(KeptCalls& calls, KeptCall& call, const Operands& operands, size_t count) {
    for (size_t k = 0; k < count; ++k) {
        const at::Tensor& tensor = operands[k].tensor;
        if (!tensor.defined() || tensor.numel() != 1 ||
            static_cast<size_t>(tensor.element_size()) > sizeof(ElementCopy::bytes))
            continue;
        auto copy = std::make_unique<ElementCopy>();
        std::memcpy(copy->bytes, tensor.data_ptr(), tensor.element_size());
        if (aclSetTensorAddr(call.executor, k, call.tensors[k]->get(), copy->bytes) != ACLNN_SUCCESS) {
            calls.drop(&call);  // the next call plans afresh
            return;
        }
        call.addresses[k] = copy->bytes;
        call.copies[k] = std::move(copy);
    }
}

}  // namespace

bool AclCall::run_kept(const char* name, std::initializer_list<int64_t> attrs, python::RunFn second) {
    if (stage_) return false;  // staged operands are fresh device copies: nothing to keep
    KeptCalls& calls = kept_calls();
    KeptCall* call = calls.find(call_key(name, attrs, operands_, count_));
    if (call == nullptr) return false;
    for (size_t k = 0; k < count_; ++k) {
        const at::Tensor& tensor = operands_[k].tensor;
        if (!tensor.defined()) continue;
        void* address = tensor.data_ptr();
        if (call->copies[k]) {
            if (!operands_[k].output) std::memcpy(call->copies[k]->bytes, address, tensor.element_size());
            continue;
        }
        if (address == call->addresses[k]) continue;
        if (aclSetTensorAddr(call->executor, k, call->tensors[k]->get(), address) != ACLNN_SUCCESS) {
            calls.drop(call);  // a refused move: a fresh first phase says why
            return false;
        }
        call->addresses[k] = address;
    }
    try {
        run_kept_executor(name, calls, *call, second);
    } catch (const python::AclFailure& failure) {
        raise_nnplug_error(failure);
    }
    for (size_t k = 0; k < count_; ++k)
        if (call->copies[k] && operands_[k].output)
            std::memcpy(operands_[k].tensor.data_ptr(), call->copies[k]->bytes,
                        operands_[k].tensor.element_size());
    return true;
}

void AclCall::finish(const char* name, std::initializer_list<int64_t> attrs, aclnnStatus status,
                     aclOpExecutor* executor, uint64_t workspace_size, python::RunFn second) {
    try {
        if (stage_ || status != ACLNN_SUCCESS || aclSetAclOpExecutorRepeatable(executor) != ACLNN_SUCCESS) {
            python::run_executor(name, status, executor, workspace_size, second, thread_stream());
            for (size_t k = 0; k < count_; ++k)
                if (operands_[k].output && tensors_[k]) tensors_[k]->copy_back();
            return;
        }
        auto call = std::make_unique<KeptCall>();
        for (size_t k = 0; k < count_; ++k) {
            const at::Tensor& tensor = operands_[k].tensor;
            call->addresses[k] = tensor.defined() ? tensor.data_ptr() : nullptr;
            call->tensors[k] = std::move(tensors_[k]);
        }
        call->key = call_key(name, attrs, operands_, count_);
        call->executor = executor;
        call->workspace_size = workspace_size;
        KeptCalls& calls = kept_calls();
        KeptCall& kept = *call;
        calls.keep(std::move(call));
        run_kept_executor(name, calls, kept, second);
        keep_element_copies(calls, kept, operands_, count_);
    } catch (const python::AclFailure& failure) {
        raise_nnplug_error(failure);
    }
}

}  // namespace nnplug::torch_ops
