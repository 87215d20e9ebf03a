#include "aten_call.h"

#include <Python.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/tensor_dtypes.h>

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

aclTensor* AclCall::add(const at::Tensor& tensor) {
    try {
        operands_.emplace_back(reinterpret_cast<uintptr_t>(tensor.data_ptr()),
                               acl_dtype(tensor.scalar_type()), tensor.sizes().data(),
                               tensor.strides().data(), tensor.sizes().size(), stage_);
    } catch (const python::AclFailure& failure) {
        raise_nnplug_error(failure);
    }
    return operands_.back().get();
}

const aclTensor* AclCall::in(const at::Tensor& tensor) {
    return tensor.defined() ? add(tensor) : nullptr;
}

aclTensor* AclCall::out(const at::Tensor& tensor) {
    aclTensor* handle = add(tensor);
    outputs_.push_back(&operands_.back());
    return handle;
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

}  // namespace

void AclCall::finish(const char* name, aclnnStatus status, aclOpExecutor* executor, uint64_t workspace_size,
                     python::RunFn second) {
    try {
        thread_local ThreadStream stream;
        python::run_executor(name, status, executor, workspace_size, second, stream.get());
        for (const python::OperandTensor* output : outputs_) output->copy_back();
    } catch (const python::AclFailure& failure) {
        raise_nnplug_error(failure);
    }
}

}  // namespace nnplug::torch_ops
