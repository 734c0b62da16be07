/*
 * scenario.h - a scenario: a load, faults at exact moments, and the outcome
 * expected of each strategy. Data only: scenarios/NAME.ini, read with libinih
 * and validated on load (docs/scenarios.md documents the format). Errors name
 * the file, the line and what was expected.
 */
#ifndef LB_SCENARIO_H
#define LB_SCENARIO_H

#define LB_SCENARIO_LINE_MAX 198 /* bytes of a line: inih splits longer ones */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "oracle.h"
#include "params.h"
#include "threshold.h"
#include "wait.h"

#define LB_MAX_FAULTS 16
#define LB_MAX_EXPECT 64


enum lb_action {
	/* in the client process, at its next section after `at`, or at a failpoint */
	LB_ACT_SLOW,        /* hold `hold` ms in the next section */
	LB_ACT_CRASH,       /* SIGKILL itself at `failpoint` */
	LB_ACT_SLEEP,       /* sleep `duration` ms at `failpoint` */
	LB_ACT_CLOCK,       /* the client's wall clock moves by `offset` ms */
	LB_ACT_PARTITION,   /* the client cannot reach `nodes` (for `duration` ms, or for good) */
	LB_ACT_LOSE_REPLY,  /* net-lose-reply: the reply to the target's next acquire or
			       release (`of`) on `nodes` is lost after the server applied it,
			       the connection reset or hung (`then`); armed by the client,
			       carried out by the relay (relay.h) */
	/* in the parent, at `at` */
	LB_ACT_KILL,        /* SIGKILL the target client */
	LB_ACT_PAUSE,       /* SIGSTOP the target client for `duration` ms */
	LB_ACT_NODE_KILL,   /* kill -9 `nodes`; back (empty) after `duration` ms if given */
	LB_ACT_NODE_RESTART,/* kill -9 and restart empty after `delay` ms (0: at once) */
	LB_ACT_NODE_PAUSE,  /* SIGSTOP `nodes` for `duration` ms */
	LB_ACT_NODE_CLOCK,  /* `nodes`' wall clock jumps by `offset` ms (LD_PRELOAD shim) */
	LB_ACT_FAILOVER,    /* hold replication back (relay), wait for a fresh holder, kill
			       the primary, promote the replica, point the clients at it */
	/* on the relay between the target client(s) and `nodes`/`resource` (relay.h) */
	LB_ACT_NET_DELAY,   /* bytes from the client arrive `delay` ms late */
	LB_ACT_NET_BLACKHOLE, /* bytes are accepted and never forwarded */
	LB_ACT_NET_CUT,     /* connections reset, new ones refused */
	/* topology = sentinel: every link between the two `sides` is held (for
	 * `duration` ms, or for good), whoever opened it */
	LB_ACT_NET_PARTITION,
	/* on any deployment (servers lockbench did not start only with --allow-faults;
	 * docs/running.md lists the commands each sends) */
	LB_ACT_SENTINEL_FAILOVER, /* SENTINEL FAILOVER through the deployment's Sentinels */
	LB_ACT_CLIENT_KILL, /* CLIENT KILL ADDR of the target client's connections to `nodes` */
	LB_ACT_HOOK,        /* run the user's command `--hook NAME=COMMAND` (`hook = NAME`) */
	LB_ACT_CLUSTER_FAILOVER, /* CLUSTER FAILOVER on a replica of the run's slot's primary */
	LB_ACT_COUNT
};
const char *lb_action_name(enum lb_action a);
bool lb_action_in_client(enum lb_action a);
/* A hook's name: 1 to 31 letters, digits and '-'. */
bool lb_hook_name_ok(const char *name);

enum lb_target { LB_TGT_ANY, LB_TGT_HOLDER, LB_TGT_CLIENT };

