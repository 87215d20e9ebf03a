// Device memory: one reserved host region of the SoC's capacity per device, handed
// out in aligned blocks. It stays addressable from the host (the emulated cores are
// host threads), but every pointer is checked against it, so host and device memory
// (and the memory of two devices) are never confused silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace nnplug::emu {

class DeviceArena {
public:
    // CANN's aclrtMalloc rounds a size up to 32 bytes and adds 32, and aligns the start
    // to at least 64 bytes; blocks here start on 512 bytes (the granularity of the NPU
    // caching allocators), which keeps every 32-byte copy rule of the kernels satisfied.
    static constexpr size_t kAlignment = 512;

    // Reserves capacity bytes of address space for device `device`, committing none of
    // it (8 devices of 64 GiB cost no host memory); throws std::runtime_error if it cannot.
    DeviceArena(int64_t capacity, int device);
    ~DeviceArena();
    DeviceArena(const DeviceArena&) = delete;
    DeviceArena& operator=(const DeviceArena&) = delete;

    // A block of at least bytes, or nullptr with the reason in error.
    void* allocate(size_t bytes, std::string& error);
    // False with the reason for a pointer that is not the start of a live block.
    bool release(void* pointer, std::string& error);

    // Whether [pointer, pointer + bytes) lies inside the reserved region at all.
    bool in_region(const void* pointer, size_t bytes = 1) const;
    // Whether [pointer, pointer + bytes) lies inside one live block.
    bool in_live_block(const void* pointer, size_t bytes) const;

    int64_t capacity() const { return capacity_; }
    int device() const { return device_; }
    int64_t bytes_in_use() const;

    // The device whose arena (of any live DeviceArena in the process) holds pointer, or -1.
    static int device_holding(const void* pointer);

private:
    std::byte* base_ = nullptr;
    int64_t capacity_ = 0;
    int device_ = 0;
    mutable std::mutex mutex_;
    size_t committed_ = 0;           // the prefix of the region made accessible, in whole pages
    std::map<size_t, size_t> free_;  // offset -> size, coalesced
    struct Block {
        size_t size;       // the footprint taken from the arena
        size_t requested;  // the bytes asked for
    };
    std::map<size_t, Block> live_;  // offset -> block
    int64_t in_use_ = 0;
};

}  // namespace nnplug::emu
