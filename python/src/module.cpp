// nnplug._nnplug: the runtime's public C API as the Python package needs it. Tensors come
// in as (data_ptr, acl dtype, shape, strides); the GIL is released while an op runs.
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "op_call.h"

namespace py = pybind11;
using nnplug::python::AclFailure;
using nnplug::python::HostTensor;

namespace {

// Decided at each init: whether the ops can read torch's memory in place.
std::atomic<bool> g_device_memory_is_host{true};

HostTensor host_tensor(const py::tuple& spec) {
    if (spec.size() != 4) throw py::value_error("a tensor is (data_ptr, dtype, shape, strides)");
    HostTensor t;
    t.data = spec[0].cast<uintptr_t>();
    t.dtype = static_cast<aclDataType>(spec[1].cast<int>());
    t.shape = spec[2].cast<std::vector<int64_t>>();
    t.strides = spec[3].cast<std::vector<int64_t>>();
    if (t.shape.size() != t.strides.size()) throw py::value_error("shape and strides differ in length");
    return t;
}

void init(const std::optional<std::string>& config) {
    {
        py::gil_scoped_release release;
        nnplug::python::check_status(aclInit(config ? config->c_str() : nullptr), "aclInit");
    }
    try {
        g_device_memory_is_host = nnplug::python::probe_device_memory_is_host();
    } catch (...) {
        aclFinalize();
        throw;
    }
}

void finalize() {
    py::gil_scoped_release release;
    nnplug::python::check_status(aclFinalize(), "aclFinalize");
}

void run(const std::string& op_name, const py::list& inputs, int64_t reduction, const py::tuple& out) {
    const nnplug::python::OpEntry* op = nnplug::python::find_op(op_name);
    if (op == nullptr) throw py::value_error("nnplug has no op " + op_name);
    if (static_cast<int>(inputs.size()) != op->inputs) {
        throw py::value_error(op_name + " takes " + std::to_string(op->inputs) + " inputs");
    }
    std::vector<std::optional<HostTensor>> operands;
    for (const auto& input : inputs) {
        if (input.is_none()) {
            operands.emplace_back(std::nullopt);
        } else {
            operands.emplace_back(host_tensor(input.cast<py::tuple>()));
        }
    }
    const HostTensor result = host_tensor(out);
    py::gil_scoped_release release;
    nnplug::python::run_op(*op, operands, reduction, result, !g_device_memory_is_host);
}

// The default config aclInit(nullptr) reads, next to the loaded libnnplug.
std::string default_config_path() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&aclInit), &info) == 0 || info.dli_fname == nullptr) return "";
    const std::filesystem::path library(info.dli_fname);
    return (library.parent_path() / NNPLUG_CONFIG_FROM_LIBDIR / "default.yaml").lexically_normal().string();
}

std::vector<std::string> op_names() {
    std::vector<std::string> names;
    for (const nnplug::python::OpEntry& op : nnplug::python::all_ops()) names.push_back(op.name);
    return names;
}

}  // namespace

PYBIND11_MODULE(_nnplug, m) {
    m.doc() = "nnplug's C API (aclInit, aclnn ops) for the nnplug package";
    // nnplug.Error is defined in Python (with .status); failures are raised as it.
    // Kept for the life of the process (never released at interpreter exit).
    static PyObject* error_type =
        py::object(py::module_::import("nnplug._error").attr("Error")).release().ptr();
    // pybind11 keeps translators as void (*)(std::exception_ptr): only a lambda of exactly that
    // signature converts, so the parameter stays by value.
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    py::register_exception_translator([](std::exception_ptr failure) {
        try {
            if (failure) std::rethrow_exception(failure);
        } catch (const AclFailure& e) {
            py::object error = py::reinterpret_borrow<py::object>(error_type)(e.status(), e.what());
            PyErr_SetObject(error_type, error.ptr());
        }
    });
    m.def("init", &init, py::arg("config") = std::nullopt,
          "aclInit(config); None reads NNPLUG_CONFIG or the default");
    m.def("finalize", &finalize, "aclFinalize()");
    m.def("soc_name", [] {
        const char* name = aclrtGetSocName();
        return std::string(name != nullptr ? name : "");
    });
    m.def("device_memory_is_host", [] { return g_device_memory_is_host.load(); });
    m.def("default_config_path", &default_config_path);
    m.def("op_names", &op_names);
    m.def("run", &run, py::arg("op"), py::arg("inputs"), py::arg("reduction"), py::arg("out"),
          "Runs an aclnn op: inputs and out are (data_ptr, acl dtype, shape, strides) or None");
}
