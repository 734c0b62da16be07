/*
 * charts.c - gnuplot scripts and data for a run: the timeline (one lane per
 * client, a bar per critical section, overlapping stretches in red, faults as
 * dashed lines, lease expiry marked, and under the clients what Redis held),
 * the acquire-latency CDF and the per-client section counts. Colours from
 * palette.h (tested apart for colour-blind viewers).
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "esc.h"
#include "outfile.h"
#include "palette.h"
#include "report.h"
#include "shared.h"
#include "signals.h"

#define TIMELINE_MAX 3000 /* sections drawn; beyond, a window around the first violation */

/* The last non-empty line of gnuplot's log (what it said when it failed),
 * into @out: "" when there is none. */
static void log_tail(const char *log, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(log, "re");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && strcmp(p, "^"))
			snprintf(out, len, "%.*s", (int)(len ? len - 1 : 0), p);
	}
	fclose(f);
}

/* @name in @dir, about to be written by gnuplot (which follows a link and
 * blocks on a FIFO): a regular file or nothing is left as it is, a link, a
 * FIFO or a socket is removed (the entry, never what it points to), anything
 * else refused. 0, or LB_EINVAL with @why. */
static int output_slot(const char *dir, const char *name, char *why, size_t len)
{
	char path[3900 + 202];
	struct stat st;

	snprintf(path, sizeof(path), "%.3900s/%.200s", dir, name);
	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	if ((S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
	    unlink(path) == 0)
		return 0;
	snprintf(why, len, "%s is %s, not a file lockbench may write its chart to", path,
		 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	return LB_EINVAL;
}

/* Every output @script names (its `set output 'NAME'` lines, which
 * lockbench wrote), and gnuplot's log, made safe to write (output_slot). */
static int output_slots(const char *dir, const char *script, char *why, size_t len)
{
	char path[3900 + 202], line[512];
	int rc = output_slot(dir, "gnuplot.log", why, len);

	snprintf(path, sizeof(path), "%.3900s/%.200s", dir, script);
	FILE *f = fopen(path, "re");
	while (rc == 0 && f && fgets(line, sizeof(line), f)) {
		char name[256];
		if (sscanf(line, "set output '%255[^']'", name) == 1 && !strchr(name, '/'))
			rc = output_slot(dir, name, why, len);
	}
	if (f)
		fclose(f);
	return rc;
}

int lb_gnuplot(const char *dir, const char *script, char *why, size_t len)
{
	char log[PATH_MAX], said[300];
	int status, err[2];

	snprintf(log, sizeof(log), "%.4000s/gnuplot.log", dir);
	if (output_slots(dir, script, why, len) < 0)
		return LB_ESYS;
	if (pipe2(err, O_CLOEXEC) < 0) {
		snprintf(why, len, "gnuplot could not be started: %s", strerror(errno));
		return LB_ESYS;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "gnuplot could not be started: %s", strerror(errno));
		close(err[0]);
		close(err[1]);
		return LB_ESYS;
	}
	if (pid == 0) {
		close(err[0]);
		setpgid(0, 0); /* whatever it starts is killed with it */
		/* and it dies with lockbench, kill -9 included */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		/* never waits on what is not a file (a FIFO put there since) */
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			      0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		int null = open("/dev/null", O_RDONLY); /* it never waits on a terminal */
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		if (chdir(dir) < 0)
			_exit(126);
		/* runs: gnuplot (gnuplot-nox) */
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		int code = errno; /* exec's error, through the close-on-exec pipe */
		if (write(err[1], &code, sizeof(code)) < 0)
			_exit(127);
		_exit(127);
	}
	close(err[1]);
	int code = 0;
	ssize_t k;
	while ((k = read(err[0], &code, sizeof(code))) < 0 && errno == EINTR)
		;
	close(err[0]);
	if (k == (ssize_t)sizeof(code)) {
		waitpid(pid, &status, 0);
		snprintf(why, len, code == ENOENT ? "gnuplot is not installed (the Debian package "
			 "gnuplot-nox)" : "gnuplot could not be started: %s", strerror(code));
		return code == ENOENT ? LB_ENOTSUP : LB_ESYS;
	}
	/* a chart takes a second or two: a gnuplot still busy after the limit is
	 * killed and the chart reported failed, never waited for */
	int64_t deadline = lb_now_ns() + LB_GNUPLOT_LIMIT_MS * LB_NS_PER_MS;
	pid_t got;
	int stops = lb_stop_count(); /* an interrupted run still draws its charts */
	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && lb_now_ns() < deadline &&
	       lb_stop_count() == stops && !lb_stop_work())
		lb_sleep_ns(5 * LB_NS_PER_MS);
	if (got == 0) {
		bool stopped = lb_stop_count() != stops || lb_stop_work();
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (stopped) { /* Ctrl-C while it draws: not waited for */
			snprintf(why, len, "drawing %s was stopped (Ctrl-C or SIGTERM)", script);
			return LB_ECANCELED;
		}
		snprintf(why, len, "gnuplot did not finish %s within %d s: killed (its log: "
			 "gnuplot.log)", script, LB_GNUPLOT_LIMIT_MS / 1000);
		return LB_ETIMEOUT;
	}
	if (got != pid) {
		snprintf(why, len, "gnuplot's end could not be read: %s", strerror(errno));
		return LB_ESYS;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	log_tail(log, said, sizeof(said));
	if (WIFSIGNALED(status))
		snprintf(why, len, "gnuplot was killed by signal %d (%s) while drawing %s",
			 WTERMSIG(status), strsignal(WTERMSIG(status)), script);
	else
		snprintf(why, len, "gnuplot failed on %s (exit status %d)%s%s", script,
			 WEXITSTATUS(status), said[0] ? ": " : "", said);
	return LB_ESYS;
}

static double chart_scale = 1.0;

int lb_chart_set_scale(double scale)
{
	if (!(scale >= 0.5 && scale <= 4))
		return LB_EINVAL;
	chart_scale = scale;
	return 0;
}

double lb_chart_scale(void)
{
	return chart_scale;
}

int lb_chart_scale_arg(const char *arg)
{
	double v;

	if (!lb_parse_double(arg, &v) || lb_chart_set_scale(v) < 0) {
		lb_errorf("--chart-scale '%s': expected a factor from 0.5 to 4 (2: twice the size "
			  "and the fonts, for slides)", arg);
		return LB_EINVAL;
	}
	return 0;
}

void lb_chart_png(FILE *gp, const char *name, int w, int h)
{
	fprintf(gp, "set terminal pngcairo noenhanced size %d,%d font 'DejaVu Sans,10' fontscale %.2f "
		    "linewidth %.2f\nset pointsize %.2f\nset output '%s.png'\n", (int)(w * chart_scale),
		(int)(h * chart_scale), chart_scale, chart_scale, chart_scale, name);
}

void lb_chart_svg_open(FILE *gp, const char *name, int w, int h)
{
	fprintf(gp, "set terminal svg noenhanced size %d,%d dynamic font 'DejaVu Sans,10' fontscale %.2f "
		    "linewidth %.2f\nset output '%s.svg'\n",
		(int)(w * chart_scale), (int)(h * chart_scale), chart_scale, chart_scale, name);
}

void lb_chart_svg(FILE *gp, const char *name, int w, int h)
{
	lb_chart_svg_open(gp, name, w, h);
	fprintf(gp, "replot\nunset output\n");
}

static double s_of(int64_t ns)
{
	return (double)ns / 1e9;
}

/* The first instant where two clients were inside, or -1. */
static int64_t first_violation(const struct lb_run_files *rf)
{
	for (size_t i = 1; i < rf->n; i++)
		for (size_t j = i; j-- > 0 && i - j <= 64;)
			if (rf->sec[j].key == rf->sec[i].key && rf->sec[j].exit_ns > rf->sec[i].enter_ns)
				return rf->sec[i].enter_ns;
	return -1;
}

/* The label of a fault on the timeline: what, to whom, and for a partition
 * the nodes cut off ("partition c0 | n3,n4"). */
static void event_label(const struct lb_event *ev, char *out, size_t len)
{
	int n = snprintf(out, len, "%s", lb_event_name(ev->kind));

	if (ev->kind == LB_EV_SDOWN || ev->kind == LB_EV_ODOWN || ev->kind == LB_EV_SWITCH_MASTER ||
	    ev->kind == LB_EV_DEMOTE || ev->kind == LB_EV_FAILOVER_CHOSEN ||
	    ev->kind == LB_EV_NODE_FAILED || ev->kind == LB_EV_CLUSTER_DOWN) { /* the Sentinels': value names a server (topology.h) */
		snprintf(out + n, len - (size_t)n, " %s", lb_topo_part_name((int)ev->value));
		return;
	}
	if (ev->client >= 0)
		n += snprintf(out + n, len - (size_t)n, " c%d", ev->client);
	else if (ev->node >= 0)
		n += snprintf(out + n, len - (size_t)n, " n%d", ev->node);
	if (ev->kind == LB_EV_PARTITION && ev->value > 0) {
		const char *sep = " | n";
		for (int b = 0; b < 63 && (size_t)n < len; b++)
			if (ev->value & (INT64_C(1) << b)) {
				n += snprintf(out + n, len - (size_t)n, "%s%d", sep, b);
				sep = ",n";
			}
	}
}

/* On the Sentinel topology, the server each client took for the primary,
 * from each primary-seen event to the client's next one (or the end), as
 * "client from_s length_s part" for a strip under the client's lane.
 * Returns how many stretches it wrote (0: none, no strip is drawn). */
static int write_primaries(const struct lb_run_files *rf)
{
	struct lb_outfile p;
	int n = 0;

	if (lb_outfile_open(&p, rf->dir, "timeline-primary.dat", true) < 0)
		return 0;
	fprintf(p.f, "# client from_s length_s server (0 the first primary, 1 replica 0, 2 another)\n");
	int64_t first_port = -1, second_port = -1; /* the user's deployment: in order seen */
	for (size_t i = 0; i < rf->n_ev; i++) {
		const struct lb_event *e = &rf->ev[i];
		if (e->kind != LB_EV_PRIMARY_SEEN)
			continue;
		int64_t until = (int64_t)(rf->elapsed_s * 1e9);
		for (size_t j = i + 1; j < rf->n_ev; j++)
			if (rf->ev[j].kind == LB_EV_PRIMARY_SEEN && rf->ev[j].client == e->client) {
				until = rf->ev[j].t_ns;
				break;
			}
		if (until > e->t_ns) {
			/* a cluster's nodes (topology.h) drawn as the Sentinel topology's:
			 * the lock's first primary, the replica promoted first, another */
			int v = (int)e->value, colour = v == LB_PART_PRIMARY || v == LB_CLUSTER_PART0 ? 0 :
				v == LB_PART_REPLICA0 || v == LB_CLUSTER_PART0 + LB_CLUSTER_SHARDS ? 1 : 2;
			if (e->value >= LB_PART_PORT0) {
				if (first_port < 0)
					first_port = e->value;
				else if (second_port < 0 && e->value != first_port)
					second_port = e->value;
				colour = e->value == first_port ? 0 : e->value == second_port ? 1 : 2;
			}
			fprintf(p.f, "%d %.6f %.6f %d\n", e->client, s_of(e->t_ns),
				s_of(until - e->t_ns), colour);
			n++;
		}
	}
	return lb_outfile_close(&p) < 0 ? 0 : n;
}

/* A stretch of time; by its start. */
struct span {
	int64_t from, to;
};

static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	return a->from < b->from ? -1 : a->from > b->from;
}

