/*
 * relay.h - a small TCP relay lockbench puts between two parties (a client
 * and a lock node or the resource, a replica and its primary), so that
 * network faults can be aimed at one link: added delay either way,
 * black-hole, hold, cut. (`tc netem` is not available in every kernel, and
 * iptables needs root and outlives a kill -9 of the program that set it.)
 *
 * One relay process serves every link. Each link has its own listening port
 * on 127.0.0.1 and its own control word in shared memory, which the parent's
 * fault injector sets:
 *   pass       bytes flow both ways, client-to-server bytes `delay_ms` late and
 *              server-to-client bytes `reply_delay_ms` late
 *   blackhole  connections are accepted and bytes read, but nothing is
 *              forwarded in either direction: requests vanish, the client
 *              waits for its own timeout
 *   hold       bytes are read and kept, in order, but not forwarded until the
 *              link passes again: the far side lags (a replica whose link is
 *              held back loses nothing, it is only late)
 *   cut        every connection is reset, new ones are reset at once
 * and, in any mode, a lost reply (net-lose-reply): when `lose_at` is set,
 * the request that is number `lose_at` of the link's count (`requests`,
 * counted as it reaches the relay) is forwarded, and its reply dropped. With
 * `lose_hang` the connection then stays open and mute (every later byte
 * from the server dropped too) until the client gives up; without it, the
 * connection is reset as the server's reply arrives (the server applied
 * the request: Redis replies after it executes). One request: the relay
 * clears `lose_at` as it takes it, and counts it in `lost`. The requests
 * are counted in the client's RESP stream, so that a client (client.c)
 * that sends one request at a time names its next request exactly: the
 * count now, plus one.
 * Delayed bytes keep their order, and are still delivered after the client
 * has given up and closed its side: a delayed packet lands late (GitHub's
 * 90-second packet delay, Kleppmann 2016).
 *
 * The relay never blocks: sockets are non-blocking, a slow reader only fills
 * its own link's queue (bounded, then the relay stops reading from the other
 * side), and a failed accept (EMFILE) pauses accepting instead of spinning.
 */
#ifndef LB_RELAY_H
#define LB_RELAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define LB_RELAY_LINKS 10         /* per client: lock nodes 0..8, then the resource */
#define LB_RELAY_RESOURCE 9

enum lb_link_mode { LB_LINK_PASS, LB_LINK_BLACKHOLE, LB_LINK_CUT, LB_LINK_HOLD };

struct lb_link_ctl {
	_Atomic int mode;         /* enum lb_link_mode */
	_Atomic int delay_ms;     /* client-to-server delay in pass mode */
	_Atomic int reply_delay_ms; /* server-to-client delay in pass mode */
	_Atomic int port;         /* where the client connects; 0: no relay */
	_Atomic int flush_gen;    /* bumped: send every delayed byte now */
	_Atomic uint64_t requests; /* commands the relay passed on to the server, counted
				      in the client's RESP stream (lb_resp_count) */
	_Atomic uint64_t lose_at;  /* the request (of `requests`, from 1) whose reply is
				      lost; 0: none (cleared as it is taken) */
	_Atomic int lose_hang;     /* the lost reply's connection hangs (1) or is reset (0) */
	_Atomic uint64_t lost;     /* replies lost so far (net-lose-reply) */
};

/* A RESP request stream's parser state: lb_resp_count counts the commands
 * (arrays of bulk strings, or inline lines) that begin in each piece. */
struct lb_resp_parse {
	int state;
	long long num;            /* the length being read */
	long long left;           /* bytes of the bulk string (and its CRLF) to skip */
	long long elems;          /* bulk strings of the array still to come */
};

/* Feed @n bytes of a client's stream; returns the commands that began in them. */
uint64_t lb_resp_count(struct lb_resp_parse *p, const char *buf, size_t n);

/* One link: where the relay forwards what arrives on ctl->port. */
struct lb_relay_link {
	struct lb_link_ctl *ctl;    /* shared memory; the relay fills in ctl->port */
	const _Atomic int *follow;  /* the upstream port to follow as it changes
				       (a lock node after a failover), or NULL */
	int upstream;               /* the fixed upstream port when follow is NULL */
	/* a server of the user's (--etcd, --zookeeper): its address, which
	 * the relay connects to instead of 127.0.0.1:port when far_len > 0 */
	struct sockaddr_storage far;
	socklen_t far_len;
	/* A link many parties share (a server of a topology, reached at one
	 * address by every client, replica and Sentinel): a connection from
	 * party p's address (lb_party_addr) obeys party_ctl[p * party_stride]
	 * instead of ctl, for p < n_parties. NULL: ctl for everyone. */
	struct lb_link_ctl *party_ctl;
	size_t party_stride;
	int n_parties;
};

/*
 * Parties: a process whose connections the relay must tell apart binds its
 * outgoing connections to its own loopback address, 127.1.0.0 + p + 1
 * (every 127.0.0.0/8 address is local on Linux, no configuration, no root):
 * redis-server and Sentinel with `bind-source-addr`, lockbench's clients
 * through hiredis's source address. The relay reads the party back from
 * the peer address of each connection it accepts.
 */
#define LB_MAX_PARTIES 4200 /* the parts and every client (shared.h) */
/* Write party @p's address ("127.1.0.1" for 0) into @buf. */
void lb_party_addr(int p, char *buf, size_t len);
/* The party of an IPv4 address in host byte order, or -1. */
int lb_party_of(uint32_t addr);

/*
 * Listen on a loopback port for each of the @n links, and fork the relay
 * process (bound to die with the caller). @epoch, in shared memory, is
 * incremented at the start of every round of the relay's loop: once it has
 * moved by 2 after a control word changed, everything the relay forwards
 * obeys the change (lb_relay_settled). Returns the relay's pid, or a
 * negative status with a message (e.g. the descriptor limit, named).
 */
pid_t lb_relay_start(const struct lb_relay_link *links, size_t n, _Atomic uint64_t *epoch);

/* Descriptors the relay needs for @links listeners and @conns connections. */
size_t lb_relay_fds_needed(size_t links, size_t conns);

/* Has the relay begun two rounds since @since (a value of *epoch read after
 * the control words changed)? Then it forwards nothing under the old ones. */
bool lb_relay_settled(_Atomic uint64_t *epoch, uint64_t since);

#endif
