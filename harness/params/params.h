/*
 * params.h - the configuration of a run (struct lb_run_cfg) and one table of
 * its parameters. Each run parameter is one row (params.c): its name on each
 * surface that may set it (the command line, a scenario's [run], sweep
 * --vary) and in summary.csv, its type, unit, bounds, default, metavar and
 * help, and where struct lb_run_cfg keeps it. Every consumer reads the row:
 * the option parser, its errors and --help (options.c), the [run] reader
 * (scenario.c), the merge of the two (the command line wins), sweep --vary,
 * and summary.csv's setting columns (results.c, and their rows in figures.c).
 * Redis drives its configuration the same way (src/config.c, standardConfig).
 *
 * Adding a run parameter: its field in struct lb_run_cfg below, its id in
 * enum lb_param_id and its row in params.c, its line in the table of
 * docs/running.md (test_params checks that it is there), then the code that
 * uses the value. Nothing else: the option, the [run] key, --vary, --help
 * and the summary column come from the row.
 *
 * Not in the table (options.c and scenario.c keep them, each in one place):
 * what to run and where (--strategy, --strategies, --scenario, --redis,
 * --sentinel, --sentinel-master, --adapter-arg: names and addresses, not
 * values of the load; an adapter argument repeats), what to write (--out,
 * --no-status, --no-report, --chart-scale, --allow-skipped), sweep's --vary
 * itself, and the [run] keys that only describe a scenario's servers
 * (`replica`, `min_replicas`: no command line sets them, run.c reads them
 * from the scenario).
 */
#ifndef LB_PARAMS_H
#define LB_PARAMS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wait.h"

struct lock_strategy;
struct lb_scenario;
struct lb_hosts; /* run.h */

enum lb_work { LB_WORK_COUNTER, LB_WORK_NONE };

#define LB_MAX_HOOKS 8
#define LB_MAX_ADAPTER_HOSTS 64 /* --adapter-hosts */

struct lb_run_cfg {
	const struct lock_strategy *strategy;
	const struct lb_scenario *scenario; /* NULL: no faults; borrowed */
	char scenario_name[64];    /* "none" without a scenario */
	int clients;
	double duration_s;
	double drain_s;            /* after the run's end, waiters keep trying this long
				      (0: none; --drain) */
	int64_t ttl_ms;
	int64_t hold_min_ms, hold_max_ms;
	int64_t think_ms;
	int keys;
	struct lb_wait wait;
	int64_t acquire_timeout_ms;
	int calls;                 /* acquire calls per client, entered or not, before it
				      stops; 0: no limit (a stampede: 1) */
	enum lb_work work;
	uint64_t seed;
	int nodes;                 /* lock nodes; 0: the strategy's min_nodes */
	bool no_validity_check;    /* redlock's naive variant (--no-validity-check) */
	int max_renewals;          /* renewal's bound on extensions; 0: none */
	bool delayed_restarts;     /* a restarted node stays down one more TTL */
	bool count_commands;       /* every lock link through the relay, which counts each
				      client's commands by phase (--count-commands) */
	int adapter_hosts;         /* > 0: a library's clients share this many adapter
				      host processes (run_hosts.c); 0: one adapter each */
	bool sentinel;             /* lock node 0 is a primary with 2 replicas behind 3
				      Sentinels, found through them (topology.h) */
	bool cluster;              /* lock node 0 is the primary of the run's slot in a
				      cluster of 3 primaries and 3 replicas (cluster.h) */
	int consensus;             /* --topology etcd (1) or zookeeper (2) as given: a
				      consensus lock's (lb_consensus_of its strategy) */
	int64_t down_after_ms;     /* > 0: the Sentinels' down-after-milliseconds (else 1000) */
	int min_replicas_max_lag;  /* > 0: min-replicas-max-lag, seconds (else Redis's 10) */
	const char *redis_urls;    /* NULL: embedded servers; borrowed */
	const char *sentinel_urls; /* a user's Sentinels (--sentinel), or NULL; borrowed */
	const char *cluster_urls;  /* a user's Redis Cluster, its seeds (--cluster), or NULL */
	const char *etcd_urls;     /* a user's etcd cluster, its members' client URLs (--etcd) */
	const char *zk_urls;       /* a user's ZooKeeper ensemble, HOST:PORT each (--zookeeper) */
	const char *tls_ca;        /* rediss://: --tls-ca FILE, --tls-cert FILE, --tls-key FILE */
	const char *tls_cert;
	const char *tls_key;
	bool tls_insecure;         /* --tls-insecure: the server's certificate is not checked */
	char sentinel_master[64];  /* the name they monitor (--sentinel-master) */
	char master_user[64];      /* the primary's AUTH behind them (--master-auth), or "" */
	char master_pass[128];
	bool allow_faults;         /* faults may act on servers lockbench did not start */
	bool resource_theirs;      /* --resource-on-deployment: the counter on the user's
				      server, each acknowledged write counted by its client */
	struct lb_hook_cmd {       /* --hook NAME=COMMAND: a fault's action, run as words */
		char name[32];     /* a hook fault's `hook`, or node-kill, node-start,
				      node-pause, node-resume (optionally :N, one node) */
		char command[512];
	} hooks[LB_MAX_HOOKS];
	int n_hooks;
	bool own_urls;             /* redis_urls are servers this lockbench started (bench) */
	char out_dir[PATH_MAX];
	bool status_line;          /* refresh a status line every second */
	bool no_report;            /* skip charts and report.md at the end */
	bool allow_skipped;        /* a run that could not happen here exits 0, not 3 */
	char adapter_args[160];    /* --adapter-arg values, space-separated, for the record */
	char cmdline[1024];
	struct lb_hosts *hosts;    /* --hosts FILE: the clients run on those hosts, each
				      by its agent over ssh (run_remote.c); NULL: here */
	const char *ssh_config;    /* --ssh-config FILE: ssh -F FILE, or NULL */
	const char *agent_path;    /* --agent-path PATH: the agent on the hosts; NULL: this
				      binary's own absolute path */
	char bind_addr[64];        /* --bind ADDR: the servers lockbench starts listen on it
				      too (beside 127.0.0.1), for the hosts; "" none */
};