/* The most "two or more inside" bars a timeline draws: a history anyone
 * made cannot make it write gigabytes (each bar past it is counted, and the
 * title says so). */
#define TIMELINE_BARS_MAX 200000

/* What a timeline draws: the sections from..to (all, or a window round
 * the first violation), said in @window. */
struct timeline {
	const struct lb_run_files *rf;
	size_t from, to;
	char window[80];
	size_t unknown; /* sections whose lease's end the lock did not tell */
	size_t bars, cut; /* overlap bars drawn, and past TIMELINE_BARS_MAX */
	int redis; /* lanes of what Redis held (timeline-redis.dat), under the clients' */
};

static void timeline_window(struct timeline *tl)
{
	const struct lb_run_files *rf = tl->rf;

	tl->from = 0;
	tl->to = rf->n;
	if (rf->n <= TIMELINE_MAX)
		return;
	int64_t v = first_violation(rf);
	int64_t t0 = v > 500 * LB_NS_PER_MS ? v - 500 * LB_NS_PER_MS : 0;
	while (tl->from < rf->n && rf->sec[tl->from].enter_ns < t0)
		tl->from++;
	tl->to = tl->from + TIMELINE_MAX < rf->n ? tl->from + TIMELINE_MAX : rf->n;
	snprintf(tl->window, sizeof(tl->window), " (sections %zu-%zu of %zu)", tl->from + 1, tl->to,
		 rf->n);
}

