/* shared_event.h - the events of a run (faults, deaths), on the history's clock. */
#ifndef LB_SHARED_EVENT_H
#define LB_SHARED_EVENT_H

#include <stdint.h>

/* A run's table of events: a fault, a death, a notice. A run that emits more
 * says how many were not recorded (events_dropped), never drops them silently. */
#define LB_MAX_EVENTS 8192

enum lb_event_kind {
	LB_EV_KILL, LB_EV_PAUSE, LB_EV_RESUME, LB_EV_SLOW, LB_EV_CRASH, LB_EV_SLEEP, LB_EV_WAKE,
	LB_EV_CLOCK, LB_EV_PARTITION, LB_EV_HEAL, LB_EV_NODE_KILL, LB_EV_NODE_START,
	LB_EV_NODE_PAUSE, LB_EV_NODE_RESUME, LB_EV_NODE_CLOCK, LB_EV_REPL_CUT, LB_EV_PROMOTE,
	LB_EV_DEATH, LB_EV_ABORT, LB_EV_NET_DELAY, LB_EV_NET_BLACKHOLE, LB_EV_NET_CUT,
	LB_EV_NET_HEAL, LB_EV_NET_FLUSH, LB_EV_NODE_START_FAILED, LB_EV_ADAPTER_DIED,
	LB_EV_SDOWN, LB_EV_ODOWN, LB_EV_SWITCH_MASTER, LB_EV_NET_SPLIT, LB_EV_NET_MEND, LB_EV_DEMOTE,
	LB_EV_PRIMARY_SEEN, LB_EV_FAILOVER_CHOSEN, LB_EV_NODE_FAILED, LB_EV_CLUSTER_DOWN,
	LB_EV_HOOK, LB_EV_HOOK_END, LB_EV_SENTINEL_FAILOVER, LB_EV_CLIENT_KILL,
	LB_EV_SERVER_DOWN, LB_EV_SERVER_BACK, LB_EV_CLUSTER_FAILOVER, LB_EV_FAILOVER_END,
	LB_EV_REFUSED, LB_EV_LOST_NOTICE,
	LB_EV_REPLY_LOST, /* net-lose-reply: the relay lost the reply to the client's
			     request to `node` (value 0: of an acquire, 1: of a release) */
	LB_EV_COUNT
};
const char *lb_event_name(int kind);

/* A fault or a death, on the same clock as the history. */
struct lb_event {
	int64_t t_ns;
	int32_t kind;
	int32_t client;  /* -1: none */
	int32_t node;    /* -1: none */
	int64_t value;   /* duration or offset in ms, when it has one */
};

#endif
