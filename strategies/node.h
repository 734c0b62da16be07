/*
 * node.h - the node layer: one connection to one Redis server, its address,
 * reconnecting after a failure, commands and reply checks. The harness and
 * the strategies both talk to Redis through it (plumbing.h builds on it).
 *
 * Reply rules kept here: a NULL reply means the connection is dead (it is
 * closed and reopened on next use, never reused); REDIS_REPLY_ERROR is told
 * apart from a legitimate nil (SET NX losing a race).
 */
#ifndef LB_NODE_H
#define LB_NODE_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>

#include "strategy.h"

#define LB_MAX_SENTINELS 5
#define LB_MAX_SEEDS 8
#define LB_MAX_ROUTES 24 /* TLS tunnels in front of a user's Sentinels and servers, or cluster */

/* A server's address: a Sentinel, a cluster seed. */
struct lb_addr {
	char host[64];
	int port;
	char user[64];            /* the Sentinel's or seed's own AUTH, if its URL had one */
	char pass[128];
};

/* One connection to one Redis server, reopened lazily after a failure. */
struct lb_node {
	char host[128];
	int port;
	char scheme[8];           /* "": a Redis server; "http" an etcd member's client URL,
				     "zk" a ZooKeeper server's (a consensus lock's nodes:
				     lockbench only gives their address to the adapter) */
	bool tls;                 /* rediss://: reached through lockbench's TLS tunnel (tunnel.h),
				     whose address host and port then hold; a library is given
				     the rediss:// URL of the server itself, tls_host:tls_port */
	char tls_host[128];       /* rediss://: the server's own host and port ("": those of */
	int tls_port;             /* host and port, no tunnel in front) */
	char user[64];            /* empty: no ACL user */
	char pass[128];           /* empty: no AUTH */
	int db;                   /* SELECTed after AUTH when > 0 */
	bool port_given;          /* the URL said its port (else 6379; a Sentinel's 26379) */
	int64_t timeout_ms;       /* connect and per-command timeout */
	redisContext *ctx;        /* owned; NULL until connected or after a failure */
	uint64_t commands;        /* commands this client sent through the node */
	uint64_t unanswered;      /* of those, sent (or perhaps sent) with no reply: each may
				     have taken effect (an indeterminate operation) */
	/* What became of the last command lb_node_cmd sent: it had a reply (an
	 * error reply too), or it was not sent (no connection: it had no
	 * effect), or it was sent and no reply came (it may have taken effect).
	 * @why: the last failure as hiredis or the server said it. */
	enum lb_node_sent { LB_SENT_REPLIED, LB_SENT_NOT, LB_SENT_NO_REPLY } last;
	char why[448];            /* room for a Sentinel's whole answer and the reason */
	const _Atomic int *blocked; /* a partition seam: while *blocked is set, every
				       command fails and the connection is dropped.
				       A pointer, so that every copy of the node (a
				       watchdog thread's) is cut off with it; borrowed */
	const _Atomic int *follow_port; /* if set and > 0: connect to this port instead
					   (a failover moved the node); borrowed */
	/* Sentinel discovery (lb_node_use_sentinels): the node is "the primary
	 * named master", asked of the Sentinels on every connect and reconnect
	 * (host and port hold the last answer), checked with ROLE; a READONLY
	 * reply (a demoted primary) drops the connection, so the next command
	 * asks again. */
	char master[64];
	int n_sentinels;
	struct lb_addr sentinel[LB_MAX_SENTINELS];
	uint64_t lookups;         /* answers the Sentinels gave */
	int sentinel_at;          /* the Sentinel asked first: the last that led to the primary */
	char run_id[41];          /* the primary they led to (INFO server), "" unknown */
	bool want_run_id;         /* ask it (INFO server) at each connect: the user's servers */
	bool probe;               /* a server of the user's: each new connection first proves
				     it gets a whole reply to PING in time (node.c) */
	char source[20];          /* connect from this local address ("": any); a party
				     of the relay (relay.h) */
	/* Cluster (lb_node_use_cluster): the node is "the primary serving
	 * slot", asked of the seeds (CLUSTER SLOTS) on every connect and
	 * reconnect. A MOVED reply moves the node to the address it names and
	 * the command is sent there again; an ASK reply sends it once to the
	 * named node after ASKING; CLUSTERDOWN or TRYAGAIN drops the
	 * connection, so the next command asks again. hiredis follows neither. */
	int n_seeds;              /* 0: not in a cluster */
	int slot;
	struct lb_addr seed[LB_MAX_SEEDS];
	int seed_at;              /* the seed asked first: the last that answered */
	bool redirected;          /* host:port came from a MOVED: connect there first */
	uint64_t redirects;       /* MOVED and ASK replies followed */
};

