/*  gimpi_hostset.h — the host set of a job or a virtual machine: which machines, with how
 *  many slots and which options, read from the places a user states them.
 *
 *  Hosts come from a -H list ("a,b:2,c"), from a hostfile in PVM 3.4's syntax (one host per
 *  line, '#' comments, "*" lines setting defaults, "&" for hosts known but started only by
 *  pvm_addhosts, options lo= wd= ep= dx= sp= ip= so= bx= id= and our slots= and arch=),
 *  from one hostfile line at a time (pvm_addhosts), or from a Slurm allocation
 *  (SLURM_JOB_NODELIST in Slurm's hostlist syntax, slots from SLURM_TASKS_PER_NODE).  A
 *  host named twice is one host whose slots add up, as with Open MPI's -H a,a.  Tasks are
 *  placed over the hosts in slot order (gimpi_hostset_place).  Two helpers about this
 *  machine sit here too: the local address of an interface or network (-if NAME|CIDR) and
 *  whether a host name means this machine.  Nothing here connects anywhere; the launchers
 *  use the set.  Every input is checked: an error is a message naming the place
 *  (FILE:LINE, the variable, the list entry) and the bad token, and leaves the set as it
 *  was before the call.  doc/multihost.md describes the syntax for users.
 */
#ifndef GIMPI_HOSTSET_H
#define GIMPI_HOSTSET_H

#include <stdbool.h>
#include <stddef.h>

enum {
    GIMPI_HOSTSET_MAX_HOSTS = 4096,     /* hosts in one set: also bounds a Slurm expansion */
    GIMPI_HOSTSET_MAX_SLOTS = 4096,     /* slots of one host (after merging duplicates) */
    GIMPI_HOSTSET_MAX_LINE = 4096,      /* characters of one hostfile line */
    GIMPI_HOSTSET_MAX_SPEED = 1000000,  /* sp= range is 1..this, as in PVM */
    GIMPI_HOSTSET_DEF_SPEED = 1000,     /* sp= when not given, as in PVM */
    GIMPI_HOSTSET_RESOLVE_MS = 2000,    /* longest wait of gimpi_hostset_is_local for a name */
    GIMPI_HOSTSET_ERRLEN = 512,         /* room for any message written here */
};

/*  One host.  Strings are "" when not given: the launcher then uses its default. */
typedef struct {
    char name[256];     /* host name or address as written: the host's identity */
    char ip[64];        /* ip= the name or address to reach it by ("" = name) */
    char login[64];     /* lo= user name there ("" = the same user) */
    char wd[1024];      /* wd= working directory of its tasks ("" = $HOME) */
    char ep[1024];      /* ep= colon-separated search path for programs ("" = default) */
    char so[256];       /* so= as written; PVM's values (pw, ms) are refused, so "" */
    char dx[1024];      /* dx= path of the agent program there ("" = default) */
    char arch[32];      /* arch= architecture name ("" = the host reports it) */
    int slots;          /* slots=N, host:N, Slurm's tasks per node; default 1 */
    int speed;          /* sp= PVM's relative speed, default 1000 */
    bool later;         /* '&': known, not started until pvm_addhosts names it */
} gimpi_hostinfo_t;

typedef struct gimpi_hostset_t gimpi_hostset_t;

/*  An empty set with PVM's built-in defaults (1 slot, speed 1000). */
gimpi_hostset_t *gimpi_hostset_new(void);

/*  Frees the set and nulls *self_p. */
void gimpi_hostset_destroy(gimpi_hostset_t **self_p);

/*  Number of hosts, 'later' ones included. */
int gimpi_hostset_size(gimpi_hostset_t *self);

/*  Host i (0 <= i < size), or NULL. */
const gimpi_hostinfo_t *gimpi_hostset_get(gimpi_hostset_t *self, int i);

/*  Sum of the slots of the hosts that are not 'later'. */
int gimpi_hostset_total_slots(gimpi_hostset_t *self);

