/*
 * report_html.c - report.html for a run: one self-contained page (no
 * network, no external script) a class can follow on a projector. The
 * run's sections, faults and story go in as data; a small script draws the
 * timeline as SVG and steps through the run: next/previous (buttons, the
 * arrow keys, n/p) move a cursor from one moment that matters to the next,
 * highlight the sentence that tells it, and say who held the lock then.
 * `#step=N` in the address opens it at step N.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "failpoint.h"
#include "import_dir.h"
#include "outfile.h"
#include "palette.h"
#include "report.h"
#include "shared.h"
#include "verify.h"

/* @s as a JSON string (esc.h: '<' escaped too, so that no text can close the
 * script element; invalid UTF-8 as U+FFFD). */
static void json_str(FILE *f, const char *s)
{
	lb_esc_fprintf(f, LB_LANG_JSON, "%s", s);
}

/* @s as HTML text. */
/* Text or a quoted attribute value: & < > " ' as entities (esc.h). */
static void html_text(FILE *f, const char *s)
{
	lb_esc_fprintf(f, LB_LANG_HTML, "%s", s);
}

/* A link of a report.md: a path of the results directory (relative, no
 * scheme such as javascript:, not //host), or nothing. A report.md may come
 * from anyone: its links are data until they pass. */
static bool safe_link(const char *link)
{
	size_t scheme = strcspn(link, ":/?#");
	return link[0] && link[0] != '/' && link[scheme] != ':' && !strchr(link, '\\') &&
	       strspn(link, "\t\n\r ") == 0;
}

/* What a fault on a deployment did (faults_deploy.c), as a sentence; false
 * when @e is not one. */
static bool deploy_sentence(const struct lb_event *e, const char *who, char *out, size_t len)
{
	switch (e->kind) {
	case LB_EV_HOOK:
		snprintf(out, len, "%s%s%s your command runs (--hook; its output is in the run's "
			 "hook-*.log).", e->node >= 0 ? "For node " : "A hook: ", who[0] ? who + 5 : "",
			 e->node >= 0 ? "," : "");
		return true;
	case LB_EV_HOOK_END:
		if (e->value < 0)
			snprintf(out, len, "The hook%s%s did not finish by its deadline: it was killed.",
				 e->node >= 0 ? " for " : "", e->node >= 0 ? who : "");
		else
			snprintf(out, len, "The hook%s%s ended with exit status %lld.",
				 e->node >= 0 ? " for " : "", e->node >= 0 ? who : "",
				 (long long)e->value);
		return true;
	case LB_EV_SENTINEL_FAILOVER:
		snprintf(out, len, e->value == 0 ? "A Sentinel is told to fail the primary over now "
			 "(SENTINEL FAILOVER): it promotes a replica without waiting for the primary "
			 "to fail." : "SENTINEL FAILOVER was refused by every Sentinel (the run's "
			 "output says why): no failover was started.");
		return true;
	case LB_EV_CLUSTER_FAILOVER:
		snprintf(out, len, e->value == 0 ? "A replica of the lock's primary is told to take "
			 "over (CLUSTER FAILOVER): with its primary's agreement it is promoted, and "
			 "the slot moves to it." : "CLUSTER FAILOVER was refused by every replica of "
			 "the lock's primary (the run's output says why): nothing moved.");
		return true;
	case LB_EV_FAILOVER_END:
		snprintf(out, len, "The Sentinels' failover of %s is over (+failover-end): the "
			 "replicas are told of the new primary.", lb_topo_part_phrase((int)e->value));
		return true;
	case LB_EV_SERVER_DOWN:
		snprintf(out, len, "Client %d's acquire finds no server that takes its lock (refused, "
			 "no answer, or not a primary): until it finds one, every attempt fails.",
			 e->client);
		return true;
	case LB_EV_SERVER_BACK:
		snprintf(out, len, "Client %d reaches a server that answers its acquire again.",
			 e->client);
		return true;
	case LB_EV_CLIENT_KILL:
		snprintf(out, len, "Client %d's connections are closed by the server (CLIENT KILL "
			 "ADDR, %lld of them), as a proxy or a network blip would.", e->client,
			 (long long)e->value);
		return true;
	default:
		return false;
	}
}

/* Client @c's section open at @t (entered, not yet left), or NULL; whether it
 * had any section before @t (@before). */
static const struct lb_section *inside_at(const struct lb_run_files *rf, int c, int64_t t,
					  bool *before)
{
	const struct lb_section *in = NULL;
	*before = false;
	for (size_t i = 0; i < rf->n && rf->sec[i].enter_ns <= t; i++)
		if (rf->sec[i].client == c) {
			*before = true;
			if (lb_section_exit(&rf->sec[i], (int64_t)(rf->elapsed_s * 1e9)) >= t)
				in = &rf->sec[i];
		}
	return in;
}

/* A client fault told with what the client was doing: holding the lock,
 * waiting for it, or not started yet (scaffolding, told as set-up). */
static bool client_sentence(const struct lb_run_files *rf, const struct lb_event *e, char *out,
			    size_t len)
{
	bool before = false;
	const struct lb_section *in = e->client >= 0 ? inside_at(rf, e->client, e->t_ns, &before)
						     : NULL;
	const char *fp = lb_failpoint_name((int)(e->value < 0 ? -e->value : e->value));
	const char *where = lb_failpoint_where((int)(e->value < 0 ? -e->value : e->value));

	switch (e->kind) {
	case LB_EV_PAUSE:
		if (in)
			snprintf(out, len, "Client %d is frozen (SIGSTOP) for %lld ms while it holds the "
				 "lock (since %.3f s), as in a long GC pause.", e->client,
				 (long long)e->value, (double)in->enter_ns / 1e9);
		else if (!before)
			snprintf(out, len, "Set-up: client %d is held back (SIGSTOP) for %lld ms before "
				 "its first section, so that it starts late.", e->client,
				 (long long)e->value);
		else
			snprintf(out, len, "Client %d is frozen (SIGSTOP) for %lld ms while it does not "
				 "hold the lock.", e->client, (long long)e->value);
		return true;
	case LB_EV_RESUME:
		snprintf(out, len, "Client %d wakes up (SIGCONT) and carries on where it stopped%s.",
			 e->client, in ? ", inside its section: it still believes it holds the lock" : "");
		return true;
	case LB_EV_KILL:
		if (e->value < 0 && fp)
			snprintf(out, len, "Client %d is killed (SIGKILL) right after acquiring: this "
				 "lock has no instant %s (failpoint %s), so the scenario kills the holder "
				 "there instead.", e->client, where, fp);
		else
			snprintf(out, len, "Client %d is killed (SIGKILL)%s.", e->client,
				 in ? " while it holds the lock" : "");
		return true;
	case LB_EV_CRASH:
		if (fp && !strcmp(fp, "after-setnx"))
			snprintf(out, len, "Client %d crashed %s (failpoint %s): its key has no TTL, so "
				 "it will not expire by itself.", e->client, where, fp);
		else if (fp)
			snprintf(out, len, "Client %d crashed %s (failpoint %s).", e->client, where, fp);
		else
			snprintf(out, len, "Client %d crashed at a failpoint.", e->client);
		return true;
	case LB_EV_SLEEP: {
		/* its wake names the failpoint it stalls at (known when it stalls) */
		int code = 0;
		for (size_t i = 0; i < rf->n_ev; i++)
			if (rf->ev[i].kind == LB_EV_WAKE && rf->ev[i].client == e->client &&
			    rf->ev[i].t_ns >= e->t_ns) {
				code = (int)rf->ev[i].value;
				break;
			}
		if (lb_failpoint_where(code))
			snprintf(out, len, "Client %d stalls for %lld ms %s (failpoint %s).", e->client,
				 (long long)e->value, lb_failpoint_where(code), lb_failpoint_name(code));
		else
			snprintf(out, len, "Client %d stalls for %lld ms at a failpoint.", e->client,
				 (long long)e->value);
		return true;
	}
	case LB_EV_WAKE:
		snprintf(out, len, "Client %d goes on from where it stalled%s.", e->client,
			 lb_failpoint_name((int)e->value) ? ", and sends its next command" : "");
		return true;
	case LB_EV_ABORT:
		snprintf(out, len, "Client %d learns its lease is gone and aborts its section "
			 "before writing: its write never reaches the resource.", e->client);
		return true;
	case LB_EV_REFUSED:
		snprintf(out, len, "The fenced resource refuses client %d's %s: its fence is "
			 "below the highest the resource has accepted, so the stale %s does no harm.",
			 e->client, e->value ? "write" : "read", e->value ? "write" : "read");
		return true;
	default:
		return false;
	}
}

