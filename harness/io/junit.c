/*
 * junit.c - JUnit XML reports (junit.h).
 */
#include "junit.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "outfile.h"
#include "util.h"

int lb_junit_open(struct lb_junit *j, const char *path, const char *suite)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->path, sizeof(j->path), "%s", path);
	snprintf(j->suite, sizeof(j->suite), "%s", suite);
	j->cases = open_memstream(&j->buf, &j->len);
	return j->cases ? 0 : LB_ESYS;
}

void lb_junit_case(struct lb_junit *j, const char *classname, const char *name, double seconds,
		   enum lb_junit_outcome outcome, const char *message, const char *text)
{
	FILE *f = j->cases;

	j->tests++;
	j->failures += outcome == LB_JUNIT_FAIL;
	j->skipped += outcome == LB_JUNIT_SKIPPED;
	if (seconds > 0)
		j->seconds += seconds;
	/* an unknown time is left out (the attribute is optional), never 0 */
	lb_esc_fprintf(f, LB_LANG_XML, "    <testcase classname=\"%s\" name=\"%s\"", classname, name);
	if (seconds >= 0)
		fprintf(f, " time=\"%.3f\"", seconds);
	fputs(">\n", f);
	if (outcome == LB_JUNIT_SKIPPED)
		lb_esc_fprintf(f, LB_LANG_XML, "      <skipped message=\"%s\"/>\n", message);
	else if (outcome == LB_JUNIT_FAIL)
		lb_esc_fprintf(f, LB_LANG_XML, "      <failure message=\"%s\" type=\"%s\">%s</failure>\n",
			       message, strncmp(message, "skipped", 7) ? "lockbench" : "skipped",
			       text ? text : "");
	if (text && outcome != LB_JUNIT_FAIL)
		lb_esc_fprintf(f, LB_LANG_XML, "      <system-out>%s</system-out>\n", text);
	fputs("    </testcase>\n", f);
}

int lb_junit_close(struct lb_junit *j)
{
	struct lb_outfile o;
	char dir[4096], base[4096];
	int rc;

	if (fclose(j->cases) != 0 || !j->buf) {
		free(j->buf);
		lb_errorf("writing %s failed: out of memory", j->path);
		return LB_ESYS;
	}
	snprintf(dir, sizeof(dir), "%s", j->path);
	snprintf(base, sizeof(base), "%s", j->path);
	if ((rc = lb_outfile_open(&o, dirname(dir), basename(base), true)) == 0) {
		fprintf(o.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
		lb_esc_fprintf(o.f, LB_LANG_XML, "<testsuites name=\"lockbench\" tests=\"%d\" failures=\"%d\" "
			       "errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", j->tests, j->failures,
			       j->skipped, j->seconds);
		lb_esc_fprintf(o.f, LB_LANG_XML, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" "
			       "errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", j->suite, j->tests,
			       j->failures, j->skipped, j->seconds);
		fwrite(j->buf, 1, j->len, o.f);
		fputs("  </testsuite>\n</testsuites>\n", o.f);
		rc = lb_outfile_close(&o);
	}
	free(j->buf);
	j->buf = NULL;
	return rc;
}
