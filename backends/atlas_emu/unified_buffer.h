// One emulated core's Unified Buffer (UB): the on-chip memory a vector kernel
// computes in. Data enters and leaves it only by DataCopy, which the NPU runs in
// 32-byte units at 32-byte aligned UB addresses; a kernel that breaks either
// rule, or lays out more UB than the SoC has, faults here instead of silently
// working on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace nnplug::emu {

// The storage of one core's Unified Buffer, at least `bytes`: each host thread keeps one for
// the cores it runs (elementwise_kernel.cpp).
std::byte* core_storage(int64_t bytes);

class UnifiedBuffer {
public:
    static constexpr int64_t kCopyUnit = 32;

    // storage holds at least capacity bytes, 64-byte aligned.
    UnifiedBuffer(std::byte* storage, int64_t capacity, const char* soc_name)
        : storage_(storage), capacity_(capacity), soc_name_(soc_name) {}

    // Claims the kernel's whole layout; faults if the SoC's UB cannot hold it.
    bool reserve(int64_t bytes) {
        if (bytes > capacity_)
            return fault("kernel used " + std::to_string(bytes) + " bytes of Unified Buffer, " + soc_name_ +
                         " has " + std::to_string(capacity_));
        reserved_ = bytes;
        return true;
    }

    // Global memory -> UB: bytes valid bytes, the burst padded with zeros to 32 bytes.
    bool copy_in(int64_t ub_offset, const void* global, int64_t bytes) {
        if (!check_copy("copy-in", ub_offset, bytes)) return false;
        std::memcpy(storage_ + ub_offset, global, static_cast<size_t>(bytes));
        const int64_t burst = padded(bytes);
        if (burst > bytes) std::memset(storage_ + ub_offset + bytes, 0, static_cast<size_t>(burst - bytes));
        moved_ += bytes;
        return true;
    }

    // UB -> global memory: only the valid bytes land (a padded copy-out, as DataCopyPad does).
    bool copy_out(void* global, int64_t ub_offset, int64_t bytes) {
        if (!check_copy("copy-out", ub_offset, bytes)) return false;
        std::memcpy(global, storage_ + ub_offset, static_cast<size_t>(bytes));
        moved_ += bytes;
        return true;
    }

    template <typename T>
    T* at(int64_t ub_offset) {
        return reinterpret_cast<T*>(storage_ + ub_offset);
    }

    bool fault(std::string message) {
        if (fault_.empty()) fault_ = std::move(message);
        return false;
    }
    const std::string& fault_message() const { return fault_; }
    int64_t bytes_moved() const { return moved_; }

private:
    static int64_t padded(int64_t bytes) { return (bytes + kCopyUnit - 1) / kCopyUnit * kCopyUnit; }

    bool check_copy(const char* direction, int64_t ub_offset, int64_t bytes) {
        if (ub_offset % kCopyUnit != 0)
            return fault(std::string("DataCopy ") + direction + " at Unified Buffer offset " +
                         std::to_string(ub_offset) + " is not 32-byte aligned");
        if (ub_offset + padded(bytes) > reserved_)
            return fault(std::string("DataCopy ") + direction + " of " + std::to_string(padded(bytes)) +
                         " bytes at Unified Buffer offset " + std::to_string(ub_offset) +
                         " runs past the kernel's " + std::to_string(reserved_) + " bytes");
        return true;
    }

    std::byte* storage_;
    int64_t capacity_;
    const char* soc_name_;
    int64_t reserved_ = 0;
    int64_t moved_ = 0;
    std::string fault_;
};

// A kernel's UB layout laid out region after region, each at a 32-byte aligned offset.
struct UbRegions {
    int64_t bytes = 0;
    int64_t take(int64_t size) {
        const int64_t offset = bytes;
        bytes += (size + UnifiedBuffer::kCopyUnit - 1) / UnifiedBuffer::kCopyUnit * UnifiedBuffer::kCopyUnit;
        return offset;
    }
};

}  // namespace nnplug::emu