/* Section @i's stretches shared with another client's section (of its
 * key), merged: one bar per stretch, however many others were inside in it.
 * @parts has room for every section. */
static void overlap_bars(struct timeline *tl, size_t i, int64_t exit, struct span *parts, FILE *o)
{
	const struct lb_run_files *rf = tl->rf;
	const struct lb_section *s = &rf->sec[i];
	size_t k = 0;

	for (size_t j = 0; j < rf->n; j++) {
		const struct lb_section *t = &rf->sec[j];
		if (j == i || t->key != s->key || t->client == s->client)
			continue;
		if (t->enter_ns >= exit)
			break; /* sorted by enter */
		int64_t texit = lb_section_exit(t, exit);
		int64_t a = s->enter_ns > t->enter_ns ? s->enter_ns : t->enter_ns;
		int64_t b = exit < texit ? exit : texit;
		if (b > a)
			parts[k++] = (struct span){ a, b };
	}
	if (k > 1)
		qsort(parts, k, sizeof(*parts), span_cmp);
	for (size_t x = 0; x < k;) {
		int64_t a = parts[x].from, b = parts[x].to;
		for (x++; x < k && parts[x].from <= b; x++)
			b = parts[x].to > b ? parts[x].to : b;
		if (tl->bars == TIMELINE_BARS_MAX) {
			tl->cut++;
			continue;
		}
		tl->bars++;
		fprintf(o, "%d %.6f %.6f\n", s->client, s_of(a), s_of(b - a));
	}
}

/* A section's marks (@m) and its release after the section (@r). */
static void section_marks(struct timeline *tl, const struct lb_section *s, int64_t exit, FILE *m,
			  FILE *r)
{
	/* only where the lock's own account says when its lease ended */
	if (lb_lease_known(s) && exit > s->lease_end_ns)
		fprintf(m, "%.6f %d 1\n", s_of(s->lease_end_ns), s->client);
	tl->unknown += !lb_lease_known(s) && s->lease_end_ns != LB_LEASE_NEVER;
	if (s->outcome == LB_OUT_KILLED)
		fprintf(m, "%.6f %d 2\n", s_of(exit), s->client);
	/* a release that takes longer than a millisecond (a partition, a slow
	 * node) holds the lock after the section: drawn, not idle */
	if (s->release_ns > exit + LB_NS_PER_MS)
		fprintf(r, "%d %.6f %.6f\n", s->client, s_of(exit), s_of(s->release_ns - exit));
	if (s->outcome == LB_OUT_FOREIGN && s->release_ns >= 0)
		fprintf(m, "%.6f %d 3\n", s_of(s->release_ns), s->client);
	if (s->outcome == LB_OUT_LOST && s->release_ns >= 0)
		fprintf(m, "%.6f %d 4\n", s_of(s->release_ns), s->client);
}

