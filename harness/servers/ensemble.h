/*
 * ensemble.h - an etcd cluster or a ZooKeeper ensemble of the user's
 * (--etcd, --zookeeper): its members' addresses, what lockbench asks each of
 * them before a run (it answers, it is a member of the same cluster or
 * ensemble as member 0, it lets the run write under its prefix) and the
 * removal of the run's keys or znodes after it. Nothing else of the user's is
 * read or written: docs/running.md, "Your own deployment", lists every request.
 *
 * etcd is asked through its JSON gateway (HTTP/1.0, one request a
 * connection; an https:// member through the TLS tunnel the caller starts
 * in front of it, whose port is via_port), ZooKeeper through its own client protocol (a session of
 * lockbench's, closed after). Every step has a deadline.
 */
#ifndef LB_ENSEMBLE_H
#define LB_ENSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "consensus.h"
#include "util.h"

struct lb_member {
	char host[128];
	int port;
	struct sockaddr_storage addr; /* where lb_ensemble_check reached it (the relay's upstream) */
	socklen_t addr_len;
	bool tls;                 /* etcd: an https:// client URL */
	int via_port;             /* > 0: lockbench's own requests go to 127.0.0.1:via_port, the
				     TLS tunnel the caller started in front of it (tunnel.h) */
};

struct lb_ensemble {
	enum lb_consensus_kind kind;
	struct lb_member m[LB_MAX_NODES];
	int n;
	bool root_made;           /* ZooKeeper: /lockbench was absent; this run made it */
	bool ready;               /* lb_ensemble_check passed: the run may write there */
};

/* Parse @list (--etcd: http://HOST[:PORT],... or https://...; --zookeeper: HOST[:PORT],...)
 * into @e: 0, or LB_EINVAL with what is wrong (naming the address) in @why. */
int lb_ensemble_parse(enum lb_consensus_kind kind, const char *list, struct lb_ensemble *e,
		      char *why, size_t len);
/* Each member answers, belongs with member 0, and the run may write under
 * @prefix: 0, or LB_ENOTHERE with a message naming the member and the cause
 * (said here). ZooKeeper: makes /lockbench when it is absent (root_made). */
int lb_ensemble_check(struct lb_ensemble *e, const char *prefix);
/* Remove every key (etcd) or znode (ZooKeeper: /lockbench/<prefix, %XX>...,
 * and /lockbench when this run made it and it is empty) of the run; a
 * warning when it could not. */
void lb_ensemble_clean(struct lb_ensemble *e, const char *prefix);
/* The name kazoo_lock.py gives the run's znodes below /lockbench: @prefix
 * with every byte but letters, digits and "_.-~" as %XX (Python's quote). */
void lb_zk_quoted(const char *prefix, char *out, size_t len);
/* Member @i as a message names it: "etcd member 1 (http://db2:2379)" (https://). */
void lb_member_name(const struct lb_ensemble *e, int i, char *out, size_t len);

#endif
