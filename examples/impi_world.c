/*  impi_world.c — a gimpi task that meets MPI ranks of another IMPI implementation (LAM/MPI
 *  and the like) in one IMPI job, through the world collectives of <gimpi_world.h>.  It
 *  uses only the installed headers <gimpi.h> and <gimpi_world.h>.
 *
 *  Every proc of the job — this program under gimpirun, or an MPI program on the other
 *  client doing the same calls on MPI_COMM_WORLD (doc gimpi_world(3) shows both sides) —
 *  runs, in this order:
 *      MPI_Barrier
 *      MPI_Bcast of 4 ints from world rank 0 (1, 2, 3, 4 there)
 *      MPI_Reduce(MPI_SUM) of one int, rank + 1, to the last world rank
 *      MPI_Allreduce(MPI_MAX) of one int, rank * rank
 *  and prints one line "rank R of N: ... OK" (or FAILED) after checking every result.
 *
 *      impi-server -server 2 ...        then, with its address:
 *      gimpirun -client 0 ADDR -np 2 examples/impi_world
 *      (the other client: gimpirun -client 1 ADDR -np 3 examples/impi_world, or the MPI
 *       program with the other implementation's launcher)
 *
 *  It also runs alone (gimpirun -np 3 examples/impi_world, or from the shell as a job of
 *  one task).  Exit status 0 when every check passed.
 */
#include <gimpi.h>
#include <gimpi_world.h>

#include <stdio.h>

/*  Prints a failed call and returns 1. */
static int fail(int rank, const char *what, int rc)
{
    printf("rank %d: %s: %s FAILED\n", rank, what, gimpi_strerror(rc));
    return 1;
}

int main(void)
{
    char err[256];
    gimpi_t *t = gimpi_init(err, sizeof err);
    if (!t) {
        fprintf(stderr, "impi_world: %s\n", err);
        return 1;
    }
    int rank = gimpi_rank(t), n = gimpi_size(t), bad = 0, rc;
    if ((rc = gimpi_world_barrier(t)) != 0)
        bad = fail(rank, "barrier", rc);
    int v[4] = { 0, 0, 0, 0 };
    if (rank == 0)
        for (int i = 0; i < 4; i++)
            v[i] = i + 1;
    if ((rc = gimpi_world_bcast(t, v, sizeof v, 0)) != 0)
        bad = fail(rank, "bcast", rc);
    else if (v[0] != 1 || v[1] != 2 || v[2] != 3 || v[3] != 4)
        bad = fail(rank, "bcast: wrong data", 0);
    int mine = rank + 1, sum = 0;
    if ((rc = gimpi_world_reduce(t, &mine, &sum, 1, GIMPI_INT, GIMPI_OP_SUM, n - 1)) != 0)
        bad = fail(rank, "reduce", rc);
    else if (rank == n - 1 && sum != n * (n + 1) / 2)
        bad = fail(rank, "reduce: wrong sum", 0);
    int sq = rank * rank, max = -1;
    if ((rc = gimpi_world_allreduce(t, &sq, &max, 1, GIMPI_INT, GIMPI_OP_MAX)) != 0)
        bad = fail(rank, "allreduce", rc);
    else if (max != (n - 1) * (n - 1))
        bad = fail(rank, "allreduce: wrong max", 0);
    printf("rank %d of %d: bcast %d %d %d %d, sum %d, max %d %s\n", rank, n, v[0], v[1], v[2],
           v[3], rank == n - 1 ? sum : 0, max, bad ? "FAILED" : "OK");
    fflush(stdout);
    rc = gimpi_finalize(&t);
    return bad || rc ? 1 : 0;
}
