/* cmd_list.c - `lockbench list`: every strategy, its summary and its claims. */
#include <stdio.h>
#include <string.h>

#include "esc.h"
#include "adapter.h"
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
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-33s %s\n", sc.name, line);
		if (sc.only[0])
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-33s only: %s\n", "", sc.only);
		if (sc.except[0])
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-33s except: %s\n", "", sc.except);
		if (sc.lessons[0])
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-33s lessons: %s\n", "", sc.lessons);
	}
	if (n == 0)
		printf("  (no scenarios directory found; set LOCKBENCH_SCENARIOS)\n");
}

/* Wrap @text at @width columns, every line indented by @indent spaces. */
static void wrapped(const char *text, int indent, int width)
{
	int col = indent;
	printf("%*s", indent, "");
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");
		if (col > indent && col + (int)n + 1 > width) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		lb_esc_fprintf(stdout, LB_LANG_TERM, "%.*s", (int)n, p);
		col += (int)n;
		p += n;
		while (*p == ' ')
			p++;
	}
	putchar('\n');
}

/* The library adapters (the manifests in strategies/adapters): what each is, and
 * whether it can run here (its --check, run now). */
static void list_libraries(void)
{
	printf("\nLIBRARIES: real lock libraries behind an adapter (docs/adapters.md)\n");
	if (lb_adapter_count() == 0)
		printf("  (no adapters found: strategies/adapters, or set LOCKBENCH_ADAPTERS)\n");
	for (size_t i = 0; i < lb_adapter_count(); i++) {
		const struct lock_strategy *s = lb_adapter_at(i);
		const struct lb_adapter_def *d = lb_adapter_def_of(s);
		char claims[LB_CLAIM_COUNT + 1], why[600];
		for (unsigned c = 0; c < LB_CLAIM_COUNT; c++)
			claims[c] = (s->claims & (1u << c)) ? "MDFOL"[c] : '-';
		claims[LB_CLAIM_COUNT] = '\0';
		if (strlen(s->name) > 24) /* a long name on a line of its own: the columns stay */
			printf("  %s\n  %-24s %-5s %-5u  %s\n", s->name, "", claims, s->min_nodes,
			       s->summary);
		else
			printf("  %-24s %-5s %-5u  %s\n", s->name, claims, s->min_nodes, s->summary);
		printf("  %-36s %s %s, %s, package %s\n", "", d->library, d->version, d->language,
		       d->package);
		if (!lb_adapter_usable(s, why, sizeof(why)))
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-36s UNAVAILABLE here: %s\n", "", why);
		printf("  %-36s sends:\n", "");
		wrapped(d->sends, 39, 100);
		if (d->defaults[0]) { /* the library's own, cited from its source */
			printf("  %-36s defaults:\n", "");
			wrapped(d->defaults, 39, 100);
		}
		if (d->source[0])
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-36s source: %s\n", "", d->source);
	}
	printf("  (and exec:PATH: any program that speaks the adapter protocol)\n");
}

/* The null adapters (kind = null): no lock, the protocol's own cost. */
static void list_null_adapters(void)
{
	if (lb_null_adapter_count() == 0)
		return;
	printf("\nNULL ADAPTERS: no lock; each grants every acquire at once and sends nothing, to\n"
	       "measure what the adapter protocol costs in its language (lockbench bench, item 3)\n");
	for (size_t i = 0; i < lb_null_adapter_count(); i++) {
		const struct lock_strategy *s = lb_null_adapter_at(i);
		const struct lb_adapter_def *d = lb_adapter_def_of(s);
		char why[600];
		printf("  %-24s %-12s %s\n", s->name, d->language, d->source);
		if (!lb_adapter_usable(s, why, sizeof(why)))
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-37s UNAVAILABLE here: %s\n", "", why);
	}
}

/* `list --lessons`: the cells lesson pages show, SCENARIO/STRATEGY a line
 * (the Makefile's reference charts; matrix --lesson-repeat). */
static int list_lessons(void)
{
	char names[64][64];
	static struct lb_scenario sc;
	int n = lb_scenario_names(names, 64), rc = LB_EXIT_OK;

	for (int i = 0; i < n; i++) {
		if (lb_scenario_load(names[i], &sc) < 0) {
			rc = LB_EXIT_FAIL; /* the loader said why */
			continue;
		}
		char buf[sizeof(sc.lessons)], *save = NULL;
		snprintf(buf, sizeof(buf), "%s", sc.lessons);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
			lb_esc_fprintf(stdout, LB_LANG_TERM, "%s/%s\n", sc.name, t);
	}
	return rc;
}

int lb_cmd_list(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--lessons"))
		return list_lessons();
	if (argc > 1) {
		fprintf(stderr, "usage: lockbench list [--lessons]\n\n"
				"Lists the strategies, the library adapters, the null adapters and the scenarios.\n"
				"--lessons: only the cells lesson pages show, SCENARIO/STRATEGY a line.\n");
		return strcmp(argv[1], "--help") ? LB_EXIT_USAGE : LB_EXIT_OK;
	}
	printf("STRATEGIES: recipes in C (claims: M mutex, D deadlock-free, F fault-tolerant,"
	       " O owner-only release, L no lapse)\n");
	printf("  %-24s %-5s %-5s  %s\n", "name", "claim", "nodes", "summary");
	for (size_t i = 0; i < lb_strategy_count(); i++) {
		const struct lock_strategy *s = lb_strategy_at(i);
		char claims[LB_CLAIM_COUNT + 1];

		if (lb_strategy_is_external(s))
			continue;
		for (unsigned c = 0; c < LB_CLAIM_COUNT; c++)
			claims[c] = (s->claims & (1u << c)) ? "MDFOL"[c] : '-';
		claims[LB_CLAIM_COUNT] = '\0';
		printf("  %-24s %-5s %-5u  %s\n", s->name, claims, s->min_nodes, s->summary);
		if (s->wait)
			printf("  %-24s %-5s %-5s  wait notify: its release wakes one waiter\n", "", "", "");
		if (s->failpoints) {
			printf("  %-24s %-5s %-5s  failpoints:", "", "", "");
			for (const char *const *f = s->failpoints; *f; f++)
				printf(" %s", *f);
			printf("\n");
		}
	}
	list_libraries();
	list_null_adapters();
	list_scenarios();
	return LB_EXIT_OK;
}
