/*  gimpi_vmwire.h — the one table of the virtual machine's two small protocols, and their
 *  codec: launcher <-> host agent (AGENT_* rows) and task -> manager requests relayed by
 *  groupd (VM_* rows, the payloads of groupd's VMREQ and HOSTS).
 *
 *  gimpirun starts a gimpi-agent on every other host of a virtual machine through an
 *  existing remote-start engine (ssh, or srun inside a Slurm allocation) and talks to it
 *  over that engine's standard input and output, so the channel is authenticated and
 *  carried by the engine, and gimpi opens no port of its own for it.  Every message is a
 *  frame: Uint4 length (big-endian, of what follows), one type byte, then the fields of
 *  the type's row below, in order.  Field letters:
 *    i  Int4, big-endian                  s  string: Uint4 length + bytes (no NUL inside)
 *    b  bytes: Uint4 length + bytes       v  string vector: Uint4 count + that many s
 *  A task's request to the virtual machine's manager (pvm_spawn onto another host,
 *  pvm_addhosts, pvm_delhosts, pvm_kill of a remote task) is one such frame carried as the
 *  blob of groupd's VMREQ, and so is the host table the manager publishes with HOSTS_SET.
 *  The decoder trusts no length (vmw_selftest cuts every frame short) and copies what it
 *  returns, so a message outlives its frame.  See doc/multihost.md.
 */
#ifndef GIMPI_VMWIRE_H
#define GIMPI_VMWIRE_H

#include <stddef.h>
#include <stdint.h>

/*  X(name, code, fields).  -> agent: from the launcher; agent ->: to the launcher. */
#define AGENT_FRAMES(X)                                                                  \
    X(AGENT_KEY,     0x01, "b")      /* -> agent: the job's key (32 bytes), always first */     \
    X(AGENT_HELLO,   0x02, "issi")   /* agent ->: version, host name, architecture, cpus */     \
    X(AGENT_START,   0x03, "iissvvii") /* -> agent: id, flags, address, wd, argv, env, k, n */  \
    X(AGENT_STARTED, 0x04, "iiis")   /* agent ->: id, pid, port (0: not listening), address */  \
    X(AGENT_FAILED,  0x05, "iis")    /* agent ->: id, gimpi error code, message */              \
    X(AGENT_GO,      0x06, "ibs")    /* -> agent: id, saved startup tables, go line */          \
    X(AGENT_OUT,     0x07, "iib")    /* agent ->: id, stream (1 or 2), one line (no newline) */ \
    X(AGENT_EXIT,    0x08, "ii")     /* agent ->: id, wait status */                           \
    X(AGENT_KILL,    0x09, "ii")     /* -> agent: id, signal */                                 \
    X(AGENT_QUIT,    0x0A, "")       /* -> agent: end every task, then exit */               \
    X(AGENT_CLOCK,   0x0B, "i")      /* -> agent: a request id: read your clock */            \
    X(AGENT_CLOCKED, 0x0C, "iii")    /* agent ->: the id, the clock's seconds, microseconds */ \
    X(AGENT_PROBE,   0x0D, "si")     /* -> agent: can this host connect to address, port? */  \
    X(AGENT_PROBED,  0x0E, "is")     /* agent ->: 0 or an errno, a message naming the cause */ \
    X(AGENT_KEYFP,   0x0F, "s")      /* -> agent, first: the key's fingerprint, not the key */  \
    X(AGENT_TIME,    0x10, "i")      /* -> agent: a sample id: read CLOCK_REALTIME (-trace) */  \
    X(AGENT_TIMED,   0x11, "iii")    /* agent ->: the id, that clock in ns: high, low 32 bits */ \
    X(AGENT_TRACE_GET, 0x12, "ss")   /* -> agent: the trace directory, a file there if shared */ \
    X(AGENT_TRACE_DIR, 0x15, "s")    /* -> agent: make the trace directory (before any task) */ \
    X(AGENT_TRACE_FILE, 0x13, "sib") /* agent ->: a trace file's name, offset, bytes */        \
    X(AGENT_TRACE_DONE, 0x14, "iii") /* agent ->: files sent, 1 if shared, 0 or an errno */     \
    X(AGENT_FORGET,  0x16, "s")      /* -> agent: a replaced groupd's journal: remove it */    \
    /* task -> manager (VMREQ) and the manager's answers */                               \
    X(VM_SPAWN, 0x21, "ssvviii") /* file, where, argv, env, flags, n, first tid */        \
    X(VM_ADDHOSTS, 0x22, "v")  /* hostfile lines */                                       \
    X(VM_DELHOSTS, 0x23, "v")  /* host names */                                           \
    X(VM_KILL,  0x24, "ii")    /* tid, signal */                                          \
    X(VM_HOSTSYNC, 0x25, "i")  /* a host's dtid: VM_RESULTS its clock, seconds, microseconds */ \
    X(VM_RESULTS, 0x30, "b")   /* Int4 per slot: a tid, a host's dtid, or an error */     \
    X(VM_HOSTS, 0x31, "v")     /* the host table: "dtid name arch speed slots ncpu" */