/* The leases a server ended while their holder was inside, from that end to
 * the holder's notice (to its exit when it was never told): "the notice's". */
static void notice_bars(const struct timeline *tl, FILE *f)
{
	const struct lb_run_files *rf = tl->rf;

	fprintf(f, "# client ended_s length_s (a server ended its lease; the holder not told yet)\n");
	for (size_t i = tl->from; rf->ended_ns && i < tl->to; i++) {
		if (rf->ended_ns[i] < 0)
			continue;
		int64_t until = rf->told_ns[i] >= 0 ? rf->told_ns[i] :
				lb_section_exit(&rf->sec[i], (int64_t)(rf->elapsed_s * 1e9));
		fprintf(f, "%d %.6f %.6f\n", rf->sec[i].client, s_of(rf->ended_ns[i]),
			s_of(until - rf->ended_ns[i]));
	}
}

/* The timeline's five data files: 0 or LB_ESYS. */
static int timeline_data(struct timeline *tl)
{
	const struct lb_run_files *rf = tl->rf;
	struct span *parts = malloc(sizeof(struct span) * (rf->n ? rf->n : 1));
	struct lb_outfile d = { 0 }, o = { 0 }, m = { 0 }, r = { 0 }, nb = { 0 };

	if (!parts || lb_outfile_open(&d, rf->dir, "timeline-sections.dat", true) < 0 ||
	    lb_outfile_open(&o, rf->dir, "timeline-overlaps.dat", true) < 0 ||
	    lb_outfile_open(&m, rf->dir, "timeline-marks.dat", true) < 0 ||
	    lb_outfile_open(&r, rf->dir, "timeline-releasing.dat", true) < 0 ||
	    lb_outfile_open(&nb, rf->dir, "timeline-notices.dat", true) < 0) {
		lb_outfile_close(&d);
		lb_outfile_close(&o);
		lb_outfile_close(&m);
		lb_outfile_close(&r);
		free(parts);
		return LB_ESYS;
	}
	fprintf(d.f, "# client enter_s length_s (one critical section)\n");
	fprintf(o.f, "# client from_s length_s (while another client was inside too)\n");
	fprintf(m.f, "# time_s client kind (1 lease expired, 2 killed, 3 foreign release, 4 lost, "
		     "5 a stale read or write refused, 6 a write aborted)\n");
	fprintf(r.f, "# client exit_s length_s (out of its section, its release not done: the lock "
		     "is still its own)\n");
	for (size_t i = tl->from; i < tl->to; i++) {
		const struct lb_section *s = &rf->sec[i];
		int64_t exit = lb_section_exit(s, (int64_t)(rf->elapsed_s * 1e9));
		fprintf(d.f, "%d %.6f %.6f\n", s->client, s_of(s->enter_ns), s_of(exit - s->enter_ns));
		overlap_bars(tl, i, exit, parts, o.f);
		section_marks(tl, s, exit, m.f, r.f);
	}
	/* what clients met, from events.csv: marks above their lane, not fault lines */
	for (size_t i = 0; i < rf->n_ev; i++)
		if (rf->ev[i].client >= 0 && (rf->ev[i].kind == LB_EV_REFUSED ||
					      rf->ev[i].kind == LB_EV_ABORT))
			fprintf(m.f, "%.6f %d %d\n", s_of(rf->ev[i].t_ns), rf->ev[i].client,
				rf->ev[i].kind == LB_EV_REFUSED ? 5 : 6);
	fprintf(m.f, "\n");
	notice_bars(tl, nb.f);
	free(parts);
	if (tl->cut) {
		size_t used = strlen(tl->window);
		snprintf(tl->window + used, sizeof(tl->window) - used, " (%zu overlap bars not drawn)",
			 tl->cut);
		lb_errorf("%s: the timeline draws at most %d overlap bars; %zu more are not drawn",
			  rf->dir, TIMELINE_BARS_MAX, tl->cut);
	}
	return lb_outfile_close(&d) | lb_outfile_close(&o) | lb_outfile_close(&m) |
	       lb_outfile_close(&r) | lb_outfile_close(&nb);
}

/* The title, the lanes, the line styles and the time axis; the axis's span
 * into *@lo_s and *@hi_s (the whole run, or the window's sections, which
 * gnuplot scales the axis to). */
