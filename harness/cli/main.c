/* main.c - parse the sub-command and dispatch; nothing else lives here. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "signals.h"
#include "util.h"


static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "list", lb_cmd_list, "list strategies with their claims" },
	{ "run", lb_cmd_run, "run one strategy under contention and judge it" },
	{ "compare", lb_cmd_compare, "run several strategies under the same load, side by side" },
	{ "check", lb_cmd_check, "recompute a run's figures from its files; --history FILE: yours" },
	{ "adapter-test", lb_cmd_adapter_test, "the adapter conformance suite: a library adapter or exec:PATH, property by property" },
	{ "exercise", lb_cmd_exercise, "the lab: grade your lock (exec:./my_lock.py) on exercise N; --list" },
	{ "audit", lb_cmd_audit, "test the claims a lock makes (M D F O L) with the scenarios that break them" },
	{ "matrix", lb_cmd_matrix, "every strategy against every scenario, checked against expectations" },
	{ "chaos", lb_cmd_chaos, "a probabilistic scenario over K seeds: violation rates with intervals" },
	{ "sweep", lb_cmd_sweep, "vary clients, hold, ttl or keys for several strategies" },
	{ "bench", lb_cmd_bench, "harness and adapter overhead, hand-off, libraries and their cost, as ratios" },
	{ "report", lb_cmd_report, "draw the charts and report.md of a run or matrix directory" },
	{ "tour", lb_cmd_tour, "a deck of the classic lessons in teaching order, from shipped runs" },
	{ "install", lb_cmd_install, "fetch NAME@VERSION of a shipped library into lockbench's cache (pip)" },
	{ "agent", lb_cmd_agent, "run a share of a run's clients on this host (for run --hosts: reads its share on stdin)" },
	{ "servers", lb_cmd_servers, "start N redis-servers (or --sentinel, --etcd, --zookeeper) until Ctrl-C" },
};

static void usage(FILE *f)
{
	fprintf(f, "lockbench %s - teach and measure Redis distributed locks\n\n"
		   "usage: lockbench <command> [options]\n\ncommands:\n", LOCKBENCH_VERSION);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "  %-12s %s\n\n", "help", "this text");
	fprintf(f, "`lockbench COMMAND --help` describes each command, its options and its exit\n"
		   "status. Exit status, every command: 0 done (violations are results, not\n"
		   "errors), 1 runtime failure or a failed --check, 2 usage error (found before\n"
		   "anything is sent), 3 the run could not happen here (a server unreachable or\n"
		   "refusing, or skipped: the reason is printed; never a pass), 130 or 143\n"
		   "interrupted by Ctrl-C (SIGINT) or SIGTERM: what ran is written and classed\n"
		   "`interrupted`, compared with no expectation (`servers` exits 0).\n\n"
		   "Files: scenarios are looked up in $LOCKBENCH_SCENARIOS, ./scenarios, the\n"
		   "source tree beside the binary, then PREFIX/share/lockbench/scenarios (make\n"
		   "install). The shim libfakeclock.so (it moves clocks, and gives a library's\n"
		   "connections its client's address on the Sentinel topology) is beside the\n"
		   "binary or in PREFIX/lib/lockbench. Every redis-server lockbench starts runs on a free\n"
		   "loopback port, in its own temporary directory, and is stopped on every exit.\n\n"
		   "Environment: LOCKBENCH_SCENARIOS (a scenarios directory), LOCKBENCH_CLOCK_SHIM\n"
		   "(the shim's path), LOCKBENCH_REDIS_SERVER (the redis-server binary),\n"
		   "LOCKBENCH_ADAPTERS (a directory of library adapters), LOCKBENCH_CACHE (where\n"
		   "`lockbench install` puts library versions), LOCKBENCH_TOUR (the\n"
		   "tour's reference runs), TMPDIR (where the servers' directories go; a\n"
		   "relative one is made absolute at the start; one that names no directory,\n"
		   "or is longer than 200 bytes, is refused, exit 2).\n\n"
		   "See README.md and docs/ (installed in PREFIX/share/doc/lockbench) for more.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? LB_EXIT_USAGE : LB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("lockbench %s\n", LOCKBENCH_VERSION);
		return LB_EXIT_OK;
	}
	lb_signals_install();
	if (lb_tmpdir_absolute() < 0) /* a relative TMPDIR: absolute, or refused */
		return LB_EXIT_USAGE;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			int rc = commands[i].fn(argc - 1, argv + 1);
			/* cut short: 128 + the signal, as a shell reports it; `servers` is
			 * meant to end that way */
			/* check and report say 128 + the signal themselves, only when it
			 * stopped their work: done, the verdict's status stands */
			if (lb_stop_requested() && commands[i].fn != lb_cmd_servers &&
			    commands[i].fn != lb_cmd_check && commands[i].fn != lb_cmd_report)
				return 128 + lb_stop_signal();
			return rc;
		}
	fprintf(stderr, "lockbench: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return LB_EXIT_USAGE;
}
