#include "device_stream.h"

#include <exception>

namespace nnplug::emu {

DeviceStream::DeviceStream(int id) : id_(id), worker_([this] { run(); }) {}

DeviceStream::~DeviceStream() {
    {
        std::unique_lock lock(mutex_);
        drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
        stopping_ = true;
    }
    work_ready_.notify_all();
    worker_.join();
}

void DeviceStream::enqueue(Work work) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(work));
    }
    work_ready_.notify_one();
}

void DeviceStream::wait_until_drained() {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

WorkResult DeviceStream::synchronize() {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
    WorkResult result = std::move(first_failure_);
    if (result.status != NNPLUG_OK && skipped_ > 0)
        result.message += " (" + std::to_string(skipped_) + " later task(s) on this stream were skipped)";
    first_failure_ = WorkResult{};
    skipped_ = 0;
    return result;
}

void DeviceStream::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left
        Work work = std::move(queue_.front());
        queue_.pop_front();
        if (first_failure_.status != NNPLUG_OK) {
            ++skipped_;
        } else {
            busy_ = true;
            lock.unlock();
            WorkResult result;
            try {
                result = work();
            } catch (const std::exception& exception) {
                result = {NNPLUG_ERR_INTERNAL, std::string("device work failed: ") + exception.what()};
            }
            lock.lock();
            busy_ = false;
            if (result.status != NNPLUG_OK) first_failure_ = std::move(result);
        }
        if (queue_.empty()) drained_.notify_all();
    }
}

}  // namespace nnplug::emu