static void timeline_axes(const struct timeline *tl, FILE *g, double *lo_s, double *hi_s)
{
	const struct lb_run_files *rf = tl->rf;
	char title[400], what[160], lane[40];

	lb_run_title(rf, what, sizeof(what));
	snprintf(title, sizeof(title), "%s: who was inside when (seconds since the start)%s", what,
		 tl->window);
	/* names are data: a gnuplot literal each (esc.h), never code */
	lb_esc_fprintf(g, LB_LANG_GNUPLOT, "# lockbench timeline: edit and re-render with `gnuplot "
		       "timeline.gp`\n"
		       /* no xlabel: gnuplot draws it over a key below the plot */
		       "set title %s\n"
		       "set yrange [%.1f:%d]\nset ytics (", title, -0.8 - 1.1 * tl->redis,
		       rf->clients);
	for (int c = 0; c < rf->clients; c++) {
		if (!rf->imp) {
			fprintf(g, "%s\"client %d\" %d", c ? ", " : "", c, c);
			continue;
		}
		lb_run_lane_label(rf, c, lane, sizeof(lane)); /* a client's name: data */
		fprintf(g, "%s", c ? ", " : "");
		lb_esc_fprintf(g, LB_LANG_GNUPLOT, "%s %d", lane, c);
	}
	for (int k = 0; k < tl->redis; k++) { /* what Redis held, a lane per server */
		if (tl->redis == 1)
			fprintf(g, ", \"Redis holds\" -1.1");
		else
			fprintf(g, ", \"Redis server %d\" %.1f", k + 1, -1.1 * (k + 1));
	}
	fprintf(g, ")\nset grid xtics lc rgb '#dddddd'\nset key outside below horizontal\n");
	/* the lane's Redis spans are in its client's colour: a square beside its name */
	if (tl->redis)
		fprintf(g, "set ytics offset -1.6,0\n");
	for (int c = 0; tl->redis && c < rf->clients && c < 64; c++)
		fprintf(g, "set object %d rect center graph -0.01, first %d size graph 0.008, first 0.3 "
			   "fc rgb '%s' fs solid 1.0 noborder\n", 100 + c, c, lb_client_colour(c));
	int lw = rf->clients > 24 ? 3 : rf->clients > 8 ? 5 : 9;
	fprintf(g, "set style line 1 lc rgb '" LB_COL_INSIDE "' lw %d\nset style line 2 lc rgb '"
		   LB_COL_OVERLAP "' lw %d\nset style line 3 lc rgb '" LB_COL_RELEASING "' lw %d\n",
		lw, lw, (lw + 1) / 2);
	/* The whole run, so that a stretch where nobody got in shows as empty. */
	double end_s = rf->elapsed_s;
	for (size_t i = 0; i < rf->n; i++)
		if (s_of(rf->sec[i].release_ns) > end_s)
			end_s = s_of(rf->sec[i].release_ns);
	if (!tl->window[0] && end_s > 0) /* a run under 1 ms still has an axis (%.3f: 0 is none) */
		fprintf(g, "set xrange [0:%.3f]\n", end_s < 0.001 ? 0.001 : end_s);
	*lo_s = 0;
	*hi_s = end_s;
	if (tl->window[0]) {
		*lo_s = *hi_s = s_of(rf->sec[tl->from].enter_ns);
		for (size_t i = tl->from; i < tl->to; i++)
			if (s_of(rf->sec[i].release_ns) > *hi_s)
				*hi_s = s_of(rf->sec[i].release_ns);
	}
}

/* Faults as dashed lines, each labelled at the top. A label stands beside
 * its line unless the one before it is nearer than a label's height and a
 * little (1.6 % of the axis, about 17 of the plot's 1090 pixels): then it
 * moves right until it clears it, so that faults at one instant (slow and
 * partition) or a Sentinel's sdown, odown and choice within 0.2 s stay
 * readable, each in the order it happened. */
static void timeline_faults(const struct lb_run_files *rf, FILE *g, double lo_s, double hi_s)
{
	double gap_s = (hi_s > lo_s ? hi_s - lo_s : 1) * 0.016, last_x = -1e9;

	for (size_t e = 0; e < rf->n_ev; e++) {
		const struct lb_event *ev = &rf->ev[e];
		char label[96];
		if (ev->kind == LB_EV_PRIMARY_SEEN)
			continue; /* drawn as the strip under the client's lane */
		if (ev->kind == LB_EV_SERVER_DOWN || ev->kind == LB_EV_SERVER_BACK)
			continue; /* one per client: in the step-through, not as lines */
		if (ev->kind == LB_EV_REFUSED || ev->kind == LB_EV_ABORT || ev->kind == LB_EV_LOST_NOTICE)
			continue; /* what a client met, not a fault: a mark on its lane (a notice:
				     where the orange bar of its lag ends) */
		double t = s_of(ev->t_ns), x = t > last_x + gap_s ? t : last_x + gap_s;
		event_label(ev, label, sizeof(label));
		last_x = x;
		fprintf(g, "set arrow from %.6f, graph 0 to %.6f, graph 1 nohead lc rgb '#777777' dt 2\n",
			t, t);
		lb_esc_fprintf(g, LB_LANG_GNUPLOT, "set label %s at %.6f, graph 0.98 rotate by 90 "
			       "right offset character 1.3,0 font ',8' tc rgb '#555555'\n", label, x);
	}
}

/* With --drain, the run's end as a line and the drain after it shaded: the
 * sections in it began with waits that were under way at the end. */
static void timeline_drain(const struct lb_run_files *rf, FILE *g)
{
	const char *drain = lb_summary_get(&rf->sum, "drain_s");
	const char *dur = lb_summary_get(&rf->sum, "duration_s");
	double d = drain && strcmp(drain, "n/a") ? strtod(drain, NULL) : 0;
	double end = dur ? strtod(dur, NULL) : 0;

	if (d <= 0 || end <= 0 || rf->elapsed_s <= end)
		return;
	fprintf(g, "set object rect from %.6f, graph 0 to %.6f, graph 1 behind "
		   "fc rgb '#eeeeee' fs solid noborder\n", end, rf->elapsed_s);
	fprintf(g, "set arrow from %.6f, graph 0 to %.6f, graph 1 nohead lc rgb '#333333' dt 3\n"
		   "set label 'run ends: drain' at %.6f, graph 0.98 rotate by 90 right "
		   "offset character 1.3,0 font ',8' tc rgb '#333333'\n", end, end, end);
}

