/*  gd_notify.h — groupd's events for PVM's pvm_notify: a task's end on topic "T" + its tid,
 *  the hosts that a new host table adds or removes on topic "H", and the MARK that answers
 *  a subscription to such a topic (so that the subscriber knows from when on nothing can
 *  be missed).  The layouts are gd_proto.h's event rows; doc/groupd-protocol.md describes
 *  them.  gd_serve.c calls these where a task leaves the registry and where HOSTS_SET
 *  replaces the table.  The set of subscribed topics is kept here too: every event is
 *  checked against it (gd_notify_watched) before it is built.
 */
#ifndef GIMPI_GD_NOTIFY_H
#define GIMPI_GD_NOTIFY_H

#include "groupd/gd_serve.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*  Publishes EV_TASK_EXIT on the topic of task tid. */
void gd_notify_task_gone(groupd_t *self, int32_t tid);

/*  Publishes EV_HOST_DEL for every host of the old table (a VM_HOSTS frame, old_len bytes;
 *  NULL: none) missing from the new one, then EV_HOST_ADD for every host of the new table
 *  missing from the old one.  A table that cannot be read counts as empty. */
void gd_notify_hosts(groupd_t *self, const uint8_t *old, size_t old_len, const uint8_t *neu,
                     size_t new_len);

/*  A subscription (topic, len bytes, without the XPUB's leading 1) reached the XPUB: when
 *  it is a notify topic ("T" + tid, "H") its MARK goes out now and true is returned. */
bool gd_notify_subscribed(groupd_t *self, const uint8_t *topic, size_t len);

/*  Notes a message of the XPUB (msg[0] 1: subscribe, 0: unsubscribe, then the topic).
 *  The XPUB is verbose for subscriptions only, so an unsubscription reaches groupd when
 *  the topic's last subscriber has gone: the set of topics noted is the XPUB's own. */
void gd_notify_note_sub(groupd_t *self, const uint8_t *msg, size_t len);

/*  True when a subscription noted matches topic (len bytes; a subscription matches every
 *  topic it is a prefix of), i.e. when publishing on it can reach anyone. */
bool gd_notify_watched(groupd_t *self, const uint8_t *topic, size_t len);

/*  Makes and frees the set of subscribed topics; 0 or -1. */
int gd_notify_init(groupd_t *self);
void gd_notify_fini(groupd_t *self);

#endif
