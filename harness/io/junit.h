/*
 * junit.h - JUnit XML, the test report every CI system shows (Jenkins,
 * GitLab, GitHub's test reporters): one <testcase> per run judged (`run`,
 * `compare`) or per cell (`matrix --check`), classname the scenario, name
 * the strategy; a condition not held is a <failure> whose message says which
 * and whose text carries the figures and the run directory. What could not
 * run is a <failure type="skipped"> unless --allow-skipped (then <skipped>):
 * skipped is never passed. The cases are kept in memory and the file is
 * written whole at the end (outfile.h), so a report is never half a file.
 */
#ifndef LB_JUNIT_H
#define LB_JUNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct lb_junit {
	char path[4096];      /* the file, as --junit gave it */
	char suite[64];       /* "lockbench run", "lockbench matrix" */
	FILE *cases;          /* the <testcase> elements so far */
	char *buf;
	size_t len;
	int tests, failures, skipped;
	double seconds;
};

enum lb_junit_outcome { LB_JUNIT_PASS, LB_JUNIT_FAIL, LB_JUNIT_SKIPPED };

/* Start a report to @path; 0, or LB_ESYS (no memory). */
int lb_junit_open(struct lb_junit *j, const char *path, const char *suite);
/* One test case: @classname/@name, @seconds long (< 0: unknown, and its
 * time attribute left out, never written 0.000), its
 * outcome with @message (a line) and @text (the figures, the directory). */
void lb_junit_case(struct lb_junit *j, const char *classname, const char *name, double seconds,
		   enum lb_junit_outcome outcome, const char *message, const char *text);
/* Write the file whole and free the report: 0, or LB_ESYS with a message
 * naming the file. */
int lb_junit_close(struct lb_junit *j);

#endif