#define AGENT_X_ENUM(name, code, fields) name = code,
enum { AGENT_FRAMES(AGENT_X_ENUM) };
#undef AGENT_X_ENUM

enum {
    AGENT_VERSION = 6,              /* 2: START carries the core plan's place and count;
                                       3: CLOCK (pvm_hostsync); 4: PROBE (a host added
                                       later reaches the job's address); 5: TIME, TRACE_*
                                       (gimpirun -trace: clock offsets, the tasks' files);
                                       6: FORGET (a replaced primary's journal) */
    AGENT_PROBE_MS = 3000,          /* the longest a PROBE's connect may take */
    AGENT_MAX_FRAME = 16 << 20,     /* a frame's length field at most (16 MiB: the
                                       startup tables of 4096 tasks fit many times) */
    AGENT_MAX_FIELDS = 8,
    AGENT_TRACE_CHUNK = 1 << 20,    /* a TRACE_FILE frame's bytes at most */
    AGENT_MAX_VECTOR = 4096,        /* strings in one v field (argv, environment) */
    /* START flags */
    AGENT_START_STATIC = 1,         /* a task of the launcher's IMPI client: listen, wait
                                       for GO (else a spawned task, started at once); k of
                                       the host's n static tasks: the agent gives each a
                                       core of its own as gimpirun does here (n 0: none) */
    /* VM_SPAWN flags */
    VM_SPAWN_HOST = 1,              /* where names a host */
    VM_SPAWN_ARCH = 2,              /* where names an architecture */
    VM_SPAWN_TAG = 4,               /* tag the children's output lines with their tids */
    VM_SPAWN_NOT = 8,               /* any host but the one where names */
    VM_SPAWN_CATCH = 16,            /* the spawner catches output: the manager writes the
                                       children's lines in PVM's catchout format */
    VM_MAX_REQUEST = 65536,         /* a VMREQ payload at most (groupd's limit) */
};

/*  A decoded frame: fields in table order; strings and vectors are NUL-terminated copies. */
typedef struct {
    int type;
    int nfields;
    int32_t i[AGENT_MAX_FIELDS];
    char *s[AGENT_MAX_FIELDS];          /* s fields (NULL otherwise) */
    uint8_t *b[AGENT_MAX_FIELDS];       /* b fields */
    size_t blen[AGENT_MAX_FIELDS];
    char **v[AGENT_MAX_FIELDS];         /* v fields, NULL-terminated */
} vmw_msg_t;

/*  The field letters of a frame type, or NULL for an unknown type. */
const char *vmw_fields(int type);

/*  The type's name ("START"), or "?". */
const char *vmw_name(int type);

/*  Encodes a frame of type from a NULL-free argument list in table order: i as int32_t
 *  (passed as int), s as const char *, b as (const void *, size_t), v as char *const *
 *  (NULL-terminated).  Returns a malloc'd frame with its length in *len, or NULL. */
uint8_t *vmw_encode(size_t *len, int type, ...);

/*  The whole length of an encoded frame (its length prefix included). */
size_t vmw_frame_len(const uint8_t *frame);

/*  Decodes one whole frame (buf holds exactly its bytes, length prefix included) into
 *  msg.  0, or -1 with a reason in err. */
int vmw_decode(const uint8_t *buf, size_t len, vmw_msg_t *msg, char *err, size_t errsize);

/*  Frees what vmw_decode allocated (msg itself is the caller's). */
void vmw_msg_free(vmw_msg_t *msg);

/*  A frame reader over a byte stream: feed it bytes, take whole frames. */
typedef struct vmw_reader_t vmw_reader_t;
vmw_reader_t *vmw_reader_new(void);
void vmw_reader_destroy(vmw_reader_t **self_p);

/*  Reads what fd has (non-blocking or not).  1 read something, 0 end of stream, -1 error
 *  (errno; EAGAIN is 1 with nothing read). */
int vmw_reader_fill(vmw_reader_t *self, int fd);

/*  The next whole frame decoded into msg: 1, 0 when none is complete yet, -1 on a bad
 *  frame (reason in err; the stream cannot be trusted any more). */
int vmw_reader_next(vmw_reader_t *self, vmw_msg_t *msg, char *err, size_t errsize);

/*  Writes all of buf to a blocking fd.  0, or -1 (errno). */
int vmw_write_all(int fd, const void *buf, size_t len);

/*  PVM's architecture name of this machine ("LINUX64" on x86-64), as pvm_config shows it. */
const char *vmw_arch(void);

/*  Self-test of the codec; 0 when it passes. */
int vmw_selftest(void);

#endif
