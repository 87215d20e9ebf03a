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

// Set by init and finalize; read by the torch operators through the capsule too.
nnplug::python::RuntimeState g_runtime;

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
        g_runtime.device_memory_is_host = nnplug::python::probe_device_memory_is_host();
    } catch (...) {
        aclFinalize();
        throw;
    }
    ++g_runtime.generation;
    g_runtime.initialized = true;
}

void finalize() {
    py::gil_scoped_release release;
    g_runtime.initialized = false;
    nnplug::python::check_status(aclFinalize(), "aclFinalize");
}

// The op's attributes from Python values in signature order (an int alone: the reduction),
// each converted to the type the op's schema declares; `words` keeps the strings.
std::vector<nnplug_attr_arg> attr_args(const nnplug::python::OpEntry& op, const py::object& given,
                                       std::vector<std::string>& words) {
    const py::list values =
        py::isinstance<py::int_>(given) ? py::list(py::make_tuple(given)) : py::list(given);
    const nnplug_op_schema& schema = *op.schema;
    if (values.size() != schema.attr_count)
        throw py::value_error(op.name + " takes " + std::to_string(schema.attr_count) + " attributes, not " +
                              std::to_string(values.size()));
    words.reserve(values.size());
    std::vector<nnplug_attr_arg> args;
    for (size_t a = 0; a < values.size(); ++a) {
        nnplug_attr_arg arg{};
        arg.type = schema.attrs[a].type;
        const py::handle value = values[a];
        const std::string name = op.name + "'s " + schema.attrs[a].name;
        if (arg.type == NNPLUG_ATTR_ARG_BOOL) {
            if (!py::isinstance<py::bool_>(value)) throw py::type_error(name + " must be a bool");
            arg.b = value.cast<bool>() ? 1 : 0;
        } else if (arg.type == NNPLUG_ATTR_ARG_INT64) {
            if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
                throw py::type_error(name + " must be an int");
            arg.i = value.cast<int64_t>();
        } else if (arg.type == NNPLUG_ATTR_ARG_REDUCTION_WORD) {
            if (!py::isinstance<py::str>(value)) throw py::type_error(name + " must be a str");
            arg.word = words.emplace_back(value.cast<std::string>()).c_str();
        } else {
            if (!py::isinstance<py::float_>(value) && !py::isinstance<py::int_>(value))
                throw py::type_error(name + " must be a float");
            arg.f = value.cast<double>();
        }
        args.push_back(arg);
    }
    return args;
}

void run(const std::string& op_name, const py::list& inputs, const py::object& attrs, const py::tuple& out) {
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
    std::vector<std::string> words;
    const std::vector<nnplug_attr_arg> args = attr_args(*op, attrs, words);
    const HostTensor result = host_tensor(out);
    py::gil_scoped_release release;
    nnplug::python::run_op(*op, operands, args, result, !g_runtime.device_memory_is_host);
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
    m.def("device_memory_is_host", [] { return g_runtime.device_memory_is_host.load(); });
    m.attr("_runtime_state") = py::capsule(&g_runtime, nnplug::python::kRuntimeStateCapsule);
    m.def("default_config_path", &default_config_path);
    m.def("op_names", &op_names);
    m.def("run", &run, py::arg("op"), py::arg("inputs"), py::arg("attrs"), py::arg("out"),
          "Runs an aclnn op: inputs and out are (data_ptr, acl dtype, shape, strides) or None; attrs "
          "are its attributes in signature order (an int alone: the reduction)");
}