/* Was replication to node @node's replica cut before @t? */
static bool repl_cut_before(const struct lb_run_files *rf, int node, int64_t t)
{
	for (size_t i = 0; i < rf->n_ev; i++)
		if (rf->ev[i].kind == LB_EV_REPL_CUT && rf->ev[i].node == node && rf->ev[i].t_ns <= t)
			return true;
	return false;
}

/* What a fault on a lock node did, as a sentence; false when @e is not one. */
static bool node_sentence(const struct lb_run_files *rf, const struct lb_event *e, char *out,
			  size_t len)
{
	switch (e->kind) {
	case LB_EV_NODE_KILL:
		snprintf(out, len, "Node %d is killed.", e->node);
		return true;
	case LB_EV_NODE_START:
		snprintf(out, len, "Node %d comes back, empty: it has forgotten every lock.", e->node);
		return true;
	case LB_EV_NODE_CLOCK:
		if (e->value > 0)
			snprintf(out, len, "Node %d's clock jumps %lld ms forward: every TTL on it runs out "
				 "that much sooner.", e->node, (long long)e->value);
		else if (e->value < 0)
			snprintf(out, len, "Node %d's clock jumps %lld ms back: every TTL on it lasts that "
				 "much longer.", e->node, -(long long)e->value);
		else
			snprintf(out, len, "Node %d's clock is true again.", e->node);
		return true;
	case LB_EV_REPL_CUT:
		snprintf(out, len, "Replication from node %d to its replica is cut: what node %d "
			 "accepts from now on never reaches the replica.", e->node, e->node);
		return true;
	case LB_EV_PROMOTE:
		if (repl_cut_before(rf, e->node, e->t_ns))
			snprintf(out, len, "Node %d's replica is promoted to primary: it never received "
				 "what node %d accepted after the cut, and clients now take their locks "
				 "from it.", e->node, e->node);
		else
			snprintf(out, len, "Node %d's replica is promoted to primary: clients now take "
				 "their locks from it.", e->node);
		return true;
	default:
		return false;
	}
}

/* What a fault did, as a sentence for the step-through. */
static void event_sentence(const struct lb_run_files *rf, const struct lb_event *e, char *out,
			   size_t len)
{
	char who[64] = "";

	if (e->client >= 0)
		snprintf(who, sizeof(who), "client %d", e->client);
	else if (e->node >= 0)
		snprintf(who, sizeof(who), "node %d", e->node);
	if (client_sentence(rf, e, out, len) || node_sentence(rf, e, out, len))
		return;
	switch (e->kind) {
	case LB_EV_SLOW:
		snprintf(out, len, "Client %d's next section is slowed to %lld ms.", e->client,
			 (long long)e->value);
		break;
	case LB_EV_SDOWN:
		snprintf(out, len, "A Sentinel finds %s not answering (+sdown).",
			 e->value == LB_PART_PRIMARY ? "the primary" : lb_topo_part_phrase((int)e->value));
		break;
	case LB_EV_ODOWN:
		snprintf(out, len, "The Sentinels agree the primary is down (+odown): a failover "
			 "starts.");
		break;
	case LB_EV_SWITCH_MASTER:
		if (e->value >= LB_CLUSTER_PART0 && e->value < LB_PART_PORT0)
			snprintf(out, len, "The cluster's view changes: %s now serves the lock's slot "
				 "(a replica's failover, voted by a majority of primaries): CLUSTER SLOTS "
				 "and MOVED send clients there.", lb_topo_part_phrase((int)e->value));
		else
			snprintf(out, len, "The Sentinels announce a new primary, %s "
				 "(+switch-master): clients that ask them now go there.",
				 lb_topo_part_phrase((int)e->value));
		break;
	case LB_EV_NODE_FAILED:
		snprintf(out, len, "The cluster agrees %s is down (its FAIL flag, set once a "
			 "majority of primaries reported it unreachable for cluster-node-timeout).",
			 lb_topo_part_phrase((int)e->value));
		break;
	case LB_EV_CLUSTER_DOWN:
		snprintf(out, len, "%s says the cluster is down (cluster_state:fail): it cannot "
			 "reach a majority of primaries, or a slot has no primary, and refuses "
			 "every command on keys (CLUSTERDOWN) until that changes.",
			 lb_topo_part_phrase((int)e->value));
		break;
	case LB_EV_FAILOVER_CHOSEN:
		snprintf(out, len, "The Sentinel elected to lead the failover picks %s to promote "
			 "(+selected-slave): from here the failover goes on even if the old primary "
			 "answers again.", lb_topo_part_phrase((int)e->value));
		break;
	case LB_EV_DEMOTE:
		snprintf(out, len, "The Sentinels tell %s, back in reach and still a primary, to "
			 "become a replica of the new one (+convert-to-slave): it drops every key it "
			 "accepted since the failover.", lb_topo_part_phrase((int)e->value));
		break;
	case LB_EV_NET_SPLIT:
		snprintf(out, len, "The network splits in two (the scenario's sides): every link "
			 "between them is held, nothing passes either way, and neither side is told.");
		break;
	case LB_EV_NET_MEND:
		snprintf(out, len, "The partition heals: what was held back is delivered, late.");
		break;
	case LB_EV_PRIMARY_SEEN:
		snprintf(out, len, "Client %d now takes its locks from %s: the server the %s",
			 e->client, lb_topo_part_phrase((int)e->value),
			 e->value >= LB_CLUSTER_PART0 && e->value < LB_PART_PORT0 ?
			 "cluster named for the lock's slot (CLUSTER SLOTS, or a MOVED reply)." :
			 "Sentinels named, and ROLE confirmed, as the primary.");
		break;
	case LB_EV_PARTITION: {
		int n = snprintf(out, len, "Client %d is cut off from node", e->client);
		const char *sep = "s ";
		int count = 0;
		for (int b = 0; b < 63; b++)
			count += (e->value >> b) & 1;
		if (count == 1)
			sep = " ";
		for (int b = 0; b < 63 && (size_t)n < len; b++)
			if ((e->value >> b) & 1) {
				n += snprintf(out + n, len - (size_t)n, "%s%d", sep, b);
				sep = ", ";
			}
		if ((size_t)n < len)
			snprintf(out + n, len - (size_t)n, ".");
		break;
	}
	default:
		if (deploy_sentence(e, who, out, len))
			break;
		snprintf(out, len, "%s%s%s%s.", lb_event_name(e->kind), who[0] ? " (" : "", who,
			 who[0] ? ")" : "");
		break;
	}
}