/* What Redis held, under the clients: a bar per span in its owner's colour
 * (grey: no client's value; a dotted line: not known), hatched where the
 * key had no TTL, the owner written on it where it fits (its colour is not
 * the only cue). From timeline-redis.dat (lb_report_redis_dat). */
static void timeline_redis_defs(FILE *g, double span_s)
{
	fprintf(g, "client_rgb(o) = o < 0 ? 0x%s : ", &LB_COL_NO_OWNER[1]);
	for (int c = 0; c < LB_CLIENT_COLOURS - 1; c++)
		fprintf(g, "int(o) %% %d == %d ? 0x%06x : ", LB_CLIENT_COLOURS, c, lb_client_rgb(c));
	fprintf(g, "0x%06x\n", lb_client_rgb(LB_CLIENT_COLOURS - 1));
	/* a lane's y: -1.1 for the first server; its owner written on a span
	 * wider than 4 %% of the axis (about 45 of the plot's 1090 pixels), its
	 * TTL too on one wider than 14 %% */
	fprintf(g, "redis_y(l) = -1.1 * (l + 1)\nredis_label(w, o, t) = w < %.6f || o < 0 ? '' : "
		   "sprintf('c%%d%%s', int(o), w < %.6f ? '' : t eq '-1' ? ', no TTL' : t eq '?' ? '' : "
		   "', TTL '.t.' ms')\n", span_s * 0.04, span_s * 0.14);
}

/* Whether a span of timeline-redis.dat gets its owner written on it (one
 * of a client, @min_s long or more): gnuplot 5.4 crashes on boxed labels
 * with no point to draw, so none are plotted then. */
static bool redis_labels(const char *dir, double min_s)
{
	char path[PATH_MAX], line[160];
	bool any = false;

	snprintf(path, sizeof(path), "%.4000s/timeline-redis.dat", dir);
	FILE *f = fopen(path, "re");
	while (f && !any && fgets(line, sizeof(line), f)) {
		int lane, owner;
		double from, len;
		any = line[0] != '#' && sscanf(line, "%d %lf %lf %d", &lane, &from, &len, &owner) == 4 &&
		      owner >= 0 && len >= min_s;
	}
	if (f)
		fclose(f);
	return any;
}

static void timeline_redis(FILE *g, bool labels)
{
	fprintf(g, "     'timeline-redis.dat' using ($4 == -3 ? 1/0 : $2 + $3 / 2):(redis_y($1)):($3 / 2):(0.2):(client_rgb($4)) "
		   "with boxxyerror fs solid 1.0 noborder lc rgb variable notitle, \\\n"
		   "     '' using (strcol(5) eq '-1' ? $2 + $3 / 2 : 1/0):(redis_y($1)):($3 / 2):(0.2) "
		   "with boxxyerror fs transparent pattern 5 noborder lc rgb 'white' notitle, \\\n"
		   "     '' using ($4 == -3 ? $2 : 1/0):(redis_y($1)):3:(0) with vectors nohead lw 3 dt 3 "
		   "lc rgb '" LB_COL_NO_OWNER "' notitle, \\\n");
	if (labels)
		fprintf(g, "     '' using ($2 + $3 / 2):(redis_label($3, $4, strcol(5)) eq '' ? 1/0 : "
			   "redis_y($1)):(redis_label($3, $4, strcol(5))) with labels font ',9' tc rgb "
			   "'black' boxed notitle, \\\n");
}

/* The plot: the data carry no titles, the key is drawn from keyentry lines,
 * so it is the same for every run, whatever happened in it. Explicit point
 * sizes (ps) are not scaled by `set pointsize`: each is times the chart
 * scale here, so that markers grow with --chart-scale. */