struct lb_fault {
	char name[48];
	int line;                 /* where its section starts */
	enum lb_action action;
	double at_s;              /* when (from the run's start); for failpoints: armed from */
	enum lb_target target;
	int client;               /* LB_TGT_CLIENT */
	uint32_t nodes;           /* bit mask of node indexes */
	char failpoint[40];
	int64_t duration_ms;      /* -1 when not given */
	int64_t delay_ms;
	int64_t hold_ms;
	int64_t offset_ms;
	int64_t strobe_ms;        /* clock, node-clock: the offset on and off every strobe_ms
				     for the duration (0: steady) */
	bool then_other_inside;   /* end the pause/slow/sleep only once another client holds */
	char sides[256];          /* net-partition: `sides` as written */
	bool then_failover_chosen; /* node-kill: come back no earlier than the Sentinels'
				      choice of the replica to promote */
	bool then_idle;           /* net-delay: hold the bytes, deliver them `delay` ms
				     after the start, when no client is inside */
	bool fallback_holder;     /* no such failpoint in the strategy: kill the holder at `at` */
	bool all_nodes;           /* nodes = all: every lock node of the run */
	bool leader;              /* nodes = leader: the member of a consensus topology
				     leading when the fault acts (etcd, ZooKeeper) */
	bool resource;            /* net faults: the link to the resource server too */
	int64_t inside_ms;        /* holder/client targets: only once inside for this long */
	int64_t within_ms;        /* ... and not longer than this (0: any time) */
	bool when_waiting;        /* kill/pause client:N only while it is not inside (queued) */
	bool when_after_read;     /* kill/pause/slow only between the target's counter read
				     and its write (the write will be stale) */
	bool when_before_write;   /* pause: the target stops itself at its next write, after
				     its last look at the lease (the write will be stale) */
	bool replies;             /* net-delay: delay the servers' replies, not the requests */
	bool of_release;          /* net-lose-reply: of = release (else acquire) */
	bool of_given;            /* ... `of` was written */
	bool then_reset, then_hang; /* net-lose-reply: what follows the lost reply */
	char hook[32];            /* hook: the name of the user's command (--hook NAME=...) */
	bool pause_write;         /* node-pause on a server lockbench did not start: CLIENT
				     PAUSE WRITE, not ALL (mode = write) */
	/* net-partition: who is on each side. Parts of the topology (bit i: part
	 * i, topology.h), clients 0..63 by bit or all of them, or `rest`:
	 * everyone the other side does not name. Named on neither side: reaches both. */
	uint32_t side_parts[2];
	uint64_t side_clients[2];
	bool side_all_clients[2];
	bool side_rest[2];
};
/* net-partition: the side party @p (topology.h: parts, then clients) is on:
 * 0, 1, or -1. */
int lb_fault_side(const struct lb_fault *f, int p);

/* [chaos]: random faults drawn from the run's seed (probabilistic scenarios). */
struct lb_chaos {
	bool on;
	int kills, pauses, restarts;
	int64_t pause_min_ms, pause_max_ms;
	double from_s, until_s;   /* the window faults are drawn in */
};

/* An [expect] line: the class, and perhaps a figure it asks of too
 * ("foreign-release, foreign-releases >= 10": the cascade, not one foreign
 * release). */
struct lb_scenario_expect {
	char strategy[200];          /* as --strategy takes it: exec:PATH too */
	enum lb_class cls;           /* the first class given */
	unsigned classes;            /* every class given (1 << class): any of them meets it
					(--expect safe,contained; a scenario's line has one) */
	bool has_figure;
	struct lb_threshold figure;  /* FIGURE OP N (threshold.h) */
	int line;
};

/* What a run measured, as an expectation looks at it: its class, and each
 * figure as summary.csv holds it (@value(@src, column): the text, or NULL). */
struct lb_observed {
	enum lb_class cls;
	const char *(*value)(const void *src, const char *column);
	const void *src;
};

struct lb_scenario {
	char name[64];
	char path[PATH_MAX];
	bool by_name;             /* loaded by its name from the scenarios directory */
	char summary[160];        /* one line for `lockbench list` */
	char description[2048];
	char only[1024];          /* comma list of strategies it applies to; empty: all */
	char except[1024];        /* comma list of strategies it leaves out (with its reason
				     in the description) */
	char lessons[512];        /* comma list of the strategies whose cells its lesson
				     page shows (reference charts): matrix runs them
				     --lesson-repeat times */
	bool probabilistic;
	bool alone;               /* a crowd that needs the machine to itself (a stampede):
				     lockbench matrix leaves it out unless it is named, and
				     runs its cells one at a time */
	/* [run]: the run parameters it gives (params.h), kept as a run keeps
	 * them; run_given: lb_param_bit() of each one given. A run takes them
	 * where its command line did not (lb_run_opts_apply_scenario).
	 * run.sentinel and run.cluster are its topology. */
	struct lb_run_cfg run;
	uint32_t run_given;
	/* [run] keys of its servers alone, not run parameters (no option sets them) */
	bool replica;             /* node 0 gets a replica (for action = failover) */
	int min_replicas;         /* min-replicas-to-write on its servers (0: Redis's, off) */
	int run_line;             /* the line of the first Sentinel setting, for errors */
	struct lb_fault faults[LB_MAX_FAULTS];
	int n_faults;
	struct lb_chaos chaos;
	struct lb_scenario_expect expect[LB_MAX_EXPECT];
	int n_expect;
	/* [expect] threshold = FIGURE OP N: of every strategy it runs, judged by
	 * `run --check` and `matrix --check` (threshold.h) */
#define LB_MAX_THRESHOLDS 16
	struct lb_threshold thresholds[LB_MAX_THRESHOLDS];
	int n_thresholds;
	char error[700];          /* after a failed load: "file:line: what was expected" */
};

