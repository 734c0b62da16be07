/* cmd_report.c - `lockbench report DIR`: charts and report.md for a run or a directory of runs;
 * with --slides, every step of its report.html printed by Chromium as a page of a PDF. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "esc.h"
#include "signals.h"
#include "commands.h"
#include "owned.h"
#include "report.h"
#include "rserver.h"
#include "shared.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench report [--chart-scale X] [--slides] DIR\n"
		   "       (DIR: a run, compare, matrix, sweep, chaos or demo directory)\n\n"
		   "Draws the charts (gnuplot, PNG and SVG) from DIR's files, writes the\n"
		   "gnuplot scripts beside them, and writes DIR/report.md. --chart-scale X\n"
		   "draws them X times the size, fonts and lines (0.5 to 4; 2 for slides).\n"
		   "A run's report recomputes its figures as `lockbench check` does and says so,\n"
		   "on stderr and at the top of report.md, when summary.csv disagrees.\n"
		   "--slides (a run or a compare) then prints DIR/report.html's steps with\n"
		   "Chromium (headless) into DIR/slides/slides.pdf, one page per step (1600x1000\n"
		   "px): the timeline, zoomed around the step where that helps, and the step's\n"
		   "sentence, large, for a lectern without a browser (presenter mode, key f, is\n"
		   "the same in a browser). Another directory is a usage error.\n\n"
		   "Exit status: 0 written, 1 a runtime failure (gnuplot failed, a file could\n"
		   "not be written), 2 usage error, 4 an input file is unreadable or malformed\n"
		   "(the file, line and field are named).\n");
}

#define SLIDES_LIMIT_MS 120000 /* Chromium printing the steps: killed past it */

/* Chromium, headless, in a process group of its own (killed whole when it
 * has printed, or at the limit, or on Ctrl-C: none of it is left behind),
 * prints @url to @pdf; its output goes to @log; errors name them as @as_pdf and
 * @as_log, where they will be. */
static int print_pdf(const char *url, const char *pdf, const char *profile, const char *log,
		     const char *as_pdf, const char *as_log)
{
	char out_arg[PATH_MAX * 2], prof_arg[PATH_MAX * 2];
	int status;

	snprintf(out_arg, sizeof(out_arg), "--print-to-pdf=%s", pdf);
	snprintf(prof_arg, sizeof(prof_arg), "--user-data-dir=%s", profile);
	fflush(NULL);
	pid_t parent = getpid(), pid = fork();
	if (pid < 0)
		return LB_ESYS;
	if (pid == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		/* as root its sandbox cannot start */
		const char *argv[] = { "chromium", "--headless=new", "--disable-gpu", "--no-first-run",
				       "--no-pdf-header-footer", prof_arg, out_arg, url, NULL, NULL };
		if (geteuid() == 0) {
			argv[7] = "--no-sandbox";
			argv[8] = url;
		}
		/* runs: chromium (chromium) */
		execvp("chromium", (char *const *)argv);
		_exit(127);
	}
	int64_t deadline = lb_now_ns() + SLIDES_LIMIT_MS * LB_NS_PER_MS;
	pid_t got;
	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && lb_now_ns() < deadline &&
	       !lb_stop_requested())
		lb_sleep_ns(20 * LB_NS_PER_MS);
	kill(-pid, SIGKILL); /* its helpers (renderer, zygote) too, whether it ended or not */
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (lb_stop_requested())
			return LB_ECANCELED;
		lb_errorf("chromium did not print %s within %d s: killed (its output: %s)", as_pdf,
			  SLIDES_LIMIT_MS / 1000, as_log);
		return LB_ETIMEOUT;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		lb_errorf("chromium is not installed (harness/deps.sh installs it): no slides");
		return LB_ENOTSUP;
	}
	struct stat st;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(pdf, &st) < 0 || st.st_size == 0) {
		lb_errorf("chromium failed to print %s (its output: %s)", as_pdf, as_log);
		return LB_ESYS;
	}
	return 0;
}

/* @path as a file: URL, every byte but unreserved ones and '/' escaped (a
 * '#', '%' or '?' in a directory's name is part of the path, not the URL's). */
static void file_url(char *url, size_t len, const char *path, const char *fragment)
{
	size_t o = (size_t)snprintf(url, len, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p && o + 4 < len; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-._~", *p))
			url[o++] = (char)*p;
		else
			o += (size_t)snprintf(url + o, len - o, "%%%02X", *p);
	}
	snprintf(url + o, len - o, "%s", fragment);
}

/* DIR/slides/slides.pdf from DIR/report.html#slides; the browser's profile
 * is a directory of its own under DIR/slides, removed after. The PDF and
 * the browser's log are written there first and renamed into place: a
 * failed print leaves no old PDF passing for new, and a symlink at either
 * name is replaced, never followed. */