/* The consensus system strategy @s's lock lives on: 1 etcd, 2 zookeeper (enum
 * lb_consensus_kind, consensus.h), 0 a Redis lock (or NULL). */
int lb_consensus_of(const struct lock_strategy *s);

/* Defaults of `lockbench run`: every row's default, no scenario, a status line. */
void lb_run_cfg_defaults(struct lb_run_cfg *cfg);

/* The rows, in the order --help shows them. */
enum lb_param_id {
	LB_P_CLIENTS,
	LB_P_DURATION,
	LB_P_TTL,
	LB_P_HOLD,
	LB_P_THINK,
	LB_P_KEYS,
	LB_P_WAIT,
	LB_P_ACQUIRE_TIMEOUT,
	LB_P_WORK,
	LB_P_SEED,
	LB_P_NODES,
	LB_P_NO_VALIDITY_CHECK,
	LB_P_MAX_RENEWALS,
	LB_P_DELAYED_RESTARTS,
	LB_P_TOPOLOGY,
	LB_P_MAX_LAG,
	LB_P_DOWN_AFTER,
	LB_P_COUNT_COMMANDS,
	LB_P_CALLS,
	LB_P_DRAIN,
	LB_P_ADAPTER_HOSTS,
	LB_P_COUNT
};

/* A set of rows (given on the command line, in a scenario's [run]): bit @id. */
static inline uint32_t lb_param_bit(enum lb_param_id id)
{
	return UINT32_C(1) << id;
}

enum lb_param_type {
	LB_PT_INT,      /* an integer, kept as int */
	LB_PT_MS,       /* integer milliseconds, kept as int64_t */
	LB_PT_U64,      /* a non-negative integer, kept as uint64_t */
	LB_PT_SECONDS,  /* seconds, fractions allowed, more than min: a double */
	LB_PT_MS_RANGE, /* MS or MIN-MAX milliseconds, drawn per use (hold) */
	LB_PT_WAIT,     /* a wait policy (wait.h): struct lb_wait */
	LB_PT_WORDS,    /* one of @words: the index, kept by the row's set/get */
	LB_PT_FLAG,     /* on or off: bool; the command line only turns it on */
};

/* A value of a row, whatever its type: the member its type names. */
struct lb_param_value {
	int64_t i;               /* INT, MS; WORDS: the word's index; FLAG: 0 or 1 */
	uint64_t u;              /* U64 */
	double s;                /* SECONDS */
	int64_t lo, hi;          /* MS_RANGE */
	struct lb_wait wait;     /* WAIT */
};

