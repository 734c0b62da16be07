/* cmd_list.c - `lockbench list`: every strategy, its summary and its claims. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "scenario.h"
#include "strategy.h"

/* The first sentence of @text, cut to @width characters. */
static void first_sentence(const char *text, char *out, size_t width)
{
	size_t n = strcspn(text, ".");
	if (n > width - 4) {
		snprintf(out, width, "%.*s...", (int)(width - 4), text);
		return;
	}
	snprintf(out, width, "%.*s", (int)n, text);
}

static void list_scenarios(void)
{
	char names[64][64], line[160];
	static struct lb_scenario sc;
	int n = lb_scenario_names(names, 64);

	printf("\nSCENARIOS (lockbench run --scenario NAME --strategy S; lockbench matrix)\n");
	for (int i = 0; i < n; i++) {
		if (lb_scenario_load(names[i], &sc) < 0)
			continue; /* the loader said why */
		if (sc.summary[0])
			snprintf(line, sizeof(line), "%s", sc.summary);
		else
			first_sentence(sc.description, line, sizeof(line));
		printf("  %-29s %s\n", sc.name, line);
		if (sc.only[0])
			printf("  %-29s only: %s\n", "", sc.only);
	}
	if (n == 0)
		printf("  (no scenarios directory found; set LOCKBENCH_SCENARIOS)\n");
}

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
		if (s->wait)
			printf("  %-14s %-5s %-5s  wait notify: its release wakes one waiter\n", "", "", "");
		if (s->failpoints) {
			printf("  %-14s %-5s %-5s  failpoints:", "", "", "");
			for (const char *const *f = s->failpoints; *f; f++)
				printf(" %s", *f);
			printf("\n");
		}
	}
	list_scenarios();
	return LB_EXIT_OK;
}
