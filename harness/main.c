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
	{ "check", lb_cmd_check, "recompute a run's summary from its history" },
	{ "matrix", lb_cmd_matrix, "every strategy against every scenario, checked against expectations" },
	{ "chaos", lb_cmd_chaos, "a probabilistic scenario over K seeds: violation rates with intervals" },
	{ "sweep", lb_cmd_sweep, "vary clients, hold, ttl or keys for several strategies" },
	{ "bench", lb_cmd_bench, "harness overhead, hand-off and a peer, as ratios on the same servers" },
	{ "report", lb_cmd_report, "draw the charts and report.md of a run or matrix directory" },
	{ "servers", lb_cmd_servers, "start N embedded redis-servers until Ctrl-C" },
};

static void usage(FILE *f)
{
	fprintf(f, "lockbench %s - teach and measure Redis distributed locks\n\n"
		   "usage: lockbench <command> [options]\n\ncommands:\n", LOCKBENCH_VERSION);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "  %-10s %s\n\nSee README.md and docs/ for more.\n", "help", "this text");
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
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "lockbench: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return LB_EXIT_USAGE;
}