/* Parse "redis://[[user]:password@]host[:port][/db]" (or without "redis://"; an
 * IPv6 host in brackets; user and password %XX-decoded; the port 6379 when
 * not given) into @n: 0, or LB_EINVAL with what is wrong in @why (@wlen
 * bytes; NULL for none). rediss:// sets ->tls; other schemes are refused, saying why. */
int lb_node_parse_url(const char *url, struct lb_node *n, char *why, size_t wlen);
/* Does the server at @host:@port give a whole reply to a PING within @n's
 * timeout, on a connection of its own? (A server that trickles bytes would
 * hold a blocking connection for ever: hiredis's timeout restarts with each
 * byte.) Why not in @why. */
bool lb_node_probe(const struct lb_node *n, const char *host, int port, char *why, size_t len);
/* @list (URLs separated by commas) with every password replaced by "***",
 * into @out: what a message or a file may show of it. */
void lb_url_list_masked(const char *list, char *out, size_t len);
/* @n's address as a URL lb_node_parse_url reads back: its user and password
 * %XX-encoded (so the URL has no space), its database when not 0. */
void lb_node_url(const struct lb_node *n, char *buf, size_t len);
/* Make @n find its server through Sentinels: @urls "host:port[,host:port...]"
 * (redis:// optional), @master the name they monitor. 0 or LB_EINVAL. */
int lb_node_use_sentinels(struct lb_node *n, const char *urls, const char *master);
/* The same, saying in @why (@len bytes) which address is wrong and how. */
int lb_node_use_sentinels_why(struct lb_node *n, const char *urls, const char *master,
			      char *why, size_t len);
/* Send "SENTINEL @cmd MASTER" (MASTER: @n's master name; @cmd "FAILOVER",
 * say) to @n's Sentinel @i, with its AUTH, on a connection of its own: the
 * reply, or NULL with why in @why. */
redisReply *lb_node_sentinel_cmd(const struct lb_node *n, int i, const char *cmd, char *why,
				 size_t len);
/* Make @n the primary that serves @slot in the cluster the seeds @urls
 * ("host:port[,host:port...]", redis:// optional) belong to. 0 or LB_EINVAL. */
int lb_node_use_cluster(struct lb_node *n, const char *urls, int slot);
/* The cluster hash slot of a key (its {hash tag} if it has one): CRC16
 * (XMODEM) mod 16384, as the Redis Cluster specification defines it. */
int lb_key_slot(const char *key, size_t len);
/* What a reply says about where the node is (MOVED, READONLY, CLUSTERDOWN),
 * for replies read without lb_node_cmd (lb_fanout). */
void lb_node_note_reply(struct lb_node *n, const redisReply *r);
/* rediss:// on a Sentinel deployment or a cluster (hiredis 0.14 has no
 * TLS): connections to @host:@port go to 127.0.0.1:@via instead, the TLS
 * tunnel lockbench started in front of it, for a node whose ->tls is set.
 * 0, or LB_EINVAL when the table (LB_MAX_ROUTES) is full. Once any route is
 * set, such a node never connects to an address without one (it fails,
 * saying why: no plain text there). */
int lb_node_route_add(const char *host, int port, int via);
/* The tunnel's port for @host:@port: > 0; 0 when no route is set at all;
 * -1 when routes are set but none for it. */
int lb_node_route(const char *host, int port);
/* Initialise for 127.0.0.1:@port. */
void lb_node_init_local(struct lb_node *n, int port, int64_t timeout_ms);
/* Connect if needed; 0 or LB_EREDIS. */
int lb_node_connect(struct lb_node *n);
/* Close the connection (after a failure or before fork). Accepts NULL. */
void lb_node_close(struct lb_node *n);
/* redisCommand with reconnect-on-next-use semantics; NULL when the node
 * failed: n->last says whether the command was sent at all, n->why why. */
redisReply *lb_node_cmd(struct lb_node *n, const char *fmt, ...);
redisReply *lb_node_cmd_argv(struct lb_node *n, int argc, const char **argv, const size_t *argvlen);
/* The per-command timeout of an open connection (a long BLPOP stretches it). */
void lb_node_set_timeout(struct lb_node *n, int64_t ms);

/* Reply predicates. */
bool lb_reply_ok(const redisReply *r);          /* +OK */
bool lb_reply_nil(const redisReply *r);
bool lb_reply_error(const redisReply *r);       /* NULL or -ERR */
bool lb_reply_int(const redisReply *r, long long *out);
bool lb_reply_str_eq(const redisReply *r, const char *s);

#endif
