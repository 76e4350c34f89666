/*  fuzz_gd_serve.c — libFuzzer target for groupd's request handler (groupd/gd_serve.c):
 *  the input is a sequence of requests from up to four connections, each request a byte
 *  with its frame count, a byte choosing the connection (its routing id and whether it is
 *  a known, counted connection), then its frames, each after a big-endian length pair.
 *  Every request goes through gd_serve_request exactly as groupd hands it what it read
 *  from its ROUTER (decoding, quotas, registry calls, replies and events on real inproc
 *  sockets nobody reads).  Checked: nothing crashes or leaks, and the registry stays
 *  within the limits set (a few tasks, groups and blocks, a small reserve quota).  Built
 *  by `make fuzz`, run by `make fuzz-run`.
 */
#include "groupd/gd_serve.h"
#include "fuzz_check.h"
#include "fuzz_gd_sockets.h"

#include <stdlib.h>
#include <string.h>
#include <zmq.h>

enum { MAX_FRAMES = 24, NCONN = 4, MAX_TASKS = 6, MAX_GROUPS = 5 };

/*  The sockets (fuzz_gd_sockets.h). */
static void *s_router, *s_xpub;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_gd_sockets("fuzz-gd-serve", &s_router, &s_xpub);
    groupd_t self = { .router = s_router, .xpub = s_xpub, .max_unreg = 20 };
    gd_registry_limits_t lim = { .max_tasks = MAX_TASKS, .max_groups = MAX_GROUPS,
                                 .max_groups_per_task = 3, .max_blocks = 4,
                                 .reserve_quota = 50 };
    if (gd_serve_init(&self, NULL, &lim) < 0)
        abort();
    /* connections 0 and 1 are known to the "monitor" (fds 10, 11): their quotas count */
    for (int32_t fd = 10; fd < 12; fd++) {
        gd_conn_t *c = calloc(1, sizeof *c);
        c->id = ++self.next_conn;
        gd_hash_put(self.fd_open, &fd, sizeof fd, c);
    }
    size_t off = 0;
    while (off + 2 <= size) {
        int nframes = data[off] % (MAX_FRAMES + 1);
        int conn = data[off + 1] % NCONN;
        off += 2;
        uint8_t id[2] = { 'c', (uint8_t)conn };
        gd_frame_t frames[1 + MAX_FRAMES] = { { id, sizeof id } };
        int n = 1;
        for (int k = 0; k < nframes && off + 2 <= size; k++) {
            size_t len = (size_t)data[off] << 8 | data[off + 1];
            off += 2;
            if (len > size - off)
                len = size - off;
            frames[n++] = (gd_frame_t){ data + off, len };
            off += len;
        }
        gd_serve_request(&self, frames, n, false, conn < 2 ? 10 + conn : -1);
        CHECK(gd_registry_ntasks(self.reg) <= MAX_TASKS);
        CHECK(gd_registry_ngroups(self.reg) <= MAX_GROUPS);
        CHECK(gd_registry_nblocks(self.reg) <= 4);
        CHECK(gd_vm_npending(self.vm) <= GD_VM_MAX_PENDING);
    }
    gd_serve_publish_marks(&self);
    gd_serve_fini(&self);
    return 0;
}
