/*  impi_tables.h — the startup tables: everything the COLL exchange of an IMPI job agreed.
 *
 *  A client describes its own hosts and procs in an impi_desc_t; the startup client sends
 *  it label by label and feeds every server reply into impi_tables_add_reply(); once all
 *  14 labels are in, impi_tables_finish() validates that the tables add up and computes
 *  the derived values (global host ranks and world ranks, packet length, tag bound, flow
 *  control marks, collective crossovers, the version each client pair uses).  The tables
 *  can be serialised (impi_tables_save/load: the raw replies, so a task re-derives
 *  exactly what its launcher agreed) to hand them to the tasks of a job.
 */
#ifndef GIMPI_IMPI_TABLES_H
#define GIMPI_IMPI_TABLES_H

#include "impi/impi_wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ what a client offers */

typedef struct {
    uint8_t addr[16];           /* H_IPV6: where other hosts connect */
    int port;                   /* H_PORT */
    int nprocs;                 /* H_NPROCS */
    uint32_t ackmark;           /* H_ACKMARK */
    uint32_t hiwater;           /* H_HIWATER */
} impi_desc_host_t;

typedef struct {
    int rank;                   /* client rank, 0 <= rank < nclients */
    int nversions;
    uint32_t versions[8][2];    /* {major, minor}, ascending, first {0,0} */
    uint32_t datalen;           /* C_DATALEN */
    int32_t tagub;              /* C_TAGUB */
    int32_t xsize;              /* C_COLL_XSIZE, -1 = default */
    int32_t maxlinear;          /* C_COLL_MAXLINEAR, -1 = default */
    int nhosts;
    impi_desc_host_t *hosts;    /* nhosts entries */
    int nprocs;                 /* sum of hosts[].nprocs */
    impi_proc_t *procs;         /* nprocs entries, host by host */
} impi_desc_t;

/* ------------------------------------------------------------------ what the job agreed */

typedef struct {
    int nversions;
    uint32_t versions[8][2];
    int nhosts, nprocs;
    uint32_t datalen;
    int32_t tagub, xsize, maxlinear;   /* as sent (-1 kept here) */
    int first_host;             /* global host rank of its first host */
    int first_proc;             /* world rank of its first proc */
} impi_client_info_t;

typedef struct {
    uint8_t addr[16];
    int port;
    int nprocs;
    uint32_t ackmark, hiwater;
    int client;                 /* owning client rank */
    int first_proc;             /* world rank of its first proc */
} impi_host_info_t;

typedef struct {
    impi_proc_t id;             /* P_IPV6 + P_PID */
    int host;                   /* global host rank */
    int client;
} impi_proc_info_t;

typedef struct impi_tables_t impi_tables_t;
struct impi_tables_t {
    int nclients;
    int myclient;               /* this client's rank, -1 if unknown */
    impi_client_info_t *clients;
    int nhosts;
    impi_host_info_t *hosts;    /* by global host rank */
    int nprocs;
    impi_proc_info_t *procs;    /* by world rank */
    /* derived */
    uint32_t pktlen;            /* min C_DATALEN */
    int32_t tagub;              /* min C_TAGUB (>= 32767) */
    uint32_t ackmark, hiwater;  /* min H_ACKMARK, min H_HIWATER */
    int32_t xsize, maxlinear;   /* agreed, -1 replaced by 1024 / 4 */
    uint32_t (*pair_version)[2];    /* nclients x nclients, [a * nclients + b] */
    /* private: the raw replies, kept for save/load */
    void *priv;
};

/*  New, empty tables for a job of nclients (1..32), seen from client myclient (-1:
 *  unknown).  NULL when nclients or myclient is out of range. */
impi_tables_t *impi_tables_new(int nclients, int myclient);
/*  Frees them and nulls the pointer. */
void impi_tables_destroy(impi_tables_t **self_p);

/*  Takes one server COLL reply payload (label, mask, data).  Labels must arrive in
 *  ascending order; unknown labels are skipped.  Every one of the 14 labels is mandatory
 *  (v0.0), so its mask must name every client.  Returns 0, or -1 with a message in err;
 *  after an error the tables refuse further replies. */
int impi_tables_add_reply(impi_tables_t *self, const uint8_t *payload, size_t len,
                          char *err, size_t errsize);

/*  Validates the whole and computes the derived values.  Returns 0, or -1 with a message
 *  in err (a label missing, NPROCS != sum of H_NPROCS, ackmark > hiwater, XSIZE or
 *  MAXLINEAR disagreeing, ...). */
int impi_tables_finish(impi_tables_t *self, char *err, size_t errsize);

/*  Writes the tables in a human-readable form (what examples/impi-startup prints). */
void impi_tables_print(const impi_tables_t *self, FILE *out);

/*  Serialises the tables (the raw replies) to a file descriptor / reads them back.
 *  Format: "GIMPITB1", Uint4 nclients, Uint4 nreplies, per reply Uint4 len + the reply
 *  payload (label, mask, data), then a Uint8 FNV-1a checksum of all the preceding bytes;
 *  all big-endian.  save returns 0 or -1 (errno set).  load reads exactly that many bytes,
 *  feeds every reply to impi_tables_add_reply and calls impi_tables_finish, so a
 *  truncated, garbled or inconsistent file is refused with a message in err (NULL). */
int impi_tables_save(const impi_tables_t *self, int fd);
impi_tables_t *impi_tables_load(int fd, int myclient, char *err, size_t errsize);

/*  Checks a description before it is sent: 0 <= rank < 32, 1..8 versions ascending from
 *  0.0, nhosts >= 1 with hosts, nprocs = sum of hosts[].nprocs with procs, and every value
 *  inside the label table's range (so the server never sees what peers would refuse).
 *  Returns 0, or -1 with a message in err. */
int impi_desc_check(const impi_desc_t *desc, char *err, size_t errsize);

/*  The COLL payload (label + elements) this client sends for `label`, built from desc.
 *  Returns a malloc'd buffer and its length in *len, or NULL for an unknown label, more
 *  than 8 versions, missing hosts/procs arrays or no memory. */
uint8_t *impi_desc_payload(const impi_desc_t *desc, int32_t label, size_t *len);

#endif