struct steps {
	FILE *f;
	int n;
	int64_t *t; /* each step's time (a large run keeps the sections around it) */
	size_t nt, cap;
};

/* One story item as a step: markdown's "- **...**" becomes <b>...</b>. */
static void story_step(void *arg, int64_t t_ns, const char *text)
{
	struct steps *st = arg;
	char buf[4096];
	size_t o = 0;
	bool bold = false;

	if (!strncmp(text, "- ", 2))
		text += 2;
	for (const char *s = text; *s && o + 8 < sizeof(buf); s++) {
		if (s[0] == '*' && s[1] == '*') {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, bold ? "</b>" : "<b>");
			bold = !bold;
			s++;
		} else if (*s != '\n') {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	if (st->nt == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		int64_t *nt = realloc(st->t, sizeof(*nt) * cap);
		if (nt)
			st->t = nt, st->cap = cap;
	}
	if (st->nt < st->cap)
		st->t[st->nt++] = t_ns;
	fprintf(st->f, "%s[%.6f,\"story\",", st->n++ ? ",\n" : "", (double)t_ns / 1e9);
	json_str(st->f, buf); /* markup inside is ours: <b> only, restored by the page */
	fprintf(st->f, "]");
}

/* How many incidents of a run become steps: a tour's deck tells fewer, so
 * that a class can step through a lesson (lb_report_html_deck). */
static int story_max = 1000;

/* The step that says how many incidents were not told, at the run's end. */
static void story_more(struct steps *st, int more, double end_s)
{
	char text[256];
	snprintf(text, sizeof(text), "**%.3f s: and %d more incident%s in this run**, not told "
		 "step by step: the timeline shows them all (red, orange), history.csv holds them.",
		 end_s, more, more == 1 ? "" : "s");
	story_step(st, (int64_t)(end_s * 1e9), text);
}

static const char page_css[] =
	"body{font:20px/1.45 'DejaVu Sans',sans-serif;margin:24px 32px;color:#222;background:#fff}"
	"svg.legend{max-width:880px;display:block;margin:6px 0}"
	"h1{font-size:30px;margin:0 0 6px}p.lead{margin:0 0 12px;color:#444}"
	"#pin{background:#fff;z-index:2}#pin.pinned{position:sticky;top:0;border-bottom:1px solid #ddd}"
	"#held.cols{columns:2;column-gap:32px;font-size:16px}"
	"#now{background:#fff3c4;border:2px solid #e0b000;border-radius:6px;padding:6px 12px;margin:4px 0}"
	"#now .run{display:inline-block;font-weight:bold;color:#335;margin-right:8px}"
	"#pin.pinned #now{display:none}"
	"#bar{background:#fff;padding:8px 0;display:flex;gap:16px;"
	"align-items:center;border-bottom:1px solid #ddd}"
	"button{font-size:20px;padding:6px 16px}#pos{min-width:10em}"
	"#tl{width:100%;height:auto;display:block;margin:10px 0}"
	"#who{border:1px solid #ccc;border-radius:6px;padding:8px 14px;margin:8px 0;"
	"background:#fafafa}#who h2{font-size:22px;margin:0 0 4px}#who ul{margin:0;padding-left:22px}"
	"#story li{margin:6px 0;padding:4px 8px;border-radius:4px}"
	"#story li.fault{color:#555}#story li.current{background:#fff3c4;outline:2px solid #e0b000}"
	"#story .run{display:inline-block;min-width:8em;font-weight:bold;color:#335;margin-right:8px}"
	"table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:2px 10px;"
	"text-align:left}.keys{color:#666;font-size:16px}";

/* Presenter mode (key f, #present): the bar, the timeline and the step's
 * sentence, large, one step per screen; #slides: every step a printed page
 * (lockbench report --slides prints them with Chromium). */
static const char present_css[] =
	"#bar{flex-wrap:wrap}#bar button{white-space:nowrap}"
	"body.present{margin:10px 20px}body.present>*:not(#pin):not(#slides){display:none}"
	"body.present #pin{position:static;border:0}body.present #who{display:none}"
	"body.present #now,body.present #pin.pinned #now{display:block;font-size:34px;line-height:1.3}"
	"body.present #tl{max-height:55vh}body.present button{font-size:24px}"
	"body.slides{margin:0}body.slides #pin{display:none}#slides section{width:1600px;height:1000px;box-sizing:border-box;"
	"padding:20px 32px;overflow:hidden;break-after:page}#slides svg{width:100%;height:auto;"
	"max-height:600px;display:block}#slides .now{font-size:32px;line-height:1.3;background:#fff3c4;"
	"border:2px solid #e0b000;border-radius:6px;padding:6px 12px}.slide-pos{color:#555;margin:0}"
	"@page{size:1600px 1000px;margin:0}";

/* --chart-scale: the page's type grows with the charts (the timeline's
 * marks and type grow in the script, from the data's "scale"). */
static void scale_css(FILE *f)
{
	double s = lb_chart_scale();
	if (s == 1.0)
		return;
	fprintf(f, "body{font-size:%.0fpx}h1{font-size:%.0fpx}button{font-size:%.0fpx}"
		   "#who h2{font-size:%.0fpx}.keys,#held.cols{font-size:%.0fpx}",
		20 * s, 30 * s, 20 * s, 22 * s, 16 * s);
}

/* The page's script: builds the story list, draws the timelines from the
 * data (one block of lanes per run, every block on one time axis) and
 * steps through them. */
/* The page's script, harness/report/report.js, as a C string (harness/embed.sh). */
#include "report_js.h"

/* Events that are not faults but what a client met: a write aborted on a
 * lost lease, a read or write the fenced resource refused. */
static bool incident(const struct lb_event *e)
{
	return e->kind == LB_EV_ABORT || e->kind == LB_EV_REFUSED;
}

#define INCIDENT_STEPS_MAX 60 /* then one step says how many more: a page a class can follow */
#define MARKS_MAX 5000        /* marks drawn; a hostile events.csv may hold millions */

/* Each incident as a step of its own, in bold like the story's (runs of the
 * same client's, one step; at most INCIDENT_STEPS_MAX). */
static void incident_steps(const struct lb_run_files *rf, struct steps *st)
{
	char line[512], text[700];
	int told = 0;
	for (size_t i = 0; i < rf->n_ev; i++) {
		const struct lb_event *e = &rf->ev[i];
		if (!incident(e))
			continue;
		/* the same client meeting the same again and again, nothing else
		 * between: one step */
		size_t j = i, same = 1;
		for (size_t k = i + 1; k < rf->n_ev; k++) {
			const struct lb_event *o = &rf->ev[k];
			if (o->kind != e->kind || o->client != e->client || o->value != e->value)
				break;
			j = k;
			same++;
		}
		event_sentence(rf, e, line, sizeof(line));
		int n = snprintf(text, sizeof(text), "**%.3f s: %s** %s", (double)e->t_ns / 1e9,
				 e->kind == LB_EV_ABORT ? "a write aborted." : e->value ?
				 "a stale write refused." : "a stale read refused.", line);
		if (same > 1 && n > 0 && (size_t)n < sizeof(text))
			snprintf(text + n, sizeof(text) - (size_t)n, " Refused %zu times in a row, until "
				 "%.3f s.", same, (double)rf->ev[j].t_ns / 1e9);
		if (told++ == INCIDENT_STEPS_MAX) {
			size_t more = 0;
			for (size_t k = i; k < rf->n_ev; k++)
				more += incident(&rf->ev[k]);
			snprintf(text, sizeof(text), "**%.3f s: and %zu more refused or aborted reads and "
				 "writes** from here on, each marked on the timeline.", (double)e->t_ns / 1e9,
				 more);
			story_step(st, e->t_ns, text);
			return;
		}
		story_step(st, e->t_ns, text);
		i = j;
	}
}

/* A section as JSON (run_json says what each field is). */
static void section_json(FILE *f, const struct lb_run_files *rf, const struct lb_section *s,
			 bool first)
{
	int64_t exit = lb_section_exit(s, (int64_t)(rf->elapsed_s * 1e9));
	int64_t rel = s->release_ns > exit ? s->release_ns : exit;
	fprintf(f, "%s[%d,%.6f,%.6f,%.6f,\"%s\",%d,%u,", first ? "" : ",", s->client,
		(double)s->enter_ns / 1e9, (double)exit / 1e9, (double)rel / 1e9,
		lb_outcome_name(s->outcome), s->key, (unsigned)s->nodes);
	if (lb_lease_known(s))
		fprintf(f, "%.6f]", (double)s->lease_end_ns / 1e9);
	else
		fprintf(f, "null]");
}

/* A run's sections, after its "sec":[ : every one, or for a large run
 * (lb_report_stretched) those kept one by one and then its stretches
 * ("agg", report_stretch.c) around the steps @st and the faults. */
static void sections_json(FILE *f, const struct lb_run_files *rf, const struct steps *st)
{
	size_t nt = st->nt + rf->n_ev;
	int64_t *t = lb_report_stretched(rf) ? malloc(sizeof(*t) * (nt ? nt : 1)) : NULL;
	bool *keep = t ? calloc(rf->n, sizeof(*keep)) : NULL;
	char *agg = NULL;
	size_t agg_len = 0, k = 0;
	FILE *af = keep ? open_memstream(&agg, &agg_len) : NULL;

	if (af) {
		memcpy(t, st->t, sizeof(*t) * st->nt);
		for (size_t i = 0; i < rf->n_ev; i++)
			t[st->nt + i] = rf->ev[i].t_ns;
		if (lb_report_stretch_json(af, rf, t, nt, keep) < 0)
			agg_len = 0;
		fclose(af);
	}
	for (size_t i = 0; i < rf->n; i++)
		if (!agg_len || keep[i])
			section_json(f, rf, &rf->sec[i], k++ == 0);
	fprintf(f, "]%s", agg_len ? agg : "");
	free(agg), free(keep), free(t);
}

/* One run as a JSON object: sections [client, enter, exit, release,
 * outcome, key, nodes, lease end (null: none, or not known)], faults [t, name, client, node, sentence], steps
 * [t, kind, text]; @label names it on a page of several. redis: what the
 * lock's servers held (lb_report_redis_lane), or null. */
static void run_json(FILE *f, const struct lb_run_files *rf, const char *label)
{
	char line[512];
	double end_s = rf->elapsed_s; /* the whole run, and any release after it */

	for (size_t i = 0; i < rf->n; i++)
		if ((double)rf->sec[i].release_ns / 1e9 > end_s)
			end_s = (double)rf->sec[i].release_ns / 1e9;
	const char *nodes = lb_summary_get(&rf->sum, "nodes");
	fprintf(f, "{\"label\":");
	json_str(f, label);
	if (rf->imp) { /* an imported history: its lanes by name */
		fprintf(f, ",\"names\":[");
		for (int c = 0; c < rf->clients; c++) {
			lb_run_lane_label(rf, c, line, 40);
			fprintf(f, "%s", c ? "," : "");
			json_str(f, line);
		}
		fprintf(f, "]");
	}
	const char *observed = lb_summary_get(&rf->sum, "observed");
	if (observed) { /* its class, named on a compare page's block */
		fprintf(f, ",\"observed\":");
		json_str(f, observed);
	}
	fprintf(f, ",\"clients\":%d,\"ttl\":%.3f,\"end\":%.6f,\"nodes\":%d,\n\"sec\":[", rf->clients,
		(double)rf->ttl_ms / 1000, end_s, nodes ? atoi(nodes) : 1);
	/* the story first: a large run keeps the sections around its steps */
	char *story = NULL;
	size_t story_len = 0;
	FILE *sf = open_memstream(&story, &story_len);
	struct steps steps = { sf, 0, NULL, 0, 0 };
	if (sf) {
		/* an imported history: first its overlaps with the clocks' uncertainty */
		lb_report_imported_story(rf, LB_LANG_RAW, 1000, story_step, &steps);
		int found = lb_report_story(rf, story_max, story_step, &steps);
		if (found > story_max) /* a tour's deck: the rest on the timeline */
			story_more(&steps, found - story_max, rf->elapsed_s);
		incident_steps(rf, &steps);
		lb_report_redis_steps(rf, story_step, &steps);
		fclose(sf);
	}
	sections_json(f, rf, &steps);
	free(steps.t);
	fprintf(f, ",\n\"faults\":[");
	int nf = 0, nm = 0;
	for (size_t i = 0; i < rf->n_ev; i++) {
		const struct lb_event *e = &rf->ev[i];
		if (incident(e) || e->kind == LB_EV_LOST_NOTICE) /* a notice: its lag's bar */
			continue;
		event_sentence(rf, e, line, sizeof(line));
		fprintf(f, "%s[%.6f,\"%s\",%d,%d,", nf++ ? "," : "", (double)e->t_ns / 1e9,
			lb_event_name(e->kind), e->client, e->node);
		json_str(f, line);
		fprintf(f, "]");
	}
	/* what the lock's users met, marked on their lane: not faults */
	fprintf(f, "],\n\"marks\":[");
	for (size_t i = 0; i < rf->n_ev && nm < MARKS_MAX; i++)
		if (incident(&rf->ev[i]))
			fprintf(f, "%s[%.6f,\"%s\",%d,%lld]", nm++ ? "," : "",
				(double)rf->ev[i].t_ns / 1e9, lb_event_name(rf->ev[i].kind),
				rf->ev[i].client, (long long)rf->ev[i].value);
	/* the leases the servers ended inside: [client, ended, told (null: never), exit] */
	fprintf(f, "],\n\"lags\":[");
	for (size_t i = 0, k = 0; rf->ended_ns && i < rf->n && k < MARKS_MAX; i++) {
		if (rf->ended_ns[i] < 0)
			continue;
		fprintf(f, "%s[%d,%.6f,", k++ ? "," : "", rf->sec[i].client, (double)rf->ended_ns[i] / 1e9);
		if (rf->told_ns[i] >= 0)
			fprintf(f, "%.6f,", (double)rf->told_ns[i] / 1e9);
		else
			fprintf(f, "null,");
		fprintf(f, "%.6f]", (double)lb_section_exit(&rf->sec[i], (int64_t)(rf->elapsed_s * 1e9)) / 1e9);
	}
	/* the incidents (the page merges them with the faults in time order) */
	fprintf(f, "],\n\"steps\":[%s],\n\"redis\":", story ? story : "");
	free(story);
	if (lb_report_redis_lane(f, rf, end_s) < 0)
		fprintf(f, "null");
	fprintf(f, "}");
}

static void page_head(FILE *f, const char *title, const char *extra_css)
{
	fprintf(f, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width\">\n<title>");
	html_text(f, title);
	fprintf(f, "</title>\n<style>%s%s%s", page_css, extra_css, present_css);
	scale_css(f);
	fprintf(f, "</style></head><body>\n<h1>");
	html_text(f, title);
	fprintf(f, "</h1>\n");
}

/* The step-through: buttons, the timeline and who holds what (kept on
 * screen while the story scrolls, when they leave room for it), the
 * timeline's key, the story. */
static void stepper(FILE *f, bool several)
{
	fprintf(f, "<div id=\"pin\"><div id=\"bar\"><button id=\"prev\">&#9664; previous</button>"
		   "<span id=\"pos\"></span><button id=\"next\">next &#9654;</button>"
		   "<button id=\"zoom\" title=\"key z\">zoom</button><button id=\"present\" "
		   "title=\"key f\">presenter</button>"
		   "<span class=\"keys\">keys: &larr; &rarr; or p, n; z zoom; f presenter</span></div>\n"
		   "<svg id=\"tl\" role=\"img\" aria-label=\"timeline: who was inside when\"></svg>\n"
		   "<div id=\"now\"></div>\n<div id=\"who\"><h2>At <span id=\"t\">0.000</span> s: <span id=\"inside\">0</span> "
		   "inside<span id=\"inrun\"></span></h2><ul id=\"held\"></ul></div></div>\n"
		   "<p class=\"keys\">%sBlue: inside its critical section. Red: two or more inside at once. "
		   "Pale: out of its section, still releasing. &times;: the lease ran out while inside (where the lock says when its lease ends). "
		   "Orange triangle: a release that deleted another client's lock. Black dot: killed. "
		   "Red ring with a bar: a stale read or write the fenced resource refused. Hollow "
		   "square: a write aborted because the lock said its lease was gone. "
		   "Orange bar under a lane: a lease a server ended while its holder was inside, up to "
		   "the moment its lock told it (to its exit when never told; point at it for the lag). "
		   "Dashed: a fault. Yellow: the step shown. For Redlock, the lanes under the "
		   "clients show each lock node: whose lock it holds, in that client's colour "
		   "(the square beside its name); dashed where a node restarted empty and forgot "
		   "it.</p>\n"
		   "<h2>What happened, in order</h2>\n<ol id=\"story\"></ol>\n",
		several ? "One block of lanes per strategy, in the order given, all on one time axis: "
			  "the same moment is at the same place in every block. " : "");
}

/* The lead of an imported history's page. */
static void imported_lead(FILE *f, const struct lb_run_files *rf)
{
	const char *observed = lb_summary_get(&rf->sum, "observed");
	const struct lb_import *imp = rf->imp;

	fprintf(f, "<p class=\"lead\">%zu critical sections of %d client%s on %d lock%s over %.3f s, "
		   "as each client's own clock stamped them. Overlaps: <b>%zu certain</b>, %zu "
		   "possible within the clocks' uncertainty. Observed: <b>", imp->n, imp->clients.n,
		imp->clients.n == 1 ? "" : "s", imp->keys.n, imp->keys.n == 1 ? "" : "s",
		rf->elapsed_s, rf->uj->certain, rf->uj->possible);
	html_text(f, observed ? observed : "?");
	fprintf(f, "</b>. Each lane is a client on a lock (report.md has the table); the story "
		   "tells each overlap with the clocks' uncertainty first, then what the stamps "
		   "alone show.</p>\n");
}

int lb_report_html(const struct lb_run_files *rf)
{
	struct lb_outfile out;
	const char *st = lb_summary_get(&rf->sum, "strategy");
	const char *observed = lb_summary_get(&rf->sum, "observed");
	char title[256];

	if (lb_outfile_open(&out, rf->dir, "report.html", true) < 0)
		return LB_ESYS;
	FILE *f = out.f;
	lb_run_title(rf, title, sizeof(title));
	page_head(f, title, "");
	if (rf->imp) {
		imported_lead(f, rf);
	} else {
		fprintf(f, "<p class=\"lead\">%d client%s on %d lock%s for %.1f s, TTL %lld ms. "
			   "Observed: <b>", rf->clients, rf->clients == 1 ? "" : "s", rf->keys,
			rf->keys == 1 ? "" : "s", rf->elapsed_s, (long long)rf->ttl_ms);
		html_text(f, observed ? observed : "?");
		fprintf(f, "</b>. Everything here was measured in this run (report.md has the full "
			   "table).</p>\n");
	}
	if (rf->disagrees[0]) {
		fprintf(f, "<p class=\"lead\"><b>Warning: summary.csv disagrees with this run's own "
			   "files</b> on ");
		html_text(f, rf->disagrees);
		fprintf(f, ". What is drawn here comes from history.csv and events.csv; "
			   "<code>lockbench check</code> lists the differences.</p>\n");
	}
	stepper(f, false);
	fprintf(f, "<script type=\"application/json\" id=\"data\">{\"scale\":%.2f,\"runs\":[",
		lb_chart_scale());
	run_json(f, rf, rf->imp ? title : st ? st : "?");
	fprintf(f, "]}</script>\n<script>\n%s%s</script>\n</body></html>\n", LB_PALETTE_JS, page_js);
	return lb_outfile_close(&out);
}

/* Inline markdown of our own reports, as esc.h writes it: **bold**, `code`
 * (fenced by any run of backticks, closed by a run of the same length),
 * \X for a punctuation character X taken as text, [text](link) and
 * ![alt](src); a link to X/report.md goes to X/report.html when that exists. */
static void md_inline(FILE *f, const char *dir, const char *s)
{
	bool bold = false;
	size_t code = 0; /* inside a code span: the length of its fence */

	while (*s && *s != '\n') {
		if (s[0] == '\\' && !code && s[1] && strchr("\\`*_[]<>|#!()&", s[1])) {
			char one[2] = { s[1], 0 };
			html_text(f, one);
			s += 2;
			continue;
		}
		if (!code && !strncmp(s, "<br>", 4)) { /* a line break in a table's cell (esc.h
							  * writes every < of a text as \<) */
			fputs("<br>", f);
			s += 4;
			continue;
		}
		if (!code && !strncmp(s, "&amp;", 5)) { /* esc.h's & in Markdown text */
			html_text(f, "&");
			s += 5;
			continue;
		}
		if (s[0] == '*' && s[1] == '*' && !code) {
			fputs(bold ? "</b>" : "<b>", f);
			bold = !bold;
			s += 2;
			continue;
		}
		if (*s == '`') {
			size_t run = strspn(s, "`");
			if (!code || run == code) {
				fputs(code ? "</code>" : "<code>", f);
				code = code ? 0 : run;
			} else {
				fwrite(s, 1, run, f); /* shorter or longer: text of the span */
			}
			s += run;
			continue;
		}
		const char *close, *paren, *end;
		bool img = s[0] == '!' && s[1] == '[';
		if (!code && (img || s[0] == '[') && (close = strstr(s, "](")) &&
		    (end = strchr(close + 2, ')')) && !memchr(s, '\n', (size_t)(end - s))) {
			char text[512], link[512];
			const char *t0 = s + (img ? 2 : 1);
			paren = close + 2;
			snprintf(text, sizeof(text), "%.*s", (int)(close - t0), t0);
			snprintf(link, sizeof(link), "%.*s", (int)(end - paren), paren);
			size_t l = strlen(link);
			if (!img && l > 9 && !strcmp(link + l - 9, "report.md")) {
				char html[PATH_MAX];
				snprintf(html, sizeof(html), "%.3000s/%.*shtml", dir, (int)l - 2, link);
				if (access(html, R_OK) == 0)
					strcpy(link + l - 2, "html");
			}
			if (!safe_link(link)) {
				html_text(f, text); /* shown, not followed */
			} else if (img) {
				fputs("<img src=\"", f);
				html_text(f, link);
				fputs("\" alt=\"", f);
				html_text(f, text);
				fputs("\">", f);
			} else {
				fputs("<a href=\"", f);
				html_text(f, link);
				fputs("\">", f);
				html_text(f, text);
				fputs("</a>", f);
			}
			s = end + 1;
			continue;
		}
		char one[2] = { *s++, 0 };
		html_text(f, one);
	}
	if (bold)
		fputs("</b>", f);
	if (code)
		fputs("</code>", f);
}

static const char md_css[] = "img{max-width:100%;height:auto;display:block;margin:8px 0}"
			     "pre{font-size:16px;background:#f6f6f6;padding:8px;overflow-x:auto}";

/* report.md of @dir as HTML, into @f. */
static int md_body(FILE *f, const char *dir)
{
	char path[PATH_MAX], line[8192];
	bool pre = false, list = false, table = false, para = false, indented = false;

	snprintf(path, sizeof(path), "%.4000s/report.md", dir);
	FILE *in = fopen(path, "r");
	if (!in) {
		lb_errorf("cannot read %s: %s", path, strerror(errno));
		return LB_ESYS;
	}
	while (fgets(line, sizeof(line), in)) {
		bool blank = line[0] == '\n';
		if (!strncmp(line, "```", 3)) {
			fputs(pre ? "</pre>\n" : "<pre>", f);
			pre = !pre;
			continue;
		}
		if (pre) {
			html_text(f, line);
			continue;
		}
		/* an indented code block (four spaces), as compare's table is
		 * written: nothing in it is markup */
		if (!strncmp(line, "    ", 4) && !para && !list && !table) {
			fputs(indented ? "" : "<pre>", f);
			indented = true;
			html_text(f, line + 4);
			continue;
		}
		if (indented) {
			fputs("</pre>\n", f);
			indented = false;
		}
		bool item = !strncmp(line, "- ", 2), row = line[0] == '|';
		if (para && (blank || item || row || line[0] == '#')) {
			fputs("</p>\n", f);
			para = false;
		}
		if (list && !item) {
			fputs("</ul>\n", f);
			list = false;
		}
		if (table && !row) {
			fputs("</table>\n", f);
			table = false;
		}
		if (blank)
			continue;
		if (line[0] == '#') {
			int level = 0;
			while (line[level] == '#')
				level++;
			fprintf(f, "<h%d>", level);
			md_inline(f, dir, line + level + (line[level] == ' '));
			fprintf(f, "</h%d>\n", level);
		} else if (item) {
			if (!list)
				fputs("<ul>\n", f);
			list = true;
			fputs("<li>", f);
			md_inline(f, dir, line + 2);
			fputs("</li>\n", f);
		} else if (row) {
			if (strstr(line, "|---"))
				continue;
			if (!table)
				fputs("<table>\n", f);
			table = true;
			fputs("<tr>", f);
			/* cells end at a | that is not escaped (\|: text) */
			for (char *c = line + 1; *c && *c != '\n';) {
				char *e = c;
				while (*e && *e != '\n' && *e != '|')
					e += e[0] == '\\' && e[1] ? 2 : 1;
				bool last = *e != '|';
				*e = '\0';
				fputs("<td>", f);
				md_inline(f, dir, c);
				fputs("</td>", f);
				if (last)
					break;
				c = e + 1;
			}
			fputs("</tr>\n", f);
		} else {
			if (!para)
				fputs("<p>", f);
			else
				fputc(' ', f);
			para = true;
			md_inline(f, dir, line);
		}
	}
	fprintf(f, "%s%s%s%s\n", pre || indented ? "</pre>" : "", para ? "</p>" : "",
		list ? "</ul>" : "", table ? "</table>" : "");
	fclose(in);
	return 0;
}

int lb_report_html_from_md(const char *dir)
{
	struct lb_outfile out;

	if (lb_outfile_open(&out, dir, "report.html", true) < 0)
		return LB_ESYS;
	fprintf(out.f, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		       "<title>lockbench report</title>\n<style>%s%s</style></head><body>\n",
		page_css, md_css);
	int rc = md_body(out.f, dir);
	fprintf(out.f, "</body></html>\n");
	if (rc < 0) {
		lb_outfile_abort(&out);
		return rc;
	}
	return lb_outfile_close(&out);
}

int lb_report_html_stacked(const char *dir, const char *const *runs, int n)
{
	struct lb_outfile out;
	char sub[PATH_MAX], title[256] = "lockbench compare";
	int rc = 0;

	if (lb_outfile_open(&out, dir, "report.html", true) < 0)
		return LB_ESYS;
	FILE *f = out.f;
	/* the data first, to a buffer: the title needs the scenario */
	char *data = NULL;
	size_t data_len = 0;
	FILE *d = open_memstream(&data, &data_len);
	if (!d) {
		lb_outfile_abort(&out);
		return LB_ESYS;
	}
	fprintf(d, "{\"scale\":%.2f,\"runs\":[", lb_chart_scale());
	for (int i = 0; i < n && rc == 0; i++) {
		struct lb_run_files rf;
		snprintf(sub, sizeof(sub), "%.3000s/%.200s", dir, runs[i]);
		if ((rc = lb_run_files_load(sub, &rf)) < 0)
			break;
		const char *sc = lb_summary_get(&rf.sum, "scenario");
		if (i == 0)
			snprintf(title, sizeof(title), "compare under %s: %d strategies, one time axis",
				 sc && sc[0] ? sc : "no scenario", n);
		if (i)
			fputc(',', d);
		run_json(d, &rf, runs[i]);
		lb_run_files_free(&rf);
	}
	fprintf(d, "]}");
	fclose(d);
	if (rc == 0) {
		page_head(f, title, md_css);
		fprintf(f, "<p class=\"lead\">The same load, faults and seed for each strategy, each "
			   "on fresh servers. Step through all of them at once: each step is a fault or "
			   "an incident of one strategy's run, and the box says what every run looked like "
			   "at that moment. The table and each run's own page follow.</p>\n");
		stepper(f, true);
		fprintf(f, "<script type=\"application/json\" id=\"data\">%s</script>\n", data);
		fprintf(f, "<hr>\n");
		rc = md_body(f, dir);
		fprintf(f, "<script>\n%s%s</script>\n</body></html>\n", LB_PALETTE_JS, page_js);
	}
	free(data);
	if (rc < 0) {
		lb_outfile_abort(&out);
		return rc;
	}
	return lb_outfile_close(&out);
}

/* One run of a lesson, checked (it is the run the lesson names, and its
 * summary.csv agrees with its own files, as `lockbench check` would say), as
 * JSON into @d and its figures as summary.csv states them into @fig. */
static int deck_run(FILE *d, FILE *fig, const char *dir, const struct lb_lesson_run *r, bool first)
{
	static const char *const cols[] = { "sections", "overlaps", "foreign_releases",
					     "lost_updates", "observed" };
	struct lb_run_files rf;
	struct lb_verify ver;
	char path[PATH_MAX + 32];

	/* a run's faults and what the server held are part of the lesson: a run
	 * without them would tell less than was rehearsed, as if nothing happened */
	static const char *const needed[] = { "events.csv", "keyevents.csv" };
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, needed[i]);
		if (access(path, R_OK) != 0) {
			lb_errorf("%s: this run of the tour has no %s (every run writes one)", dir,
				  needed[i]);
			return LB_EINVAL;
		}
	}
	int rc = lb_run_files_load(dir, &rf);
	if (rc < 0) {
		lb_errorf("%s: cannot read this run of the tour (above)", dir);
		return rc;
	}
	const char *sc = lb_summary_get(&rf.sum, "scenario"), *st = lb_summary_get(&rf.sum, "strategy");
	if (!sc || !st || strcmp(sc, r->scenario) || strcmp(st, r->strategy)) {
		lb_errorf("%s should be %s under %s; its summary.csv says %.100s under %.100s", dir,
			  r->strategy, r->scenario, st ? st : "?", sc ? sc : "?");
		rc = LB_EINVAL;
	} else if ((rc = lb_verify_run(dir, NULL, &ver)) < 0 || ver.differences) {
		if (rc == 0)
			lb_errorf("%s: summary.csv disagrees with the run's own files on %s "
				  "(`lockbench check %s` lists them)", dir, ver.which, dir);
		rc = rc < 0 ? rc : LB_EINVAL;
	} else {
		fprintf(d, "%s", first ? "" : ",");
		run_json(d, &rf, r->label);
		fprintf(fig, "%s[", first ? "" : ",");
		json_str(fig, r->label);
		fprintf(fig, ",");
		json_str(fig, sc);
		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
			const char *v = lb_summary_get(&rf.sum, cols[i]);
			fprintf(fig, ",");
			json_str(fig, v ? v : "?");
		}
		fprintf(fig, "]");
	}
	lb_run_files_free(&rf);
	return rc;
}