/*  A -H list: comma-separated host[:slots] entries ("a,b:2,[fe80::1]:3"); an entry with no
 *  slots has the current default (1 unless a "*" line said slots=).  Returns the number of
 *  entries, or -1 with a message in err naming the entry. */
int gimpi_hostset_add_list(gimpi_hostset_t *self, const char *list, char *err, size_t errsize);

/*  A hostfile (doc/multihost.md "Host sets").  Returns the number of host lines, or -1 with
 *  a message "PATH:LINE: ..." in err; on error no line of the file is kept. */
int gimpi_hostset_add_file(gimpi_hostset_t *self, const char *path, char *err, size_t errsize);

/*  One hostfile line: "host opts", "&host opts", "* opts" (the defaults of every host added
 *  afterwards, here or by the other calls), a comment or a blank.  A non-'&' line naming a
 *  'later' host starts it: its stored options stay unless the line gives others.  Returns
 *  1 when the line named a host, 0 for a "*" line, a comment or a blank, -1 with a message. */
int gimpi_hostset_add_line(gimpi_hostset_t *self, const char *line, char *err, size_t errsize);

/*  Looks a variable up, as getenv does (arg is the caller's). */
typedef const char *(gimpi_hostset_getenv_fn)(const char *name, void *arg);

/*  The Slurm allocation, when SLURM_JOB_NODELIST (else SLURM_NODELIST) is set: its hosts in
 *  Slurm's hostlist syntax ("node[01-03,7],gpu5,rack[1-2]-n[3-4]", zero padding kept),
 *  slots from SLURM_TASKS_PER_NODE, else SLURM_JOB_CPUS_PER_NODE ("2(x3),1"), else 1.
 *  Variables are read through get (NULL: getenv).  Returns the number of hosts of the
 *  allocation, 0 when not in one, -1 with a message naming the variable. */
int gimpi_hostset_add_slurm(gimpi_hostset_t *self, gimpi_hostset_getenv_fn *get, void *arg,
                            char *err, size_t errsize);

/*  Index of the host with this name (case does not matter), or -1. */
int gimpi_hostset_find(gimpi_hostset_t *self, const char *name);

/*  Removes host i; the hosts after it move down by one.  0, or -1 when i is out of range. */
int gimpi_hostset_remove(gimpi_hostset_t *self, int i);

/*  Places n tasks in slot order, as Open MPI's --map-by slot: host 0's slots, then host
 *  1's, ..., around again when every slot is used (oversubscribing).  Task k goes where
 *  the (start + k)-th task would, so that successive calls continue the rotation; 'later'
 *  hosts are skipped.  out[k] = host index.  Returns n, or -1 when no host has slots or
 *  n or start is negative. */
int gimpi_hostset_place(gimpi_hostset_t *self, int n, int start, int *out);

/*  -if SPEC: the local IPv4 address (dotted text into addr) of the interface named SPEC, or
 *  the first local one inside SPEC when it is a network "a.b.c.d/len", or SPEC itself when
 *  it is an address of this machine.  Interfaces that are down do not count.  0, or -1
 *  with a message. */
int gimpi_hostset_if_addr(const char *spec, char *addr, size_t size, char *err, size_t errsize);

/*  The local IPv4 address (dotted text into addr) from which this machine reaches the IPv4
 *  address dest (a UDP connect: nothing is sent).  0, or -1 when dest is not an address
 *  or no route leads there. */
int gimpi_hostset_route_addr(const char *dest, char *addr, size_t size);

/*  The IPv4 address (dotted text into addr) that other hosts most likely reach this machine
 *  at when none of them is known yet: that of the default route's interface, else of the
 *  first interface that is up and not a loopback one.  0, or -1 when the machine has no
 *  such interface (only the loopback). */
int gimpi_hostset_lan_addr(char *addr, size_t size);

/*  True when name means this machine: "localhost", the host name (or its first label), a
 *  loopback address, an address of a local interface, or a name that resolves to one of
 *  these within GIMPI_HOSTSET_RESOLVE_MS (a name that takes longer counts as remote). */
bool gimpi_hostset_is_local(const char *name);
#endif
