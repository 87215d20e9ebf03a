#include "device_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace nnplug::emu {
namespace {

size_t round_up(size_t value, size_t unit) {
    return (value + unit - 1) / unit * unit;
}

// Freed blocks this large give their pages back to the host.
constexpr size_t kReturnPagesFrom = 1 << 20;
constexpr size_t kPage = 4096;
// The accessible prefix grows in these steps, so most allocations make no system call.
constexpr size_t kCommitStep = 2 << 20;

// Every live arena of the process, so a pointer into another device's memory is named as such.
struct ArenaRegistry {
    std::mutex mutex;
    std::vector<const DeviceArena*> arenas;
};

// Never destroyed: arenas may outlive the plugin's statics. A program that exits without
// aclFinalize has libnnplug destroy its runtime, and so the arenas, after this library's
// statics are gone.
ArenaRegistry& registry() {
    static ArenaRegistry* instance = new ArenaRegistry;
    return *instance;
}

}  // namespace

DeviceArena::DeviceArena(int64_t capacity, int device) : capacity_(capacity), device_(device) {
    // Address space only, inaccessible until allocations reach it: no host memory and,
    // even under strict overcommit, no commit charge for the capacity never used.
    void* region = mmap(nullptr, static_cast<size_t>(capacity), PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED)
        throw std::runtime_error("cannot reserve " + std::to_string(capacity) +
                                 " bytes of address space for device memory (" + std::strerror(errno) +
                                 "); lower the memory_mib option");
    base_ = static_cast<std::byte*>(region);
    try {
        free_.emplace(0, static_cast<size_t>(capacity));
        std::lock_guard lock(registry().mutex);
        registry().arenas.push_back(this);
    } catch (...) {
        munmap(base_, static_cast<size_t>(capacity_));
        throw;
    }
}

DeviceArena::~DeviceArena() {
    {
        std::lock_guard lock(registry().mutex);
        auto& arenas = registry().arenas;
        arenas.erase(std::remove(arenas.begin(), arenas.end(), this), arenas.end());
    }
    munmap(base_, static_cast<size_t>(capacity_));
}

int DeviceArena::device_holding(const void* pointer) {
    std::lock_guard lock(registry().mutex);
    for (const DeviceArena* arena : registry().arenas)
        if (arena->in_region(pointer)) return arena->device_;
    return -1;
}

void* DeviceArena::allocate(size_t bytes, std::string& error) {
    // Checked before rounding up: near SIZE_MAX the rounding would wrap to a tiny block.
    if (bytes > static_cast<size_t>(capacity_)) {
        error = "cannot allocate " + std::to_string(bytes) + " bytes of device memory: the device has " +
                std::to_string(capacity_) + " bytes";
        return nullptr;
    }
    const size_t footprint = round_up(round_up(bytes, 32) + 32, kAlignment);
    std::lock_guard lock(mutex_);
    // Best fit: the smallest free range that holds the block keeps large ranges whole.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->second >= footprint && (best == free_.end() || it->second < best->second)) best = it;
    if (best == free_.end()) {
        size_t largest = 0;
        for (const auto& range : free_) largest = std::max(largest, range.second);
        error = "cannot allocate " + std::to_string(bytes) +
                " bytes of device memory: " + std::to_string(capacity_ - in_use_) + " of " +
                std::to_string(capacity_) + " bytes are free, the largest free block has " +
                std::to_string(largest) + " bytes";
        return nullptr;
    }
    const size_t offset = best->first;
    if (offset + footprint > committed_) {
        const size_t target =
            std::min(round_up(offset + footprint, kCommitStep), static_cast<size_t>(capacity_));
        if (mprotect(base_ + committed_, target - committed_, PROT_READ | PROT_WRITE) != 0) {
            error = "cannot allocate " + std::to_string(bytes) +
                    " bytes of device memory: the host refused " + std::to_string(target - committed_) +
                    " more bytes (" + std::strerror(errno) + ")";
            return nullptr;
        }
        committed_ = target;
    }
    const size_t remaining = best->second - footprint;
    free_.erase(best);
    if (remaining > 0) free_.emplace(offset + footprint, remaining);
    live_.emplace(offset, Block{footprint, bytes});
    in_use_ += static_cast<int64_t>(footprint);
    return base_ + offset;
}

bool DeviceArena::release(void* pointer, std::string& error) {
    if (!in_region(pointer)) {
        error = "pointer is host memory, not device memory from aclrtMalloc";
        return false;
    }
    const size_t offset = static_cast<size_t>(static_cast<std::byte*>(pointer) - base_);
    std::lock_guard lock(mutex_);
    const auto block = live_.find(offset);
    if (block == live_.end()) {
        error = "pointer is not the start of a live device allocation (double free, or inside a block)";
        return false;
    }
    size_t start = offset;
    size_t size = block->second.size;
    live_.erase(block);
    in_use_ -= static_cast<int64_t>(size);
    if (size >= kReturnPagesFrom) {
        const size_t first = round_up(start, kPage);
        const size_t last = (start + size) / kPage * kPage;
        if (last > first) madvise(base_ + first, last - first, MADV_DONTNEED);
    }
    // Coalesce with the free neighbours on both sides.
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + size) {
        size += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto previous = std::prev(next);
        if (previous->first + previous->second == start) {
            start = previous->first;
            size += previous->second;
            free_.erase(previous);
        }
    }
    free_.emplace(start, size);
    return true;
}

bool DeviceArena::in_region(const void* pointer, size_t bytes) const {
    const auto* p = static_cast<const std::byte*>(pointer);
    return p >= base_ && p < base_ + capacity_ && bytes <= static_cast<size_t>(base_ + capacity_ - p);
}

bool DeviceArena::in_live_block(const void* pointer, size_t bytes) const {
    if (!in_region(pointer, bytes)) return false;
    const size_t offset = static_cast<size_t>(static_cast<const std::byte*>(pointer) - base_);
    std::lock_guard lock(mutex_);
    auto block = live_.upper_bound(offset);
    if (block == live_.begin()) return false;
    --block;
    return offset + bytes <= block->first + block->second.requested;
}

int64_t DeviceArena::bytes_in_use() const {
    std::lock_guard lock(mutex_);
    return in_use_;
}

}  // namespace nnplug::emu