/* What a class sees of a lesson beside its runs: the question asked first,
 * the speaker notes, why the fix works, and the code ("code": per language,
 * [wrong, fix]; "breaks": the step where the marked line breaks). */
static void deck_class(FILE *d, const struct lb_lesson *l)
{
	const char *const text[][2] = { { "question", l->question }, { "notes", l->notes },
					{ "why", l->why }, { "breaks", l->breaks } };
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		if (text[i][1]) {
			fprintf(d, ",\"%s\":", text[i][0]);
			json_str(d, text[i][1]);
		}
	if (!l->code[0][0])
		return;
	fprintf(d, ",\"code\":[");
	for (int k = 0; k < LB_CODE_LANGS; k++) {
		fprintf(d, "%s[", k ? "," : "");
		json_str(d, l->code[k][0] ? l->code[k][0] : "");
		fprintf(d, ",");
		json_str(d, l->code[k][1] ? l->code[k][1] : "");
		fprintf(d, "]");
	}
	fprintf(d, "]");
}

/* A lesson as JSON: its text, its runs (as run_json writes them, the data a
 * compare page steps through) and their figures. */
static int deck_lesson(FILE *d, const char *root, const struct lb_lesson *l)
{
	char sub[PATH_MAX], *figs = NULL;
	size_t figs_len = 0;
	int rc = 0;
	FILE *fig = open_memstream(&figs, &figs_len);

	if (!fig)
		return LB_ENOMEM;
	fprintf(d, "{\"id\":");
	json_str(d, l->id);
	fprintf(d, ",\"title\":");
	json_str(d, l->title);
	fprintf(d, ",\"watch\":");
	json_str(d, l->watch);
	fprintf(d, ",\"page\":");
	json_str(d, l->page);
	deck_class(d, l);
	fprintf(d, ",\"runs\":[");
	for (int i = 0; i < LB_LESSON_RUNS && l->runs[i].scenario && rc == 0; i++) {
		snprintf(sub, sizeof(sub), "%.3000s/%.100s/%.200s", root, l->id, l->runs[i].dir);
		rc = deck_run(d, fig, sub, &l->runs[i], i == 0);
	}
	fclose(fig);
	fprintf(d, "],\"figs\":[%s]}", figs ? figs : "");
	free(figs);
	return rc;
}

