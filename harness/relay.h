/*
 * relay.h - a small TCP relay lockbench puts between each client and a server
 * (a lock node or the resource), so that network faults can be aimed at one
 * client's link: added delay, black-hole, cut. (`tc netem` is not available
 * in every kernel, and would hit every client on loopback at once.)
 *
 * One relay process serves every link. Each (client, link) pair has its own
 * listening port on 127.0.0.1 and its own control word in the shared region,
 * which the parent's fault injector sets:
 *   pass       bytes flow both ways (after `delay_ms` from the client side)
 *   blackhole  connections are accepted and bytes read, but nothing is
 *              forwarded in either direction: requests vanish, the client
 *              waits for its own timeout
 *   cut        every connection is reset, new ones are reset at once
 * Delayed bytes keep their order, and are still delivered after the client
 * has given up and closed its side: a delayed packet lands late (GitHub's
 * 90-second packet delay, Kleppmann 2016).
 */
#ifndef LB_RELAY_H
#define LB_RELAY_H

#include <stdatomic.h>
#include <sys/types.h>

#define LB_RELAY_LINKS 10         /* lock nodes 0..8, then the resource */
#define LB_RELAY_RESOURCE 9

enum lb_link_mode { LB_LINK_PASS, LB_LINK_BLACKHOLE, LB_LINK_CUT };

struct lb_link_ctl {
	_Atomic int mode;         /* enum lb_link_mode */
	_Atomic int delay_ms;     /* client-to-server delay in pass mode */
	_Atomic int port;         /* where the client connects; 0: no relay */
	_Atomic int flush_gen;    /* bumped: send every delayed byte now */
};

struct lb_shared;

/*
 * Listen for @clients clients on the links to @n_lock lock nodes (upstream:
 * the shared region's node_port[i], followed as it changes) and to the
 * resource on @resource_port; fill in each link's port and fork the relay
 * process (bound to die with the caller). Its pid, or a negative status.
 */
pid_t lb_relay_start(struct lb_shared *sh, int clients, int n_lock, int resource_port);

#endif