static void timeline_plot(FILE *g, bool primaries, size_t unknown, int redis, double span_s,
			  const char *dir)
{
	double k = lb_chart_scale();

	if (redis)
		timeline_redis_defs(g, span_s);
	fprintf(g, "plot 'timeline-sections.dat' using 2:1:3:(0) with vectors nohead ls 1 notitle, \\\n"
		   "     'timeline-releasing.dat' using 2:1:3:(0) with vectors nohead ls 3 notitle, \\\n"
		   "     'timeline-overlaps.dat' using 2:1:3:(0) with vectors nohead ls 2 notitle, \\\n"
		   "     'timeline-notices.dat' using 2:($1-0.22):3:(0) with vectors nohead lw 3 lc rgb '" LB_COL_FOREIGN "' notitle, \\\n"
		   "     'timeline-marks.dat' using ($3==1?$1:1/0):2 with points pt 2 ps %.2f lc rgb 'black' notitle, \\\n"
		   "     '' using ($3==2?$1:1/0):2 with points pt 7 ps %.2f lc rgb '" LB_COL_KILLED "' notitle, \\\n"
		   "     '' using ($3==3?$1:1/0):2 with points pt 9 ps %.2f lc rgb '" LB_COL_FOREIGN "' notitle, \\\n"
		   "     '' using ($3==4?$1:1/0):2 with points pt 6 ps %.2f lc rgb '" LB_COL_LOST "' notitle, \\\n"
		   "     '' using ($3==5?$1:1/0):($2+0.35) with points pt 12 ps %.2f lc rgb '" LB_COL_OVERLAP "' notitle, \\\n"
		   "     '' using ($3==6?$1:1/0):($2+0.35) with points pt 4 ps %.2f lc rgb 'black' notitle, \\\n",
		1.4 * k, 1.3 * k, 1.5 * k, 1.2 * k, 1.4 * k, 1.2 * k);
	if (redis)
		timeline_redis(g, redis_labels(dir, span_s * 0.04));
	if (primaries) /* which server each client took for the primary */
		fprintf(g, "     'timeline-primary.dat' using 2:($4==0?$1-0.3:1/0):3:(0) with vectors nohead lw 4 lc rgb '#555555' notitle, \\\n"
			   "     '' using 2:($4==1?$1-0.3:1/0):3:(0) with vectors nohead lw 4 lc rgb '#aa3377' notitle, \\\n"
			   "     '' using 2:($4==2?$1-0.3:1/0):3:(0) with vectors nohead lw 4 lc rgb '#009988' notitle, \\\n"
			   "     keyentry with lines lw 4 lc rgb '#555555' title 'locks from: the first primary', \\\n"
			   "     keyentry with lines lw 4 lc rgb '#aa3377' title 'replica 0', \\\n"
			   "     keyentry with lines lw 4 lc rgb '#009988' title 'replica 1 / another', \\\n");
	if (redis)
		fprintf(g, "     keyentry with boxes fs solid 1.0 lc rgb '%s' title 'Redis holds the lock "
			   "key: its owner''s colour, cN on it', \\\n"
			   "     keyentry with boxes fs pattern 5 lc rgb '%s' title 'hatched: the key has "
			   "no TTL', \\\n"
			   "     keyentry with boxes fs solid 1.0 lc rgb '" LB_COL_NO_OWNER "' title "
			   "'grey: a value no client entered with', \\\n",
			lb_client_colour(0), lb_client_colour(0));
	fprintf(g, "     keyentry with lines ls 1 title 'inside', \\\n"
		   "     keyentry with lines ls 2 title 'two or more inside', \\\n"
		   "     keyentry with lines ls 3 title 'releasing (still holds the lock)', \\\n"
		   "     keyentry with lines lw 3 lc rgb '" LB_COL_FOREIGN "' title 'lease ended by the server, holder not told yet', \\\n"
		   "     keyentry with points pt 2 ps %.2f lc rgb 'black' title '%s', \\\n"
		   "     keyentry with points pt 7 ps %.2f lc rgb '" LB_COL_KILLED "' title 'killed', \\\n"
		   "     keyentry with points pt 9 ps %.2f lc rgb '" LB_COL_FOREIGN "' title 'deleted another client''s lock', \\\n"
		   "     keyentry with points pt 6 ps %.2f lc rgb '" LB_COL_LOST "' title 'release found the lock gone', \\\n"
		   "     keyentry with points pt 12 ps %.2f lc rgb '" LB_COL_OVERLAP "' title 'stale read/write refused', \\\n"
		   "     keyentry with points pt 4 ps %.2f lc rgb 'black' title 'write aborted'\n",
		1.4 * k, unknown ? "lease ran out inside (not drawn: unknown for this lock)" :
		"lease ran out while inside", 1.3 * k, 1.5 * k, 1.2 * k, 1.4 * k, 1.2 * k);
}

/* timeline-redis.dat: what Redis held (report_lane.c); its lanes, 0 when
 * there is none (not watched, several keys or nodes, an imported history),
 * or LB_ESYS. */
static int timeline_redis_data(const struct lb_run_files *rf)
{
	struct lb_outfile d;

	if (lb_outfile_open(&d, rf->dir, "timeline-redis.dat", true) < 0)
		return LB_ESYS;
	int lanes = lb_report_redis_dat(d.f, rf, rf->elapsed_s);
	if (lb_outfile_close(&d) < 0)
		return LB_ESYS;
	return lanes < 0 ? 0 : lanes; /* a lane that cannot be read is not drawn */
}

static int write_timeline(const struct lb_run_files *rf)
{
	struct timeline tl = { .rf = rf };
	struct lb_outfile gp = { 0 };
	double lo_s, hi_s;

	timeline_window(&tl);
	if (timeline_data(&tl) < 0 || (tl.redis = timeline_redis_data(rf)) < 0)
		return LB_ESYS;
	bool primaries = write_primaries(rf) > 0;
	if (lb_outfile_open(&gp, rf->dir, "timeline.gp", true) < 0)
		return LB_ESYS;
	timeline_axes(&tl, gp.f, &lo_s, &hi_s);
	timeline_faults(rf, gp.f, lo_s, hi_s);
	timeline_drain(rf, gp.f);
	/* a Redis lane adds its lane and a row to the key (grey: no client's value) */
	int h = 160 + 42 * (rf->clients < 40 ? rf->clients : 40) + 46 * tl.redis + (tl.redis ? 20 : 0);
	h = h < 300 ? 300 : h;
	lb_chart_png(gp.f, "timeline", 1200, h);
	timeline_plot(gp.f, primaries, tl.unknown, tl.redis, hi_s > lo_s ? hi_s - lo_s : 1, rf->dir);
	lb_chart_svg(gp.f, "timeline", 1200, h);
	return lb_outfile_close(&gp);
}

