#include "tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <new>
#include <unordered_map>

#include "error_state.h"

int64_t aclTensor::element_count() const {
    int64_t count = 1;
    for (int64_t dim : view_dims) count *= dim;  // bounded at creation
    return count;
}

namespace nnplug {
namespace {

constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 16;

// Multiplies into product; false on overflow past kMaxElements.
bool checked_multiply(int64_t& product, int64_t factor) {
    if (factor != 0 && product > kMaxElements / factor) return false;
    product *= factor;
    return true;
}

// Every tensor between aclCreateTensor and aclDestroyTensor, with the holds calls have
// on it. A tensor destroyed while held leaves live_ at once and is deleted by the last
// release, so a call that checked it live never reads freed memory. A plain mutex: all but
// contains() write, and each tensor of an op call takes it four times (create, hold,
// release, destroy), where a reader-writer lock costs twice as much uncontended.
class TensorRegistry {
public:
    void add(const aclTensor* tensor) {
        std::lock_guard lock(mutex_);
        live_.emplace(tensor, 0);
    }
    // False for a tensor that is not live; otherwise it is no longer live, and deleted
    // now or by its last release.
    bool remove(const aclTensor* tensor) {
        std::lock_guard lock(mutex_);
        const auto found = live_.find(tensor);
        if (found == live_.end()) return false;
        if (found->second > 0)
            doomed_.emplace(tensor, found->second);
        else
            delete tensor;
        live_.erase(found);
        return true;
    }
    bool contains(const aclTensor* tensor) const {
        std::lock_guard lock(mutex_);
        return live_.count(tensor) == 1;
    }
    bool hold(const aclTensor* tensor) {
        std::lock_guard lock(mutex_);
        const auto found = live_.find(tensor);
        if (found == live_.end()) return false;
        ++found->second;
        return true;
    }
    void release(const aclTensor* tensor) {
        std::lock_guard lock(mutex_);
        if (const auto found = live_.find(tensor); found != live_.end()) {
            --found->second;
            return;
        }
        const auto doomed = doomed_.find(tensor);
        if (doomed == doomed_.end() || --doomed->second > 0) return;
        doomed_.erase(doomed);
        delete tensor;
    }

private:
    mutable std::mutex mutex_;
    std::unordered_map<const aclTensor*, int64_t> live_;    // tensor -> holds
    std::unordered_map<const aclTensor*, int64_t> doomed_;  // destroyed while held -> holds
};

TensorRegistry& registry() {
    static TensorRegistry* instance = new TensorRegistry;  // never destroyed: tensors may outlive statics
    return *instance;
}

// Bytes per element of a dtype given as an integer (0: no fixed size).
size_t dtype_size(int32_t dtype) {
    switch (dtype) {
        case ACL_BOOL:
        case ACL_INT8:
        case ACL_UINT8:
            return 1;
        case ACL_FLOAT16:
        case ACL_BF16:
        case ACL_INT16:
        case ACL_UINT16:
            return 2;
        case ACL_FLOAT:
        case ACL_INT32:
        case ACL_UINT32:
            return 4;
        case ACL_DOUBLE:
        case ACL_INT64:
        case ACL_UINT64:
        case ACL_COMPLEX64:
            return 8;
        case ACL_COMPLEX128:
            return 16;
        default:
            return 0;
    }
}

bool known_format(int32_t format) {
    return format >= ACL_FORMAT_UNDEFINED && format <= ACL_FORMAT_FRACTAL_Z;
}

constexpr const char* kCreateApi = "aclCreateTensor";

// aclCreateTensor's checks that need no arithmetic on the shapes: dimension counts, null
// arrays, dtype, format and offset. False, with the error set, at the first that fails.
// dtype and format come as their raw bits: a caller may pass any int, which no enum
// parameter may hold (UBSan refuses the load).
bool plain_arguments_valid(const int64_t* viewDims, uint64_t viewDimsNum, int32_t dtype,
                           const int64_t* stride, int64_t offset, int32_t format, const int64_t* storageDims,
                           uint64_t storageDimsNum) {
    constexpr uint64_t kMaxRank = 64;  // the ops accept 8; more is refused there, with a message
    if (viewDimsNum > kMaxRank || storageDimsNum > kMaxRank) {
        set_last_error("{}: {} view and {} storage dimensions; at most {} are accepted", kCreateApi,
                       viewDimsNum, storageDimsNum, kMaxRank);
        return false;
    }
    if ((viewDimsNum > 0 && (viewDims == nullptr || stride == nullptr)) ||
        (storageDimsNum > 0 && storageDims == nullptr)) {
        set_last_error("{}: viewDims, stride or storageDims is null while its count is not 0", kCreateApi);
        return false;
    }
    if (dtype_size(dtype) == 0) {
        set_last_error("{}: dataType {} has no fixed element size", kCreateApi, dtype);
        return false;
    }
    if (!known_format(format)) {
        set_last_error("{}: format {} is not an aclFormat", kCreateApi, format);
        return false;
    }
    if (offset < 0) {
        set_last_error("{}: offset {} is negative", kCreateApi, offset);
        return false;
    }
    return true;
}

// The view's element count and the last storage element it reaches from offset. False, with
// the error set, for a negative size or stride or a count past kMaxElements.
bool measure_view(const std::vector<int64_t>& view, const std::vector<int64_t>& strides, int64_t offset,
                  int64_t& view_count, int64_t& last_index) {
    view_count = 1;
    last_index = offset;
    for (size_t i = 0; i < view.size(); ++i) {
        if (view[i] < 0 || strides[i] < 0) {
            set_last_error("{}: dimension {} has size {} and stride {}; neither may be negative", kCreateApi,
                           static_cast<uint64_t>(i), view[i], strides[i]);
            return false;
        }
        int64_t reach = view[i] == 0 ? 0 : view[i] - 1;
        if (!checked_multiply(view_count, view[i]) || !checked_multiply(reach, strides[i]) ||
            last_index > kMaxElements - reach) {
            set_last_error("{}: view {} with strides {} overflows the element count", kCreateApi,
                           shape_string(view), shape_string(strides));
            return false;
        }
        last_index += reach;
    }
    return true;
}

// The storage's element count. False, with the error set, for a negative size or a count
// whose bytes would pass kMaxElements.
bool measure_storage(const std::vector<int64_t>& storage, size_t element_size, int64_t& storage_count) {
    storage_count = 1;
    for (const int64_t dim : storage) {
        if (dim < 0 || !checked_multiply(storage_count, dim)) {
            set_last_error("{}: storage shape {} is negative or overflows the element count", kCreateApi,
                           shape_string(storage));
            return false;
        }
    }
    if (storage_count > kMaxElements / static_cast<int64_t>(element_size)) {
        set_last_error("{}: storage shape {} overflows the byte count", kCreateApi, shape_string(storage));
        return false;
    }
    return true;
}

}  // namespace

bool tensor_is_live(const aclTensor* tensor) {
    return registry().contains(tensor);
}

TensorHold::TensorHold(const aclTensor* const* tensors, size_t count) : count_(std::min(count, kMaxTensors)) {
    for (size_t i = 0; i < count_; ++i) {
        tensors_[i] = tensors[i];
        held_[i] = tensors[i] != nullptr && registry().hold(tensors[i]);
    }
}

TensorHold::~TensorHold() {
    for (size_t i = 0; i < count_; ++i)
        if (held_[i]) registry().release(tensors_[i]);
}

std::string shape_string(const std::vector<int64_t>& dims) {
    return fmt::format("[{}]", fmt::join(dims, ","));
}

const char* dtype_name(aclDataType dtype) {
    switch (dtype) {
        case ACL_FLOAT:
            return "float32";
        case ACL_FLOAT16:
            return "float16";
        case ACL_INT8:
            return "int8";
        case ACL_INT32:
            return "int32";
        case ACL_UINT8:
            return "uint8";
        case ACL_INT16:
            return "int16";
        case ACL_UINT16:
            return "uint16";
        case ACL_UINT32:
            return "uint32";
        case ACL_INT64:
            return "int64";
        case ACL_UINT64:
            return "uint64";
        case ACL_DOUBLE:
            return "float64";
        case ACL_BOOL:
            return "bool";
        case ACL_STRING:
            return "string";
        case ACL_COMPLEX64:
            return "complex64";
        case ACL_COMPLEX128:
            return "complex128";
        case ACL_BF16:
            return "bfloat16";
        default:
            return "undefined";
    }
}

const char* format_name(aclFormat format) {
    switch (format) {
        case ACL_FORMAT_NCHW:
            return "NCHW";
        case ACL_FORMAT_NHWC:
            return "NHWC";
        case ACL_FORMAT_ND:
            return "ND";
        case ACL_FORMAT_NC1HWC0:
            return "NC1HWC0";
        case ACL_FORMAT_FRACTAL_Z:
            return "FRACTAL_Z";
        default:
            return "UNDEFINED";
    }
}

}  // namespace nnplug

