// A stream: a FIFO of device work run in order by its own worker thread, so the
// host returns from a launch at once, as on an NPU.
#pragma once

#include <nnplug/plugin.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace nnplug::emu {

// What one piece of stream work reports: NNPLUG_OK, or a status and one line.
struct WorkResult {
    nnplug_status status = NNPLUG_OK;
    std::string message;
};

class DeviceStream {
public:
    using Work = std::function<WorkResult()>;

    explicit DeviceStream(int id);
    // Waits for the pending work, then stops the worker.
    ~DeviceStream();
    DeviceStream(const DeviceStream&) = delete;
    DeviceStream& operator=(const DeviceStream&) = delete;

    int id() const { return id_; }

    // Appends work; it runs after everything enqueued before it.
    void enqueue(Work work);

    // Waits until the queue is empty, leaving any failure for synchronize.
    void wait_until_drained();

    // Waits until the queue is empty; returns the first failure since the last wait
    // (later work on a failed stream is skipped, as a faulted NPU stream is) and clears it.
    WorkResult synchronize();

private:
    void run();

    const int id_;
    std::mutex mutex_;
    std::condition_variable work_ready_;
    std::condition_variable drained_;
    std::deque<Work> queue_;
    bool busy_ = false;
    bool stopping_ = false;
    WorkResult first_failure_;
    size_t skipped_ = 0;
    std::thread worker_;
};

}  // namespace nnplug::emu
