/*
 * consensus.h - the consensus systems people are told to lock with instead of
 * Redis, as three-member ensembles lockbench starts, waits for and always
 * stops: etcd 3.4 (three members) and ZooKeeper 3.8 (three servers).
 *
 * Each member is an lb_server (rserver.h) running another program: its own
 * free loopback ports, its own directory (an etcd member's data directory on
 * tmpfs, a ZooKeeper server's zoo.cfg, myid and data), its output in its log,
 * PR_SET_PDEATHSIG and the janitor as for redis-server. The directory
 * survives lb_server_kill, so a member respawned with lb_server_respawn_begin
 * comes back with its data and rejoins. Nothing here ever talks to a system
 * instance (ports 2379, 2380, 2181): every port is chosen free at start.
 * docs/topologies.md says how each is configured and why.
 */
#ifndef LB_CONSENSUS_H
#define LB_CONSENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rserver.h"

enum lb_consensus_kind { LB_CONSENSUS_NONE = 0, LB_CONSENSUS_ETCD, LB_CONSENSUS_ZOOKEEPER };

#define LB_CONSENSUS_MEMBERS 3

struct lb_consensus {
	enum lb_consensus_kind kind;
	/* ->port: the member's client port (etcd's client URL, ZooKeeper's
	 * clientPort); lb_server_kill/stop/pause/resume/respawn_begin/
	 * poll_ready/alive/copy_log work on each. Owned. */
	struct lb_server *member[LB_CONSENSUS_MEMBERS];
	/* etcd: the peer port; ZooKeeper: the quorum (follower) port */
	int peer_port[LB_CONSENSUS_MEMBERS];
	/* ZooKeeper: the leader election port; etcd: 0 */
	int election_port[LB_CONSENSUS_MEMBERS];
	/* etcd: each member's id as its /v3/maintenance/status says (decimal),
	 * read at start; ZooKeeper: its myid (1, 2, 3) */
	char member_id[LB_CONSENSUS_MEMBERS][24];
	/* measured: first exec until the quorum was there (etcd: a put served
	 * through each member; ZooKeeper: srvr says leader or follower on all
	 * three) */
	int64_t ready_ms;
};

/* Start an ensemble of @kind and wait (at most @ready_timeout_ms) until every
 * member answers and a write is served. 0, or a negative status with a
 * message naming the member and its log; nothing is left on failure. */
int lb_consensus_start(struct lb_consensus *c, enum lb_consensus_kind kind, int64_t ready_timeout_ms);
/* Stop every member and remove its directory. Accepts a zeroed one; @c is
 * zeroed after. */
void lb_consensus_destroy(struct lb_consensus *c);
/* The index of the member leading now (as the members themselves say), or a
 * negative status when none is known within @timeout_ms. */
int lb_consensus_leader(const struct lb_consensus *c, int timeout_ms);
/* Wait until a write is served again (etcd: a put through a live member;
 * ZooKeeper: live members say leader and follower, one leader, a majority in
 * all; a leader whose followers stopped answering, paused or cut off, gives
 * up only after syncLimit x tickTime, 2 s): 0 or LB_ETIMEOUT. Paused members are not asked. */
int lb_consensus_wait_quorum(const struct lb_consensus *c, int timeout_ms);
/* "etcd", "zookeeper" ("none" for LB_CONSENSUS_NONE). */
const char *lb_consensus_name(enum lb_consensus_kind k);
/* The lease a lock of @k gets when it asks for @asked_ms, as the ensembles
 * lockbench starts grant it: etcd in whole seconds, at least 2 s (its default
 * election timeout); ZooKeeper's session clamped to [min, max]SessionTimeout. */
int64_t lb_consensus_lease_ms(enum lb_consensus_kind k, int64_t asked_ms);
/* Its name in a sentence: "etcd", "ZooKeeper". */
const char *lb_consensus_shown(enum lb_consensus_kind k);
/* The reverse: 0, or LB_EINVAL with a message naming what was expected. */
int lb_consensus_parse(const char *name, enum lb_consensus_kind *k);

/* One HTTP/1.0 request to 127.0.0.1:@port (a POST with @json_body, a GET
 * when it is NULL) within @timeout_ms; the response body, NUL-terminated,
 * into @out (truncated to @cap - 1). The HTTP status, or a negative status. */
int lb_consensus_http(int port, const char *path, const char *json_body, char *out, size_t cap,
		      int timeout_ms);
/* A ZooKeeper four-letter word (ruok, srvr, ...) to 127.0.0.1:@port within
 * @timeout_ms; the answer into @out. 0 or a negative status. */
int lb_consensus_4lw(int port, const char *word, char *out, size_t cap, int timeout_ms);
/* The value of the first "@name": "STRING" or "@name": NUMBER in @json, into
 * @out; false when absent or too long. Pure. */
bool lb_json_field(const char *json, const char *name, char *out, size_t cap);
/* Base64 of @n bytes of @in into @out (NUL-terminated): the JSON gateway's
 * bytes fields. false when @cap is too small. Pure. */
bool lb_base64(const void *in, size_t n, char *out, size_t cap);

#endif
