/* The combine of a data-parallel nnplug_train step on its own: MPI_Allgatherv of every
 * rank's part (equal parts) of `total` bytes, as the trainer gathers the shard records, and
 * MPI_Allreduce of a float gradient of the same bytes for comparison. Prints, on rank 0, one
 * line per size: ranks, total bytes, the median seconds of each and the fastest repetition's
 * (after a warm-up; on a shared machine the fastest shows the cost of the transfer itself,
 * the median adds the waits for a descheduled rank). Built and
 * run by bench/train/measure_scaling.py:
 *
 *   mpicc -O2 -o combine_cost bench/train/combine_cost.c
 *   mpirun -np 2 ./combine_cost [repetitions]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* values, int count) {
    qsort(values, (size_t)count, sizeof(double), compare);
    return values[count / 2];
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int repetitions = argc > 1 ? atoi(argv[1]) : 200;
    static const long kSizes[] = {64, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304};
    const long largest = kSizes[sizeof(kSizes) / sizeof(kSizes[0]) - 1];
    char* send = calloc((size_t)largest, 1);
    char* receive = calloc((size_t)largest + 64 * (size_t)ranks, 1);
    float* reduce_in = calloc((size_t)largest / 4 + 1, sizeof(float));
    float* reduce_out = calloc((size_t)largest / 4 + 1, sizeof(float));
    int* counts = calloc((size_t)ranks, sizeof(int));
    int* displacements = calloc((size_t)ranks, sizeof(int));
    double* gather_times = calloc((size_t)repetitions, sizeof(double));
    double* reduce_times = calloc((size_t)repetitions, sizeof(double));
    if (rank == 0)
        printf(
            "ranks,total_bytes,allgatherv_seconds,allreduce_seconds,allgatherv_fastest,allreduce_fastest\n");
    for (size_t s = 0; s < sizeof(kSizes) / sizeof(kSizes[0]); ++s) {
        const long total = kSizes[s];
        long offset = 0;
        for (int r = 0; r < ranks; ++r) {
            counts[r] = (int)(total * (r + 1) / ranks - total * r / ranks);
            displacements[r] = (int)offset;
            offset += counts[r];
        }
        for (int i = -repetitions / 10; i < repetitions; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            MPI_Allgatherv(send, counts[rank], MPI_BYTE, receive, counts, displacements, MPI_BYTE,
                           MPI_COMM_WORLD);
            const double gathered = MPI_Wtime() - start;
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
            MPI_Allreduce(reduce_in, reduce_out, (int)(total / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            const double reduced = MPI_Wtime() - start;
            if (i >= 0) {
                gather_times[i] = gathered;
                reduce_times[i] = reduced;
            }
        }
        /* The slowest rank's median decides the step. */
        double local[4] = {median(gather_times, repetitions), median(reduce_times, repetitions), 0, 0},
               worst[4];
        local[2] = gather_times[0]; /* sorted by median() */
        local[3] = reduce_times[0];
        MPI_Reduce(local, worst, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%d,%ld,%.9f,%.9f,%.9f,%.9f\n", ranks, total, worst[0], worst[1], worst[2], worst[3]);
    }
    free(send);
    free(receive);
    free(reduce_in);
    free(reduce_out);
    free(counts);
    free(displacements);
    free(gather_times);
    free(reduce_times);
    MPI_Finalize();
    return 0;
}