static const char deck_css[] =
	"h1{font-size:26px}#contents{font-size:17px;color:#444;margin:0 0 6px}"
	"#toc{columns:2;column-gap:32px;font-size:18px;margin:6px 0 8px}"
	"#toc li.current{font-weight:bold}#toc a{color:#235}"
	"#lessonbar{display:flex;gap:16px;align-items:center;margin:12px 0 4px;padding:6px 0;"
	"border-top:3px solid #335}#lessonbar select{font-size:18px;max-width:40%}"
	"#ltitle{font-size:24px;margin:4px 0}#lwatch{margin:2px 0 6px;font-size:18px}"
	"#lfig{font-size:16px}#lfig th{background:#f2f2f2}"
	/* the classroom view (report.js): the lesson bar, the buttons, the step's
	 * sentence and its run's chart on one screen; below it the code, why the
	 * fix works, the lesson's text and (from its last step) the figures */
	"body.classroom #lessonbar{margin:0;padding:4px 0;gap:10px}"
	"body.classroom #lessonbar button,body.classroom #bar button{font-size:18px;padding:4px 12px}"
	"body.classroom #bar{padding:4px 0;gap:10px}body.classroom #bar .keys{display:none}"
	"body.classroom #now{font-size:20px;line-height:1.3;margin:4px 0}"
	"body.classroom #tl{margin:4px 0}body.classroom.asking #who{display:none}"
	"body.classroom #lfig,body.classroom #lfig+p{display:none}"
	"body.classroom.revealed #lfig,body.classroom.revealed #lfig+p{display:table}"
	"body.classroom #figs-note{color:#666}body.classroom.revealed #figs-note{display:none}"
	"#code{margin:8px 0}#code .langs button{font-size:18px;padding:2px 12px;margin-right:6px}"
	"#code .langs button.on{background:#335;color:#fff}"
	"#code .cols{display:grid;grid-template-columns:1fr 1fr;gap:12px}"
	"#code h3{font-size:18px;margin:6px 0 2px}#code pre{font-size:18px;line-height:1.35;"
	"background:#f6f6f6;padding:6px 10px;margin:0;overflow-x:auto;white-space:pre-wrap}"
	"#code pre span{display:block}#code pre span.breaks{border-left:4px solid transparent;"
	"margin-left:-8px;padding-left:4px}"
	"body.broken #code pre span.breaks{background:#ffd5cc;border-left-color:#cc3311}"
	"#now .breakline{margin-top:4px;font-size:0.9em}#now .breakline code{background:#ffd5cc;"
	"padding:0 6px;border-left:4px solid #cc3311}"
	"#why{font-size:19px;border-left:4px solid #228833;padding:2px 12px}"
	"#notes{display:none}body.present #notes{display:block;font-size:20px;background:#eef;"
	"border:1px solid #99a;border-radius:6px;padding:6px 12px;margin:6px 0}"
	"body.classroom.present #now,body.classroom.present #pin.pinned #now{font-size:26px}"
	"body.classroom.present #tl{max-height:none}"
	"svg.legend{max-width:760px;display:block;margin:6px 0}"
	/* lockbench tour --pdf: the pages #print lays out (1600x1000 px each) */
	"body.printing{margin:0}body.printing>*:not(#slides){display:none}"
	"#slides section.title h1{font-size:64px;margin:120px 0 10px}#slides .sub{font-size:30px}"
	"#slides section.title ol{font-size:24px;columns:2}#slides h2{font-size:32px;margin:0 0 8px}"
	"#slides .src,#slides .fig{font-size:20px;color:#444}#slides .q{font-size:26px}"
	"#slides .why{font-size:22px;border-left:4px solid #228833;padding-left:12px}"
	"#slides section.legend svg{max-width:1300px;max-height:820px}"
	"#slides .code .cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}"
	"#slides .code pre{font-size:17px;background:#f6f6f6;padding:6px 8px;margin:0;white-space:pre-wrap}"
	"#slides .code h3{font-size:18px;margin:8px 0 2px}#slides .q{margin:0 0 4px}"
	"#slides .code pre span{display:block}#slides .code pre span.breaks{background:#ffd5cc}"
	"#slides section.run svg{max-height:800px}"
	"#slides section.handout{font-size:15px;line-height:1.3}#slides .handout .cols{display:grid;"
	"grid-template-columns:1fr 1.7fr;gap:28px}#slides .handout h3{font-size:20px;margin:4px 0}"
	"#slides .handout dl{columns:2;column-gap:24px;margin:0}#slides .handout dt{font-weight:bold;"
	"break-after:avoid}#slides .handout dd{margin:0 0 5px 12px;break-inside:avoid}"
	"#slides .handout li{margin:0 0 4px}";

