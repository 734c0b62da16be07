/* commands.h - one function per `lockbench` sub-command; main.c dispatches. */
#ifndef LB_COMMANDS_H
#define LB_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes: 0 done (violations are results, not errors), 1 runtime
 * failure (or a failed --check), 2 usage error, 3 skipped: the run could
 * not happen here (the reason is printed; --allow-skipped makes it 0),
 * 4 (check, report) an input file cannot be read or is malformed; main.c
 * turns any of them into 128 + the signal when Ctrl-C or SIGTERM cut the
 * command short (130, 143). */
enum { LB_EXIT_OK = 0, LB_EXIT_FAIL = 1, LB_EXIT_USAGE = 2, LB_EXIT_SKIPPED = 3,
       LB_EXIT_INPUT = 4,
       /* run, compare: no condition of --check, --expect or --threshold failed,
	* and one was neither held nor broken (an interval across its bound, a
	* figure not measured: threshold.h) */
       LB_EXIT_INCONCLUSIVE = 5,
       /* lb_run_and_report alone, never an exit status: the run completed and
	* a condition of --check, --expect or --threshold did not hold (1) */
       LB_EXIT_NOT_HELD = 101 };

int lb_cmd_list(int argc, char **argv);
int lb_cmd_servers(int argc, char **argv);
int lb_cmd_run(int argc, char **argv);
int lb_cmd_compare(int argc, char **argv);
int lb_cmd_check(int argc, char **argv);
int lb_cmd_matrix(int argc, char **argv);
int lb_cmd_chaos(int argc, char **argv);
int lb_cmd_report(int argc, char **argv);
int lb_cmd_sweep(int argc, char **argv);
int lb_cmd_bench(int argc, char **argv);
int lb_cmd_audit(int argc, char **argv);
int lb_cmd_exercise(int argc, char **argv);
int lb_cmd_adapter_test(int argc, char **argv);
int lb_cmd_tour(int argc, char **argv);
int lb_cmd_install(int argc, char **argv);
int lb_cmd_agent(int argc, char **argv);
/* `check --history FILE ...` (cmd_check_history.c), which lb_cmd_check hands
 * its arguments to. */
int lb_check_history(int argc, char **argv);
/* `check DIR --porcupine` (cmd_check_porcupine.c): DIR's lock operations
 * through Porcupine; an exit status (0 linearizable, 1 not, 5 unknown, 3 no
 * checker here, 4 DIR's files unreadable), the verdict printed. */
int lb_check_porcupine(const char *dir, int64_t timeout_ms);
/* Where lockbench-porcupine is (@out, also when it is not there): true when
 * it is there and executable. */
bool lb_porcupine_find(char *out, size_t len);

/* Chromium (headless) prints the page @page (an absolute path) opened at
 * @fragment ("#slides") into @out/@name (cmd_report.c), written whole or not
 * at all; its log is @out/chromium.log. A browser that is missing, fails or
 * takes over 120 s is said. */
int lb_print_page(const char *page, const char *fragment, const char *out, const char *name);

struct lb_run_cfg;
struct lb_run_result;
struct lb_gate;
/* Run, write the files, print the table, judge @gate (gate.h): the body of
 * `run`, shared by compare; an exit code, or LB_EXIT_NOT_HELD. @json: summary.json on standard output, the
 * table on standard error. */
int lb_run_and_report(struct lb_run_cfg *cfg, struct lb_run_result *res,
		      const struct lb_gate *gate, bool json);

#endif
