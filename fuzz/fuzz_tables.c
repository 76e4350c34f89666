/*  fuzz/fuzz_tables.c — libFuzzer target for the startup tables' decoders: a saved tables
 *  file (impi_tables_load, the hand-over from gimpirun to its tasks) and a sequence of
 *  server COLL replies (impi_tables_add_reply + impi_tables_finish).  Input: one byte
 *  choosing the mode and the client rank, then the file or the replies (each a big-endian
 *  Uint4 length and that many payload bytes).  Invariants: accepted tables add up (world
 *  ranks cover nprocs, every proc's host exists, ackmark <= hiwater, tag bound >= 32767),
 *  and loading what was saved gives the same tables again.
 */
#include "fuzz_check.h"
#include "impi/impi_tables.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*  The invariants of finished tables. */
static void s_check(const impi_tables_t *t)
{
    CHECK(t->nclients >= 1 && t->nclients <= IMPI_MAX_CLIENTS);
    CHECK(t->pktlen >= 1 && t->tagub >= IMPI_MIN_TAGUB);
    CHECK(t->ackmark >= 1 && t->ackmark <= t->hiwater);
    int procs = 0, hosts = 0;
    for (int c = 0; c < t->nclients; c++) {
        CHECK(t->clients[c].first_proc == procs && t->clients[c].first_host == hosts);
        procs += t->clients[c].nprocs;
        hosts += t->clients[c].nhosts;
    }
    CHECK(procs == t->nprocs && hosts == t->nhosts);
    for (int p = 0; p < t->nprocs; p++)
        CHECK(t->procs[p].host >= 0 && t->procs[p].host < t->nhosts);
}

/*  Saves, reloads and compares the printed forms. */
static void s_roundtrip(const impi_tables_t *t, int myclient)
{
    int fd = memfd_create("fuzz-tables", 0);
    CHECK(fd >= 0);
    CHECK(impi_tables_save(t, fd) == 0);
    lseek(fd, 0, SEEK_SET);
    char err[256];
    impi_tables_t *again = impi_tables_load(fd, myclient, err, sizeof err);
    close(fd);
    CHECK(again != NULL);
    char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    FILE *fa = open_memstream(&a, &alen), *fb = open_memstream(&b, &blen);
    impi_tables_print(t, fa);
    impi_tables_print(again, fb);
    fclose(fa);
    fclose(fb);
    CHECK(alen == blen && memcmp(a, b, alen) == 0);
    free(a);
    free(b);
    impi_tables_destroy(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int myclient = data[0] & 0x1f;
    char err[256];
    impi_tables_t *t = NULL;
    if (data[0] & 0x80) {               /* a saved tables file */
        int fd = memfd_create("fuzz-tables", 0);
        if (fd < 0)
            return 0;
        if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
            close(fd);
            return 0;
        }
        lseek(fd, 0, SEEK_SET);
        t = impi_tables_load(fd, myclient, err, sizeof err);
        close(fd);
    } else {                            /* replies, then finish */
        int nclients = (data[0] >> 5 & 0x3) + 1;
        t = impi_tables_new(nclients, myclient % nclients);
        size_t off = 1;
        int rc = 0;
        while (t && rc == 0 && size - off >= 4) {
            uint32_t len = gimpi_be_get32(data + off);
            off += 4;
            if (len > size - off)
                break;
            rc = impi_tables_add_reply(t, data + off, len, err, sizeof err);
            off += len;
        }
        if (t && (rc != 0 || impi_tables_finish(t, err, sizeof err) != 0))
            impi_tables_destroy(&t);
    }
    if (t) {
        s_check(t);
        s_roundtrip(t, myclient < t->nclients ? myclient : 0);
        impi_tables_destroy(&t);
    }
    return 0;
}