/* The handout's glossary: the "- **term**: definition" lines of the "##
 * Glossary" section of @path (docs/glossary.md), as "glossary":[[term,
 * definition],...] after the lessons; none when @path is NULL or unreadable
 * (said: the deck is drawn without it). Text, never markup: the page sets it
 * as text. */
static void deck_glossary(FILE *d, const char *path)
{
	char line[2048];
	int rc, n = 0;
	const char *kind;
	bool in = false;
	FILE *f = path ? lb_open_regular(path, &rc, &kind) : NULL;

	if (path && !f)
		lb_errorf("tour: %s: %s: the handout has no glossary", path, kind ? kind : strerror(errno));
	fprintf(d, ",\"glossary\":[");
	while (f && fgets(line, sizeof(line), f) && n < 64) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!strncmp(line, "## ", 3)) {
			in = !strcmp(line, "## Glossary");
			continue;
		}
		char *end = in && !strncmp(line, "- **", 4) ? strstr(line + 4, "**: ") : NULL;
		if (!end)
			continue;
		*end = '\0';
		fprintf(d, "%s[", n++ ? "," : "");
		json_str(d, line + 4);
		fprintf(d, ",");
		json_str(d, end + 4);
		fprintf(d, "]");
	}
	fprintf(d, "]");
	if (f)
		fclose(f);
}

