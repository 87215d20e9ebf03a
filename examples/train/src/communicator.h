// The processes of a data-parallel run: one when nnplug_train runs alone, N under
// `mpirun -np N` (when built with MPI). Only the main thread calls it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace train {

class Communicator {
public:
    // Joins the MPI job when the program was started by mpirun (Open MPI's, or another
    // PMI launcher's, environment), else a run of one process. Throws std::runtime_error
    // when started by mpirun with more than one process and built without MPI.
    Communicator(int* argc, char*** argv);
    ~Communicator();  // MPI_Finalize
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    int local_rank() const { return local_rank_; }  // among the processes on this machine
    int local_size() const { return local_size_; }  // the processes on this machine
    bool distributed() const { return size_ > 1; }
    // "rank R of N" (empty alone), for messages.
    std::string name() const;

    // Every process sends `send` (its bytes; may be empty) and receives every process's,
    // concatenated in rank order, into `receive` (sum of counts bytes). counts[r] is what
    // rank r sends. With one process, a copy.
    void all_gather(const void* send, int64_t send_bytes, void* receive, const std::vector<int64_t>& counts);

    // Stops every process of the job with this exit code (MPI_Abort); alone, std::exit.
    [[noreturn]] void abort(int code);

    // Seconds spent in all_gather since the start (the combine's share of a step).
    double combine_seconds() const { return combine_seconds_; }

private:
    int rank_ = 0;
    int size_ = 1;
    int local_rank_ = 0;
    int local_size_ = 1;
    [[maybe_unused]] bool initialized_ = false;  // MPI_Init ran (only with MPI)
    double combine_seconds_ = 0;
    std::vector<int> counts_, displacements_;
};

// The threads a process should start by default: its share of this machine's cores. The
// cores it may run on (its CPU affinity) when the launcher bound it to fewer than the
// machine has; else the machine's cores divided among its local processes. At least 1.
int default_threads(int local_processes);

// True when this program was built with MPI.
bool built_with_mpi();

}  // namespace train