struct lb_param {
	const char *name;        /* canonical, as the docs name it: "acquire-timeout" */
	const char *cli;         /* --CLI on the command line, or NULL */
	const char *run_key;     /* KEY = in a scenario's [run], or NULL */
	bool run_negated;        /* [run] says the opposite: validity_check = no is
				    --no-validity-check (flags only) */
	const char *vary;        /* sweep --vary NAME=..., or NULL (integer types only) */
	const char *column;      /* its summary.csv column, or NULL */
	bool variant;            /* no column of its own: named in the `variant` column
				    when not at its default */
	enum lb_param_type type;
	const char *unit;        /* what a value counts: "ms", "clients" */
	int64_t min, max;        /* bounds of a given value (SECONDS: min < v <= max) */
	const char *const *words; /* LB_PT_WORDS: the values, NULL-terminated */
	struct lb_param_value dflt; /* the default; outside the bounds it means "not set"
				       (nodes 0: the strategy's), as its help says */
	const char *metavar;     /* --help's name for the value ("MS|MIN-MAX"); NULL for
				    flags; words: "a|b|c" */
	const char *help;        /* --help's text, lines split by \n; "{default}" stands
				    for the default */
	/* Where struct lb_run_cfg keeps it: at @offset, as its type says, or
	 * through @set and @get (several fields, an enum). */
	size_t offset;
	void (*set)(struct lb_run_cfg *cfg, const struct lb_param_value *v);
	void (*get)(const struct lb_run_cfg *cfg, struct lb_param_value *v);
	/* The summary column's value when it is not the parameter's (nodes 0 is
	 * written as the strategy's count), or NULL. */
	void (*column_value)(const struct lb_run_cfg *cfg, struct lb_param_value *v);
};

/* Row @id; every row, in table order (*@n of them, LB_P_COUNT); the id of a row. */
const struct lb_param *lb_param_row(enum lb_param_id id);
const struct lb_param *lb_params(size_t *n);
enum lb_param_id lb_param_index(const struct lb_param *p);
/* The row with that name on that surface, or NULL. */
const struct lb_param *lb_param_by_cli(const char *opt);
const struct lb_param *lb_param_by_run_key(const char *key);
const struct lb_param *lb_param_by_vary(const char *name);
const struct lb_param *lb_param_by_column(const char *column);

/*
 * A value as the command line gives it (@text NULL for a flag: on) or as a
 * scenario's [run] does (a flag is yes or no, negated for run_negated rows).
 * 0, or LB_EINVAL with what was expected in @why ("expected an integer from
 * 1 to 1024"): the caller names the option or the key, and the value.
 */
int lb_param_from_cli(const struct lb_param *p, const char *text, struct lb_param_value *v,
		      char *why, size_t len);
int lb_param_from_run(const struct lb_param *p, const char *text, struct lb_param_value *v,
		      char *why, size_t len);
/* sweep --vary's integer @x as a value of @p: 0, or LB_EINVAL when @p takes no
 * integer or @x is outside its bounds. */
int lb_param_from_int(const struct lb_param *p, int64_t x, struct lb_param_value *v);
/* What a good value looks like, for messages and docs. */
void lb_param_expected(const struct lb_param *p, char *buf, size_t len);

/* Store @v in @cfg; read it back. */
void lb_param_set(const struct lb_param *p, struct lb_run_cfg *cfg, const struct lb_param_value *v);
void lb_param_get(const struct lb_param *p, const struct lb_run_cfg *cfg, struct lb_param_value *v);
/* Copy @p from @from to @to (a scenario's [run] into a run). */
void lb_param_copy(const struct lb_param *p, struct lb_run_cfg *to, const struct lb_run_cfg *from);
/* Are the two values of @p the same? */
bool lb_param_equal(const struct lb_param *p, const struct lb_param_value *a,
		    const struct lb_param_value *b);
/* @v as text, the way the summary writes it and the command line takes it:
 * "8", "0.5", "5-20", "fixed:10", "none", "yes". */
void lb_param_format(const struct lb_param *p, const struct lb_param_value *v, char *buf,
		     size_t len);
/* @p's summary column as @cfg's run writes it (column_value, else the value). */
void lb_param_column_text(const struct lb_param *p, const struct lb_run_cfg *cfg, char *buf,
			  size_t len);
/* The `variant` column: the variant rows not at their default, "name" for a
 * flag, "name=value" otherwise, ';'-separated; "" when none. */
void lb_param_variant_text(const struct lb_run_cfg *cfg, char *buf, size_t len);

/* --help's lines for the rows @from to @to - 1 that have an option. */
void lb_params_usage(FILE *f, enum lb_param_id from, enum lb_param_id to);

/* Are the run's servers the user's (--redis, --sentinel, --cluster)? */
static inline bool lb_cfg_theirs(const struct lb_run_cfg *cfg)
{
	return cfg->redis_urls || cfg->sentinel_urls || cfg->cluster_urls || cfg->etcd_urls ||
	       cfg->zk_urls;
}

/* The command of --hook @name:@node, else of --hook @name, else NULL. */
const char *lb_hook_command(const struct lb_run_cfg *cfg, const char *name, int node);

#endif