static int slides(const char *dir)
{
	char abs[PATH_MAX], out[PATH_MAX + 16];

	if (!realpath(dir, abs)) {
		lb_errorf("%s: %s", dir, strerror(errno));
		return LB_ESYS;
	}
	/* a run's or a compare's page: the others have no steps, and a tour's
	 * deck has one lesson on screen at a time (present it with f) */
	snprintf(out, sizeof(out), "%s/report.html", abs);
	FILE *page = fopen(out, "r");
	static char head[65536];
	size_t got = page ? fread(head, 1, sizeof(head) - 1, page) : 0;
	if (page)
		fclose(page);
	head[got] = '\0';
	if (!strstr(head, "<ol id=\"story\">") || strstr(head, "id=\"lessonbar\"")) {
		lb_errorf("--slides: %s has no steps to print (a run's or a compare's page has; "
			  "a tour's deck is presented in the browser, key f)", out);
		return LB_EINVAL;
	}
	snprintf(out, sizeof(out), "%s/slides", abs);
	struct stat st;
	if (mkdir(out, 0755) < 0 && (errno != EEXIST || lstat(out, &st) < 0 || !S_ISDIR(st.st_mode))) {
		lb_errorf("cannot create %s: %s", out, errno == EEXIST ? "it exists and is not a "
			  "directory (a symlink is not followed)" : strerror(errno));
		return LB_ESYS;
	}
	char abs_page[PATH_MAX + 16];
	snprintf(abs_page, sizeof(abs_page), "%s/report.html", abs);
	return lb_print_page(abs_page, "#slides", out, "slides.pdf");
}

int lb_print_page(const char *page, const char *fragment, const char *out, const char *name)
{
	char url[PATH_MAX + 32], pdf[PATH_MAX + 32], profile[PATH_MAX + 32], log[PATH_MAX + 32];

	file_url(url, sizeof(url), page, fragment);
	snprintf(profile, sizeof(profile), "%s/.profile-XXXXXX", out);
	if (lb_owned_mkdtemp(profile) < 0) {
		lb_errorf("cannot create %s: %s", profile, strerror(errno));
		return LB_ESYS;
	}
	char tmp_pdf[PATH_MAX + 64], tmp_log[PATH_MAX + 64];
	snprintf(tmp_pdf, sizeof(tmp_pdf), "%s/%s", profile, name);
	snprintf(tmp_log, sizeof(tmp_log), "%s/chromium.log", profile);
	snprintf(pdf, sizeof(pdf), "%s/%s", out, name);
	snprintf(log, sizeof(log), "%s/chromium.log", out);
	int rc = print_pdf(url, tmp_pdf, profile, tmp_log, pdf, log);
	if (rename(tmp_log, log) < 0 && rc == 0)
		rc = LB_ESYS;
	if (rc == 0 && rename(tmp_pdf, pdf) < 0) {
		lb_errorf("cannot write %s: %s", pdf, strerror(errno));
		rc = LB_ESYS;
	}
	lb_owned_rmtree(profile);
	return rc;
}

int lb_cmd_report(int argc, char **argv)
{
	bool want_slides = false;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	if (argc >= 3 && !strcmp(argv[argc - 2], "--slides")) { /* DIR last: --slides DIR */
		want_slides = true;
		argv[argc - 2] = argv[argc - 1];
		argc--;
	} else if (argc >= 3 && !strcmp(argv[argc - 1], "--slides")) { /* or DIR --slides */
		want_slides = true;
		argc--;
	}
	if (argc == 4 && !strcmp(argv[1], "--chart-scale")) {
		if (lb_chart_scale_arg(argv[2]) < 0)
			return LB_EXIT_USAGE;
		argv += 2;
		argc -= 2;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	if (!lb_dir_arg_ok("report", argv[1]))
		return LB_EXIT_USAGE;
	lb_stop_work_begin(); /* Ctrl-C stops it; a report that was done stands */
	int rc = lb_report_dir(argv[1]);
	if (rc == LB_ECANCELED || (rc < 0 && lb_stop_requested()))
		return 128 + lb_stop_signal();
	if (rc == LB_EINVAL)
		return LB_EXIT_INPUT;
	if (rc < 0)
		return LB_EXIT_FAIL;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "report: %s/report.md\nin a browser: %s/report.html\n",
		       argv[1], argv[1]);
	if (want_slides) {
		rc = slides(argv[1]);
		if (rc < 0 && lb_stop_requested())
			return 128 + lb_stop_signal();
		if (rc == LB_EINVAL)
			return LB_EXIT_USAGE;
		if (rc < 0)
			return LB_EXIT_FAIL;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "slides: %s/slides/slides.pdf\n", argv[1]);
	}
	return LB_EXIT_OK;
}
