/* cmd_list.c - `lockbench list`: every strategy, its summary and its claims. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "strategy.h"

int lb_cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: lockbench list\n");
		return LB_EXIT_USAGE;
	}
	printf("STRATEGIES (claims: M mutex, D deadlock-free, F fault-tolerant,"
	       " O owner-only release, L no lapse)\n");
	printf("  %-14s %-5s %-5s  %s\n", "name", "claim", "nodes", "summary");
	for (size_t i = 0; i < lb_strategy_count(); i++) {
		const struct lock_strategy *s = lb_strategy_at(i);
		char claims[LB_CLAIM_COUNT + 1];

		for (unsigned c = 0; c < LB_CLAIM_COUNT; c++)
			claims[c] = (s->claims & (1u << c)) ? "MDFOL"[c] : '-';
		claims[LB_CLAIM_COUNT] = '\0';
		printf("  %-14s %-5s %-5u  %s\n", s->name, claims, s->min_nodes, s->summary);
		if (s->failpoints) {
			printf("  %-14s %-5s %-5s  failpoints:", "", "", "");
			for (const char *const *f = s->failpoints; *f; f++)
				printf(" %s", *f);
			printf("\n");
		}
	}
	return LB_EXIT_OK;
}
