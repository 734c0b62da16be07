/*
 * options.h - the options every command that runs the harness shares
 * (`run`, `compare`), parsed and validated once. Usage errors print the reason
 * and return LB_EINVAL (exit code 2).
 */
#ifndef LB_OPTIONS_H
#define LB_OPTIONS_H

#include "gate.h"
#include "run.h"
#include "scenario.h"

#define LB_MAX_STRATEGIES 128 /* every strategy lockbench can list: 15 recipes, 64 libraries,
				   8 exec:, 16 versions (strategies/adapter_registry.c) */

struct lb_run_opts {
	struct lb_run_cfg cfg;
	bool out_given;
	uint32_t given;            /* the run parameters the command line gave: lb_param_bit()
				      of each row (params.h) */
	bool has_scenario;
	struct lb_scenario scenario;
	/* run, compare: what the exit status answers to (gate.h), and --json */
	struct lb_gate gate;
	bool json;
	bool dry_run;              /* run: print what it would send, send nothing */
	int n_members;             /* --etcd, --zookeeper: the members given */
	char junit_path[4096];     /* --junit FILE, or "" */
	char openmetrics_path[4096]; /* run --openmetrics FILE, or "" */
	/* compare: the strategies to run, in order */
	const struct lock_strategy *strategies[LB_MAX_STRATEGIES];
	size_t n_strategies;
	/* --adapter-arg: arguments of external strategies' programs */
#define LB_MAX_ADAPTER_ARGS 8
	const char *adapter_args[LB_MAX_ADAPTER_ARGS];
	int n_adapter_args;
	/* sweep: --vary NAME=V1,V2,... */
	char vary_name[16];
	int64_t vary[32];
	int n_vary;
};

/* Set the run parameter whose sweep --vary name is @name (params.h: clients,
 * hold, ttl, keys, ...) of @cfg to @v; LB_EINVAL outside its bounds. */
int lb_run_cfg_set(struct lb_run_cfg *cfg, const char *name, int64_t v);

/* RUN_DEFAULTS: like RUN, but --strategy may be left for the caller to set. */
enum lb_opts_mode { LB_OPTS_RUN, LB_OPTS_COMPARE, LB_OPTS_RUN_DEFAULTS, LB_OPTS_SWEEP };

/* Parse @argv (argv[0] is the command name). */
int lb_run_opts_parse(int argc, char **argv, enum lb_opts_mode mode, struct lb_run_opts *o);
/* The options that name a deployment (--redis, --sentinel, --sentinel-master,
 * --master-auth, --cluster, --etcd, --zookeeper, --allow-faults, --hook), as
 * getopt_long entries whose val is @base + their index, *@n of them: a
 * command that runs the harness (audit) takes them as run does, and hands
 * them to lb_run_opts_parse. */
struct option;
const struct option *lb_deploy_options(int base, size_t *n);
/* Their lines of --help. */
void lb_deploy_opts_usage(FILE *f);
/* The option list for --help. */
void lb_run_opts_usage(FILE *f, enum lb_opts_mode mode);
/* Fill the run parameters the command line did not give from @sc and point
 * cfg at it. */
void lb_run_opts_apply_scenario(struct lb_run_opts *o, const struct lb_scenario *sc);
/* Resolve a strategy name or print the valid ones. */
const struct lock_strategy *lb_strategy_or_usage(const char *name);
/* --library-env DIR (or --library-env=DIR) anywhere in @argv, taken before
 * any --strategy is looked up: DIR must be a directory; from then on a
 * library with an env hook is the one installed there
 * (lb_adapter_set_library_env). 0, or LB_EINVAL said. */
int lb_library_env_option(int argc, char **argv);
/* results/runs/<UTC time>-<name>, made unique. */
void lb_default_out_dir(const char *base, const char *name, char *out, size_t len);

#endif