extern "C" {

size_t aclDataTypeSize(aclDataType dataType) {
    return nnplug::dtype_size(nnplug::enum_bits(dataType));
}

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format,
                           const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
    using nnplug::set_last_error;
    constexpr const char* api = nnplug::kCreateApi;
    if (!nnplug::plain_arguments_valid(viewDims, viewDimsNum, nnplug::enum_bits(dataType), stride, offset,
                                       nnplug::enum_bits(format), storageDims, storageDimsNum))
        return nullptr;
    std::vector<int64_t> view(viewDims, viewDims + viewDimsNum);
    std::vector<int64_t> strides(stride, stride + viewDimsNum);
    std::vector<int64_t> storage(storageDims, storageDims + storageDimsNum);
    int64_t view_count = 1, storage_count = 1, last_index = offset;
    if (!nnplug::measure_view(view, strides, offset, view_count, last_index) ||
        !nnplug::measure_storage(storage, nnplug::dtype_size(nnplug::enum_bits(dataType)), storage_count))
        return nullptr;
    if (view_count > 0 && last_index >= storage_count) {
        set_last_error(
            "{}: view {} with strides {} and offset {} reaches element {}, past storage {} "
            "of {} elements",
            api, nnplug::shape_string(view), nnplug::shape_string(strides), offset, last_index,
            nnplug::shape_string(storage), storage_count);
        return nullptr;
    }
    auto* tensor = new (std::nothrow) aclTensor;
    if (tensor == nullptr) {
        set_last_error("{}: out of host memory", api);
        return nullptr;
    }
    tensor->view_dims = std::move(view);
    tensor->strides = std::move(strides);
    tensor->offset = offset;
    tensor->dtype = dataType;
    tensor->format = format;
    tensor->storage_dims = std::move(storage);
    tensor->storage_elements = storage_count;
    tensor->data = tensorData;
    try {
        nnplug::registry().add(tensor);
    } catch (const std::bad_alloc&) {
        delete tensor;
        set_last_error("{}: out of host memory", api);
        return nullptr;
    }
    return tensor;
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
    if (tensor == nullptr) return ACLNN_SUCCESS;  // as free(NULL)
    if (!nnplug::registry().remove(tensor)) {
        nnplug::set_last_error(
            "aclDestroyTensor: {} is not a live tensor (destroyed already, or not made by "
            "aclCreateTensor)",
            static_cast<const void*>(tensor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
    if (tensor == nullptr || viewDims == nullptr || viewDimsNum == nullptr) {
        nnplug::set_last_error("aclGetViewShape: tensor, viewDims or viewDimsNum is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const nnplug::TensorHold hold(&tensor, 1);
    if (!hold.held(0)) {
        nnplug::set_last_error("aclGetViewShape: tensor is not a live tensor (destroyed already?)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    // The caller frees the array with delete[], as with CANN.
    *viewDimsNum = tensor->view_dims.size();
    *viewDims = new int64_t[tensor->view_dims.size() + 1];
    std::copy(tensor->view_dims.begin(), tensor->view_dims.end(), *viewDims);
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
    if (tensor == nullptr || dataType == nullptr) {
        nnplug::set_last_error("aclGetDataType: tensor or dataType is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const nnplug::TensorHold hold(&tensor, 1);
    if (!hold.held(0)) {
        nnplug::set_last_error("aclGetDataType: tensor is not a live tensor (destroyed already?)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    *dataType = tensor->dtype;
    return ACLNN_SUCCESS;
}

}  // extern "C"