static int write_latency(const struct lb_run_files *rf)
{
	struct lb_outfile d, gp;
	uint64_t seen = 0, lo, hi;

	if (lb_outfile_open(&d, rf->dir, "latency-cdf.dat", true) < 0)
		return LB_ESYS;
	fprintf(d.f, "# acquire latency ms (bucket upper bound)  fraction of acquires at or below\n");
	for (size_t i = 0; i < LB_HIST_BUCKETS && rf->lat.n; i++) {
		if (!rf->lat.counts[i])
			continue;
		seen += rf->lat.counts[i];
		lb_hist_bucket_range(i, &lo, &hi);
		fprintf(d.f, "%.4f %.6f\n", (double)(hi > 0 ? hi : 1) / 1000.0,
			(double)seen / (double)rf->lat.n);
	}
	if (lb_outfile_close(&d) < 0 || lb_outfile_open(&gp, rf->dir, "latency.gp", true) < 0)
		return LB_ESYS;
	fprintf(gp.f, "set title 'acquire latency: fraction of acquires done within x'\n"
		    "set logscale x\nset xlabel 'milliseconds (log scale)'\nset ylabel 'fraction of acquires'\n"
		    "set yrange [0:1.02]\nset grid\nset key off\n");
	lb_chart_png(gp.f, "latency", 800, 420);
	if (rf->lat.n) {
		fprintf(gp.f, "plot 'latency-cdf.dat' using 1:2 with steps lw 2 lc rgb '" LB_COL_INSIDE "'\n");
	} else { /* nothing to draw, said on the chart: not an error, not a curve */
		fprintf(gp.f, "set xrange [0.01:1000]\nset label 1 'no acquire completed in this run' "
			      "at graph 0.5, 0.5 center\nplot 2 notitle\n");
	}
	lb_chart_svg(gp.f, "latency", 800, 420);
	return lb_outfile_close(&gp);
}

static int write_fairness(const struct lb_run_files *rf)
{
	struct lb_outfile d = { 0 }, gp;
	uint64_t *count = calloc((size_t)rf->clients, sizeof(*count));
	const char *jain = lb_summary_get(&rf->sum, "fairness");

	if (!count || lb_outfile_open(&d, rf->dir, "fairness.dat", true) < 0) {
		free(count);
		return count ? LB_ESYS : LB_ENOMEM;
	}
	for (size_t i = 0; i < rf->n; i++)
		if (rf->sec[i].client >= 0 && rf->sec[i].client < rf->clients)
			count[rf->sec[i].client]++;
	fprintf(d.f, "# client sections\n");
	for (int c = 0; c < rf->clients; c++)
		fprintf(d.f, "%d %llu\n", c, (unsigned long long)count[c]);
	free(count);
	if (lb_outfile_close(&d) < 0 || lb_outfile_open(&gp, rf->dir, "fairness.gp", true) < 0)
		return LB_ESYS;
	char title[160];
	snprintf(title, sizeof(title), "critical sections per client (Jain fairness %.40s)",
		 jain ? jain : "?");
	lb_esc_fprintf(gp.f, LB_LANG_GNUPLOT, "set title %s\n", title);
	fprintf(gp.f, "set xlabel 'client'\nset ylabel 'sections'\nset style fill solid 0.8\n"
		    "set boxwidth 0.7\nset yrange [0:*]\nset key off\nset grid ytics\n"
		    "set xrange [-0.5:%d.5]\nset xtics %s\n", /* only the clients there are */
		    rf->clients - 1, rf->clients <= 32 ? "1" : "autofreq");
	lb_chart_png(gp.f, "fairness", 800, 380);
	fprintf(gp.f, "plot 'fairness.dat' using 1:2 with boxes lc rgb '" LB_COL_INSIDE "'\n");
	lb_chart_svg(gp.f, "fairness", 800, 380);
	return lb_outfile_close(&gp);
}

int lb_charts_run(const struct lb_run_files *rf, bool *drawn, char *why, size_t len)
{
	static const char *const scripts[] = { "timeline.gp", "latency.gp", "fairness.gp" };
	int rc;

	*drawn = false;
	/* an imported history has no acquire calls: no latency to draw */
	if ((rc = write_timeline(rf)) < 0 || (!rf->imp && (rc = write_latency(rf)) < 0) ||
	    (rc = write_fairness(rf)) < 0)
		return rc;
	for (size_t i = 0; i < 3; i++) {
		if (rf->imp && i == 1)
			continue;
		rc = lb_gnuplot(rf->dir, scripts[i], why, len);
		if (rc == LB_ENOTSUP)
			return 0; /* no gnuplot: the report says so */
		if (rc < 0) {
			lb_errorf("%s: %s", rf->dir, why);
			return rc;
		}
	}
	*drawn = true;
	return 0;
}