int lb_report_html_deck(const char *dir, const char *root, const struct lb_lesson *ls, int n,
			const char *source, const char *glossary)
{
	struct lb_outfile out;
	char *data = NULL;
	size_t data_len = 0;
	int rc = 0;
	FILE *d = open_memstream(&data, &data_len);

	if (!d)
		return LB_ENOMEM;
	fprintf(d, "{\"lessons\":[");
	story_max = LB_DECK_STORY;
	for (int k = 0; k < n && rc == 0; k++) {
		fprintf(d, "%s", k ? ",\n" : "");
		rc = deck_lesson(d, root, &ls[k]);
	}
	fprintf(d, "]");
	deck_glossary(d, glossary);
	fprintf(d, ",\"source\":");
	json_str(d, source);
	fprintf(d, "}");
	fclose(d);
	story_max = 1000;
	if (rc < 0) { /* a run missing, unreadable or disagreeing: an input's fault */
		free(data);
		return rc == LB_ENOMEM ? rc : LB_EINVAL;
	}
	/* every run read and checked before the directory is made or a byte of
	 * the page written: a failed deck leaves nothing behind */
	if (lb_results_prepare_dir(dir) < 0 || lb_outfile_open(&out, dir, "report.html", true) < 0) {
		free(data);
		return LB_ESYS;
	}
	FILE *f = out.f;
	page_head(f, "lockbench tour: the classic lessons, in teaching order", deck_css);
	fprintf(f, "<details id=\"contents\"><summary>%d lessons, each a wrong recipe beside its "
		   "fix under one fault, on one time axis; past a lesson's last step, the next "
		   "opens. ", n);
	html_text(f, source);
	fprintf(f, "</summary>\n<ol id=\"toc\">");
	for (int k = 0; k < n; k++) {
		fprintf(f, "<li><a href=\"#lesson=%d&amp;step=1\">", k + 1);
		html_text(f, ls[k].title);
		fprintf(f, "</a></li>");
	}
	fprintf(f, "</ol></details>\n<div id=\"lessonbar\"><button id=\"lprev\">&#9664; lesson</button>"
		   "<span id=\"lpos\"></span><select id=\"pick\" aria-label=\"lesson\">");
	for (int k = 0; k < n; k++) {
		fprintf(f, "<option value=\"%d\">%d. ", k, k + 1);
		html_text(f, ls[k].title);
		fprintf(f, "</option>");
	}
	fprintf(f, "</select><button id=\"lnext\">lesson &#9654;</button></div>\n");
	stepper(f, true);
	fprintf(f, "<div id=\"code\"></div><p id=\"why\"></p>\n"
		   "<h2 id=\"ltitle\"></h2><p id=\"lwatch\"></p>\n"
		   "<h2>The runs' figures (summary.csv)</h2><p id=\"figs-note\">Shown from the "
		   "lesson's last step on: predict first.</p><table id=\"lfig\"></table>\n"
		   "<p class=\"keys\">Read: <span id=\"lpage\"></span></p>\n");
	fprintf(f, "<script type=\"application/json\" id=\"data\">%s</script>\n", data);
	fprintf(f, "<script>\n%s%s</script>\n</body></html>\n", LB_PALETTE_JS, page_js);
	free(data);
	return lb_outfile_close(&out);
}
