/*
 * cmd_adapter_test.h - what the two files of `lockbench adapter-test` share
 * (cmd_adapter_test.c: the command, its servers, sessions and report;
 * cmd_adapter_props.c: the properties), nothing else includes it.
 *
 * A session is one adapter process, started and configured exactly as a
 * run's client starts its own (the strategy's create: adapter.c), on servers
 * started as a run starts them (rserver.c, consensus.c), its lines seen as
 * they pass (lb_adapter_trace) so that each property's line shows what was
 * sent, what came back and how long it took.
 */
#ifndef LB_CMD_ADAPTER_TEST_H
#define LB_CMD_ADAPTER_TEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "adapter.h"
#include "consensus.h"
#include "keywatch.h"
#include "plumbing.h"
#include "relay.h"

/* The properties, in the order they run and are printed. */
enum at_prop {
	AT_HELLO, AT_CONFIG, AT_MUTEX, AT_REPEAT, AT_EXTEND, AT_RELEASE_LAPSED, AT_RELEASE_TAKEN,
	AT_LOST, AT_CUT, AT_QUIT, AT_DEADLINES, AT_PROTOCOL, AT_N
};
enum at_verdict { AT_NOT_RUN, AT_PASS, AT_FAIL, AT_NA, AT_SKIP };

#define AT_MAX_SESS 8
#define AT_EVIDENCE 1800

struct at_sess {
	void *lock;                /* the strategy's state (adapter.c), NULL when closed */
	struct lb_node node[LB_MAX_NODES], *nodes[LB_MAX_NODES];
	struct lb_lock_cfg cfg;
	char key[96], log[320];
	int id;                    /* c0, c1, ... in the evidence */
	char asked[48];            /* the request waiting for its answer */
	int64_t asked_ns;
	int64_t lost_ns;           /* when its first lost notice came, or 0 */
	char lost_text[120];
};

/* Requests by their first word: how many, the slowest, the deadline. */
struct at_req {
	const char *word;
	int n;
	int64_t max_ms, limit_ms;
};

struct at {
	const struct lock_strategy *s;
	const struct lb_adapter_def *def;
	enum lb_consensus_kind cons;
	bool null_adapter;
	int n_nodes;
	struct lb_server *srv[LB_MAX_NODES];
	struct lb_consensus ens;
	struct lb_keywatch kw;
	bool kw_ok;
	char kw_why[200];
	/* the relay of the cut (its control words shared with it) */
	struct at_shm { struct lb_link_ctl ctl[LB_MAX_NODES]; _Atomic uint64_t epoch; } *shm;
	pid_t relay;
	char prefix[48];
	int64_t ttl_ms, lease_ms, bound_ms;
	char logdir[300];
	bool keep_logs;
	_Atomic int cancel;
	/* the adapter's hello, from the first session */
	struct lb_proto_msg hello;
	char hello_line[200];
	bool hello_ok;             /* its hello was read, strictly */
	char config_line[160];     /* its answer to config */
	bool started;              /* a session was configured once */
	/* the sessions */
	struct at_sess sess[AT_MAX_SESS];
	int n_made;
	struct at_sess *creating;
	/* the property running: its trace and the errors said meanwhile */
	char trace[AT_EVIDENCE];
	bool quiet;                /* lines not noted in the trace (still counted) */
	enum at_prop cur;          /* the property running */
	char err[1200];
	/* over the whole suite */
	struct at_req req[6];
	int lines;
	char first_err[400];
	char late_err[300];        /* the first 'no answer to ... within N ms' */
	int quits, quit_fail;
	int64_t bye_max_ms, exit_max_ms;
	char quit_bad[300];
	/* results */
	unsigned only;             /* bits of enum at_prop asked by --only; 0 all */
	enum at_verdict verdict[AT_N];
	char evidence[AT_N][600 + AT_EVIDENCE + 1200 + 16]; /* why, the trace, what was said */
	double seconds[AT_N];
};

extern const char *const at_prop_name[AT_N];

/* cmd_adapter_test.c */
/* A session, through the relay when @relayed: NULL, with why in t->err. */
struct at_sess *at_open(struct at *t, int key, bool relayed);
/* quit it, counted for the quit property, and let it go. */
void at_close(struct at *t, struct at_sess *c);
/* Ask @req of @c: the answer's kind, or -1 (a protocol error, said into t->err). */
int at_ask(struct at *t, struct at_sess *c, const char *req, struct lb_proto_msg *m);
/* Sleep @ms; false when the suite was stopped meanwhile. */
bool at_nap(struct at *t, int64_t ms);
/* What the server shows of lock key @key now: a mark to wait from. */
int64_t at_server_mark(struct at *t, int key);
/* Wait until the server granted (@grant) or ended a lease of @key since
 * @mark, by @deadline_ns: when it did (lb_now_ns), 0 not by then, -1 the
 * server's side cannot be seen here (why in t->kw_why). */
int64_t at_server_wait(struct at *t, int key, bool grant, int64_t mark, int64_t deadline_ns);
/* Append to the property's trace. */
void at_note(struct at *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cmd_adapter_props.c: run property @p into t->verdict[p] and t->evidence[p]. */
void at_run_prop(struct at *t, enum at_prop p);

#endif