/* Does the scenario's [run] give parameter @id? */
static inline bool lb_scenario_gives(const struct lb_scenario *sc, enum lb_param_id id)
{
	return sc->run_given & lb_param_bit(id);
}

/*
 * Load NAME (scenarios/NAME.ini, looked up in $LOCKBENCH_SCENARIOS, ./scenarios,
 * then beside the binary's ../scenarios) or a PATH (contains '/' or ends .ini).
 * On error prints "file:line: what was expected" and returns LB_EINVAL (or
 * LB_ESYS when the file cannot be read).
 */
int lb_scenario_load(const char *name_or_path, struct lb_scenario *sc);
/* What `--scenario` takes to load @sc again: its name when it came from the
 * scenarios directory by name, else its path. */
const char *lb_scenario_arg(const struct lb_scenario *sc);
/* Parse an already located file. */
int lb_scenario_parse_file(const char *path, struct lb_scenario *sc);
/* Parse a scenario's text (at most 1 MiB); @path names it in messages. */
int lb_scenario_parse_text(const char *text, const char *path, struct lb_scenario *sc);
/* The directory scenarios are listed from; false if none found. */
bool lb_scenario_dir(char *out, size_t len);
/* Names of the scenarios in lb_scenario_dir(), sorted; how many (at most @max). */
int lb_scenario_names(char (*names)[64], int max);
/* Expected class for @strategy, or -1 when the file has none. */
int lb_scenario_expected(const struct lb_scenario *sc, const char *strategy);
/* The [expect] line of @strategy, or NULL. */
const struct lb_scenario_expect *lb_scenario_expect_of(const struct lb_scenario *sc,
						       const char *strategy);
/* Does @o meet the scenario's [expect] section: its line for @strategy (the
 * class, and the figure it asks of; none: no condition) and every
 * `threshold =`? When not, @why says how it differs. */
bool lb_scenario_expect_met(const struct lb_scenario *sc, const char *strategy,
			    const struct lb_observed *o, char *why, size_t len);
/* The expectation of @strategy as written: "foreign-release, foreign-releases >= 10". */
void lb_scenario_expect_text(const struct lb_scenario *sc, const char *strategy, char *out,
			     size_t len);
/* An expectation as --expect gives it, "CLASS[,CLASS...][, FIGURE OP N]"
 * (any of the classes; an [expect] line's value, which has one), into @e; 0,
 * or LB_EINVAL with what was expected in @why. */
int lb_expect_parse(const char *text, struct lb_scenario_expect *e, char *why, size_t len);
/* Does @o meet @e? When not, @why says how it differs. */
bool lb_expect_met(const struct lb_scenario_expect *e, const struct lb_observed *o, char *why,
		   size_t len);
/* @e as written: "overlap" or "overlap, overlaps >= 1". */
void lb_expect_text(const struct lb_scenario_expect *e, char *out, size_t len);
/* Is @strategy one of the scenario's `lessons` (and does the scenario apply to it)? */
bool lb_scenario_is_lesson(const struct lb_scenario *sc, const char *strategy);
/* Does the scenario apply to @strategy (its `only` list; for an external
 * strategy, no fault at a C failpoint without a fallback)? */
bool lb_scenario_applies(const struct lb_scenario *sc, const char *strategy);
/* The same, the other way round: true, with the reason in @why, when it does not. */
bool lb_scenario_why_not(const struct lb_scenario *sc, const char *strategy, char *why, size_t len);
/* Does any fault act on the network or on replication (the run needs its relay)? */
bool lb_scenario_needs_relay(const struct lb_scenario *sc);
/* Add the faults of a [chaos] section, drawn from @seed, to @sc (idempotent
 * per scenario copy: call once on a copy). */
void lb_scenario_draw_chaos(struct lb_scenario *sc, uint64_t seed, int clients, int nodes);
/* Does any fault need the clock shim in the servers? */
bool lb_scenario_needs_clock_shim(const struct lb_scenario *sc);

#endif
