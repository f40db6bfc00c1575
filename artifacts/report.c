/* report: a run as one self-contained HTML page: jobs, turns, tool calls, decisions, changes.
 *
 * A run is hostile input: every string from it (model text, commands, outputs, file names, job
 * ids) goes through htmltext, which escapes markup and shows control and bidirectional characters
 * as visible escapes. The page carries a Content-Security-Policy that allows nothing from outside
 * and only the page's own style and script, named by their SHA-256: should escaping ever miss, an
 * injected script or style still does not apply.
 *
 * Big runs stay fast to open: what a call shows when unfolded (the reason, the arguments, the
 * outputs) and long model text are not markup but blocks of text in one JSON data block, made into
 * elements by the page's script when a fold is opened (as text, never as markup). The lines that
 * say what happened (tool, command, decision, rule, exit code) are markup, readable without script,
 * found by the browser's search and filtered by the "only denied" switch. */
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "changes.h"
#include "events.h"
#include "modeltext.h"
#include "report.h"
#include "runjson.h"
#include "verify.h"
#include "../util/linediff.h"
#include "../util/utf8.h"

enum {
	SHOWN = 1024,      /* bytes of an output shown at first, head and tail */
	FOLDED = 16 << 10, /* bytes of an output behind "more", head and tail */
	TEXTFOLD = 600,    /* model text longer than this is folded */
	DIFFMAX = 32 << 10, /* bytes of one file's diff on the page */
	DIFFSMAX = 8 << 20, /* bytes of diffs on the whole page: past it, files are listed without one
	                       (each diff costs up to 4,000 edits of line matching: ~76 ms a file) */
	ARGLINE = 160,      /* bytes of a call's arguments on its line */
	TOOLLINE = 64,      /* bytes of a tool's name on a call's line */
	CHUNK = 100,        /* timeline items in one list, which the browser lays out only near the view */
	PAGEMAX = 64 << 20  /* bytes of markup and fold text the page holds: past it, no more events are read */
};

static const char style[] =
	":root{color-scheme:light dark;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--mute:#6e7781;--line:#d0d7de}"
	"body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:0 1rem 4rem}"
	"h1{font-size:1.4rem;margin:1rem 0 .2rem}h2{font-size:1.15rem;margin:1.6rem 0 .4rem}"
	"code,pre{font:13px/1.4 ui-monospace,monospace}"
	"pre{white-space:pre-wrap;word-break:break-all;background:rgba(127,127,127,.08);padding:.5rem;margin:.3rem 0;"
	"border-radius:4px;max-height:40rem;overflow:auto}"
	"table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}"
	"td,th{border-bottom:1px solid var(--line);padding:.25rem .5rem;text-align:left;white-space:nowrap}"
	"ol{list-style:none;padding:0}li{border-left:3px solid var(--line);padding:.15rem .6rem;margin:.35rem 0}"
	"li.deny{border-color:var(--bad)}li.abort{border-color:var(--bad);border-left-width:6px}"
	"li.turn{border-color:var(--mute)}li.changes{border-color:var(--warn)}"
	".ok{color:var(--ok)}.bad{color:var(--bad);font-weight:600}.warn{color:var(--warn)}.mute{color:var(--mute)}"
	"summary{cursor:pointer}summary:focus-visible,input:focus-visible{outline:2px solid #0969da}"
	".add{color:var(--ok)}.del{color:var(--bad)}"
	"body.only li.call:not(.deny):not(.abort),body.only li.turn,body.only li.changes,body.only li.other{display:none}"
	"ol.c{content-visibility:auto;contain-intrinsic-size:auto 2500px}"
	"nav{position:sticky;top:0;background:Canvas;padding:.4rem 0;border-bottom:1px solid var(--line)}";

/* Fills a fold from the data block when it opens (as text); opens the call a link's #step-N names;
 * filters; and says when the page was loaded and laid out (data-load-ms, for the benchmark). */
static const char script[] =
	"var d=document,D;"
	"function fill(x){var i=x.getAttribute('data-i');if(i===null||x.filled)return;x.filled=1;"
	"D=D||JSON.parse(d.getElementById('data').textContent);"
	"D[+i].forEach(function(k){var e;if(k[0]==='more'){e=d.createElement('details');"
	"var s=d.createElement('summary');s.textContent=k[2];e.appendChild(s);"
	"var p=d.createElement('pre');p.textContent=k[1];e.appendChild(p)}"
	"else{e=d.createElement(k[0]==='pre'?'pre':'p');if(k[0]!=='p'&&k[0]!=='pre')e.className=k[0];"
	"e.textContent=k[1]}x.appendChild(e)})}"
	"d.addEventListener('toggle',function(e){if(e.target.open)fill(e.target)},true);"
	"function go(){var t=location.hash&&d.getElementById(decodeURIComponent(location.hash.slice(1)));"
	"var x=t&&t.querySelector('details');if(x){x.open=true;fill(x)}}"
	"addEventListener('hashchange',go);go();"
	"d.querySelectorAll('details[open][data-i]').forEach(fill);"
	"d.getElementById('only').addEventListener('change',function(e){d.body.classList.toggle('only',e.target.checked)});"
	"addEventListener('load',function(){d.body.offsetHeight;d.body.dataset.loadMs=Math.round(performance.now())});"
	"d.body.dataset.ready='1';";

/* "sha256-BASE64" of s, for the policy. */
static void cspdigest(const char *s, char out[64])
{
	unsigned char d[32];
	unsigned int n = 0;
	EVP_Digest(s, strlen(s), d, &n, EVP_sha256(), NULL);
	memcpy(out, "sha256-", 7);
	EVP_EncodeBlock((unsigned char *)out + 7, d, 32);
}

/* s made visible: invalid UTF-8 replaced, control and bidirectional characters as escapes, and
 * with html the markup characters as entities. Newline and tab are kept for a <pre>; on one line
 * (oneline), where HTML shows them as a space, they are escapes too, and so are U+2028, U+2029. */
static void visible(struct buf *b, const char *s, size_t n, int html, int oneline)
{
	char *clean = utf8clean(s ? s : "", s ? n : 0);
	for (const unsigned char *p = (const unsigned char *)clean; *p; p++) {
		unsigned c = *p;
		if (!html && (c == '&' || c == '<' || c == '>' || c == '"' || c == '\''))
			bufadd(b, (const char *)p, 1);
		else if (c == '&')
			bufputs(b, "&amp;");
		else if (c == '<')
			bufputs(b, "&lt;");
		else if (c == '>')
			bufputs(b, "&gt;");
		else if (c == '"')
			bufputs(b, "&quot;");
		else if (c == '\'')
			bufputs(b, "&#39;");
		else if ((c < 0x20 && ((c != '\n' && c != '\t') || oneline)) || c == 0x7f)
			bufprintf(b, "\\x%02x", c);
		else if (c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) /* C1 controls */
			bufprintf(b, "\\u%04x", p[1]), p++;
		else if (c == 0xe2 && p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae)))
			bufprintf(b, "\\u20%02x", p[2] - 0x80), p += 2; /* LRM, RLM, embeddings, overrides */
		else if (c == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
			bufprintf(b, "\\u20%02x", (p[2] & 0x3f) + 0x40), p += 2; /* isolates U+2066..2069 */
		else if (oneline && c == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
			bufprintf(b, "\\u20%02x", p[2] - 0x80), p += 2; /* line and paragraph separators */
		else if (c == 0xd8 && p[1] == 0x9c)
			bufputs(b, "\\u061c"), p++; /* Arabic letter mark */
		else
			bufadd(b, (const char *)p, 1);
	}
	free(clean);
}

void htmltext(struct buf *b, const char *s, size_t n)
{
	visible(b, s, n, 1, 0);
}

/* htmltext for a name or a command shown on one line: newline and tab as escapes too. */
static void nametext(struct buf *b, const char *s)
{
	visible(b, s ? s : "", s ? strlen(s) : 0, 1, 1);
}

static void txt(struct buf *b, const char *s)
{
	htmltext(b, s, s ? strlen(s) : 0);
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double num(const cJSON *o, const char *k, double def)
{
	const cJSON *v = get(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* A status word with a sign, so that colour is never the only cue. */
static void status(struct buf *b, const char *s)
{
	int good = s && strcmp(s, "succeeded") == 0;
	int mid = s && (strcmp(s, "skipped") == 0 || strcmp(s, "cancelled") == 0 || strcmp(s, "running") == 0);
	bufprintf(b, "<span class=\"%s\">%s ", good ? "ok" : mid ? "warn" : "bad", good ? "&#10003;" : mid ? "&#8211;" : "&#10007;");
	txt(b, s ? s : "unknown");
	bufputs(b, "</span>");
}

static void cost(struct buf *b, const cJSON *o)
{
	const cJSON *c = get(o, "cost");
	if (cJSON_IsNumber(c))
		bufprintf(b, "$%.4f", c->valuedouble);
	else if (cJSON_IsObject(c) && cJSON_IsNumber(get(c, "usd")))
		bufprintf(b, "$%.4f", get(c, "usd")->valuedouble);
	else
		bufputs(b, "<span class=\"mute\">no price</span>");
}

/* The folds of the page: their lists of blocks, how many there are, and the bytes they hold
 * (their text, and a cJSON node's worth for each block and fold). */
struct folds {
	cJSON *all;
	int n;
	size_t bytes;
	size_t diffed; /* bytes of file diffs on the page so far (DIFFSMAX at most) */
};

/* The texts behind folds: a JSON array with an entry per fold, each a list of blocks
 * [kind, text] (kind p, pre, bad or mute) or ["more", text, summary], the text already visible. */
static void block(struct folds *f, cJSON *body, const char *kind, const char *s, size_t n, const char *summary)
{
	struct buf v = {0};
	visible(&v, s, n, 0, 0);
	bufadd(&v, "", 0);
	cJSON *k = cJSON_CreateArray();
	cJSON_AddItemToArray(k, cJSON_CreateString(kind));
	cJSON_AddItemToArray(k, cJSON_CreateString(v.data));
	if (summary)
		cJSON_AddItemToArray(k, cJSON_CreateString(summary));
	cJSON_AddItemToArray(body, k);
	f->bytes += v.len + (summary ? strlen(summary) : 0) + 4 * sizeof(cJSON);
	buffree(&v);
}

/* A new fold: its number written to b as a data-i attribute, its (borrowed) list of blocks. */
static cJSON *fold(struct buf *b, struct folds *f)
{
	bufprintf(b, " data-i=\"%d\"", f->n++);
	f->bytes += sizeof(cJSON);
	cJSON *body = cJSON_CreateArray();
	cJSON_AddItemToArray(f->all, body);
	return body;
}

/* A long text: the head and tail shown, the middle behind a fold of its own. */
static void cut(struct folds *f, cJSON *body, const char *s, size_t n)
{
	if (n <= 2 * SHOWN) {
		block(f, body, "pre", s, n, NULL);
		return;
	}
	block(f, body, "pre", s, SHOWN, NULL);
	size_t mid = n - 2 * SHOWN;
	char sum[64];
	snprintf(sum, sizeof sum, "%zu more bytes", mid);
	if (mid <= 2 * FOLDED) {
		block(f, body, "more", s + SHOWN, mid, sum);
	} else {
		struct buf m = {0};
		bufadd(&m, s + SHOWN, FOLDED);
		bufprintf(&m, "\n[... %zu bytes not in the report; the event log holds the whole output ...]\n", mid - 2 * FOLDED);
		bufadd(&m, s + n - SHOWN - FOLDED, FOLDED);
		block(f, body, "more", m.data, m.len, sum);
		buffree(&m);
	}
	block(f, body, "pre", s + n - SHOWN, SHOWN, NULL);
}

static void cutstr(struct folds *f, cJSON *body, const char *s)
{
	cut(f, body, s ? s : "", s ? strlen(s) : 0);
}

/* The data block: JSON with every '<' escaped, so that nothing in it ends the element. */
static void datablock(struct buf *b, const cJSON *data)
{
	char *j = cJSON_PrintUnformatted(data);
	bufputs(b, "<script type=\"application/json\" id=\"data\">");
	for (const char *p = j ? j : "[]"; *p; p++) {
		const char *lt = strchr(p, '<');
		size_t n = lt ? (size_t)(lt - p) : strlen(p);
		bufadd(b, p, n);
		if (!lt)
			break;
		bufputs(b, "\\u003c");
		p = lt;
	}
	bufputs(b, "</script>\n");
	free(j);
}

/* The needs of each job as written in the manifest copy in the run ({} when unreadable). */
static cJSON *needsof(const char *dir, const cJSON *run)
{
	cJSON *out = cJSON_CreateObject(), *m = runmanifestcopy(dir, run), *j;
	cJSON_ArrayForEach(j, get(m, "jobs"))
	{
		const cJSON *n = get(j, "needs");
		if (cJSON_IsArray(n)) {
			cJSON_AddItemToObject(out, j->string, cJSON_Duplicate(n, 1));
		} else if (cJSON_IsString(n)) {
			cJSON *a = cJSON_AddArrayToObject(out, j->string);
			cJSON_AddItemToArray(a, cJSON_CreateString(n->valuestring));
		}
	}
	cJSON_Delete(m);
	return out;
}

static void header(struct buf *b, const char *dir, const cJSON *run)
{
	struct verdictrun v = {0};
	struct err e = {0};
	int ran = runverify(dir, &v, &e);
	bufputs(b, "<header><h1>nightshift run ");
	txt(b, jsonstr(run, "run_id", "?"));
	const char *name = jsonstr(get(run, "manifest"), "name", NULL);
	if (name) {
		bufputs(b, " &middot; ");
		txt(b, name);
	}
	bufputs(b, "</h1><p>");
	status(b, jsonstr(run, "status", "unfinished"));
	bufputs(b, " &middot; started ");
	txt(b, jsonstr(run, "started", "?"));
	bufputs(b, " &middot; ended ");
	txt(b, jsonstr(run, "ended", "?"));
	const cJSON *u = get(run, "usage");
	bufprintf(b, " &middot; tokens %.0f in, %.0f out &middot; cost ", num(u, "input", 0), num(u, "output", 0));
	cost(b, run);
	bufputs(b, "</p><p id=\"verification\">Verification: ");
	if (ran < 0) {
		bufputs(b, "<span class=\"bad\">&#10007; could not run: ");
		txt(b, e.msg);
		bufputs(b, "</span>");
	} else if (v.failed || v.incomplete) {
		bufprintf(b, "<span class=\"bad\">&#10007; %s%d problem%s</span>", v.incomplete ? "incomplete run, " : "",
		          v.failed, v.failed == 1 ? "" : "s");
		if (v.report.len) {
			bufputs(b, "<pre>");
			htmltext(b, v.report.data, v.report.len);
			bufputs(b, "</pre>");
		}
	} else {
		bufprintf(b, "<span class=\"ok\">&#10003; verified</span> (%ld files, %ld events, %ld layers)", v.files, v.events,
		          v.layers);
	}
	bufputs(b, "</p></header>\n");
	verdictrunfree(&v);
}

static void jobtable(struct buf *b, const cJSON *run, const cJSON *needs, const cJSON *denials)
{
	const cJSON *j;
	bufputs(b, "<section id=\"jobs\"><h2>Jobs</h2><table><thead><tr><th>job</th><th>status</th><th>needs</th>"
	           "<th>worker</th><th>turns</th><th>steps</th><th>tokens in / out</th><th>cost</th><th>denials</th>"
	           "</tr></thead><tbody>\n");
	cJSON_ArrayForEach(j, get(run, "jobs"))
	{
		bufputs(b, "<tr><td><a href=\"#job-");
		txt(b, j->string);
		bufputs(b, "\">");
		txt(b, j->string);
		bufputs(b, "</a></td><td>");
		status(b, jsonstr(j, "status", NULL));
		bufputs(b, "</td><td>");
		const cJSON *n, *list = get(needs, j->string);
		if (!list) /* a matrix member: the needs of its matrix job as written */
			list = get(needs, jsonstr(get(j, "matrix"), "job", ""));
		int first = 1;
		cJSON_ArrayForEach(n, list)
		{
			if (!cJSON_IsString(n))
				continue;
			bufputs(b, first ? "" : ", ");
			txt(b, n->valuestring);
			first = 0;
		}
		bufputs(b, first ? "&ndash;" : "");
		bufputs(b, "</td><td>");
		txt(b, jsonstr(j, "worker", ""));
		const cJSON *u = get(j, "usage"), *d = get(denials, j->string);
		bufprintf(b, "</td><td>%.0f</td><td>%.0f</td><td>%.0f / %.0f</td><td>", num(j, "turns", 0), num(j, "steps", 0),
		          num(u, "input", 0), num(u, "output", 0));
		cost(b, j);
		double nd = cJSON_IsNumber(d) ? d->valuedouble : cJSON_IsArray(d) ? cJSON_GetArraySize(d) : 0;
		if (cJSON_IsString(d)) /* a job the page stopped in or before: what was read, or "?" */
			bufprintf(b, "</td><td>%s</td></tr>\n", d->valuestring);
		else
			bufprintf(b, "</td><td>%s%.0f%s</td></tr>\n", nd > 0 ? "<span class=\"bad\">" : "", nd,
			          nd > 0 ? "</span>" : "");
	}
	bufputs(b, "</tbody></table></section>\n");
}

/* What the end layers left out (run.json's end_skipped), when they left anything out. */
static void endskipped(struct buf *b, const cJSON *run)
{
	const cJSON *x, *list = get(run, "end_skipped");
	if (!cJSON_GetArraySize(list))
		return;
	bufprintf(b, "<section id=\"end-skipped\"><h2>Left out of the end layer (%d)</h2><p>The workspace after the "
	             "last step is stored without these:</p><ul>\n", cJSON_GetArraySize(list));
	cJSON_ArrayForEach(x, list)
	{
		bufputs(b, "<li><code>");
		nametext(b, jsonstr(x, "path", "?"));
		bufputs(b, "</code> in ");
		txt(b, jsonstr(x, "layer", "?"));
		bufputs(b, ": <span class=\"bad\">");
		txt(b, jsonstr(x, "reason", "?"));
		bufputs(b, "</span></li>\n");
	}
	bufputs(b, "</ul></section>\n");
}

/* The changes of one layer, each file a fold with its diff. */
static void changesblock(struct buf *b, const struct layerchanges *l, size_t *diffed)
{
	bufprintf(b, "<li class=\"changes\"><details><summary>Workspace changes ");
	if (l->base && l->to <= l->from)
		bufprintf(b, "between the run resumed and this run's first layer, before step %d", l->to);
	else if (l->base && l->to - l->from > 1)
		bufprintf(b, "in steps %d to %d and until the chain began again before step %d (a full layer)", l->from,
		          l->to - 1, l->to);
	else if (l->base)
		bufprintf(b, "in step %d and until the chain began again before step %d (a full layer)", l->from, l->to);
	else if (l->to == 0)
		bufprintf(b, "after step %d, to the end of the run", l->from);
	else if (l->to - l->from > 1)
		bufprintf(b, "in steps %d to %d", l->from, l->to - 1);
	else
		bufprintf(b, "in step %d", l->from);
	bufprintf(b, ": %zu</summary><ul>\n", l->n);
	for (size_t i = 0; i < l->n; i++) {
		const struct change *c = &l->v[i];
		const char *word = c->kind == 'A' ? "added" : c->kind == 'D' ? "deleted" : "changed";
		int text = c->type == 'f' && changestext(c->kind == 'A' ? "" : c->before, c->kind == 'A' ? 0 : c->nbefore) &&
		           changestext(c->kind == 'D' ? "" : c->after, c->kind == 'D' ? 0 : c->nafter) &&
		           (c->kind == 'A' || c->before) && (c->kind == 'D' || c->after);
		bufprintf(b, "<li class=\"file\">%s <code>", word);
		nametext(b, c->path);
		bufprintf(b, "</code> <span class=\"mute\">(%s, %lld bytes)</span>",
		          c->type == 'f' ? (text ? "text" : "binary or large") : c->type == 'd' ? "directory" : c->type == 'l' ? "symlink" : "other",
		          (long long)c->size);
		if (text && *diffed >= DIFFSMAX) {
			bufprintf(b, " <span class=\"mute\">(diff not shown: the page holds %d MiB of diffs; nightshift diff RUN "
			          "--step %d)</span>", DIFFSMAX >> 20, l->from);
		} else if (text) {
			struct buf d = {0};
			if (linediff(c->kind == 'A' ? "" : c->before, c->kind == 'A' ? 0 : c->nbefore, c->kind == 'D' ? "" : c->after,
			             c->kind == 'D' ? 0 : c->nafter, 3, 4000, &d) == 0 && d.len) {
				bufputs(b, "<details class=\"diff\"><summary>diff</summary><pre>");
				size_t shown = d.len < DIFFMAX ? d.len : DIFFMAX;
				*diffed += shown;
				for (const char *p = d.data, *end = d.data + shown; p < end;) {
					const char *nl = memchr(p, '\n', end - p);
					size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
					const char *cls = *p == '+' ? "add" : *p == '-' ? "del" : NULL;
					if (cls)
						bufprintf(b, "<span class=\"%s\">", cls);
					htmltext(b, p, n);
					if (cls)
						bufputs(b, "</span>");
					p += n;
				}
				if (shown < d.len)
					bufprintf(b, "\n[... %zu more bytes of diff: nightshift diff RUN --step %d ...]", d.len - shown, l->from);
				bufputs(b, "</pre></details>");
			}
			buffree(&d);
		}
		bufputs(b, "</li>\n");
	}
	bufputs(b, "</ul></details></li>\n");
}

/* A stranger's text on a line, cut to max bytes (on a character) with an ellipsis. */
static void linetext(struct buf *b, const char *s, size_t max)
{
	size_t n = strlen(s), k = n > max ? utf8cut(s, max) : n;
	visible(b, s, k, 1, 1);
	if (k < n)
		bufputs(b, "&hellip;");
}

/* What a call's arguments say in one line: the command, the path, or compact JSON. */
static void argline(struct buf *b, const cJSON *args)
{
	const char *s = jsonstr(args, "command", NULL);
	if (!s)
		s = jsonstr(args, "path", NULL);
	char *j = s ? NULL : cJSON_PrintUnformatted(args);
	if (s || j) {
		bufputs(b, "<code>");
		linetext(b, s ? s : j, ARGLINE);
		bufputs(b, "</code>");
	}
	free(j);
}

/* The state of one job's timeline while its events are read. A call's line is held until its
 * result arrives, so that one line says the decision and the exit code. */
struct timeline {
	struct buf *b;
	struct folds *folds;           /* the texts behind folds, shared by the page */
	struct buf call;               /* the open call's <li>, its summary up to nightshift's last fact */
	struct buf what;               /* the open call's tool and arguments: the model's text, said last */
	cJSON *body;                   /* the open call's blocks (in data), NULL when no call is open */
	const struct runchanges *ch;
	int lastlayer;                 /* index of the next layer of changes to look at */
	const char *ws;                /* the job's workspace: only its chain's layers are its own; NULL: all */
	unsigned char *shown;          /* by layer: shown already (in this job or one before) */
	int laststep;                  /* the job's highest step so far */
	int denials;                   /* denied and aborted calls */
	int items;                     /* items in the timeline so far */
};

/* Before each item of the timeline: every CHUNK items a new list, so that a long timeline costs
 * the browser only the lists near the view (content-visibility). */
static void item(struct timeline *t)
{
	if (++t->items % CHUNK == 0)
		bufputs(t->b, "</ol><ol class=\"c\">\n");
}

static void closecall(struct timeline *t)
{
	if (!t->body)
		return;
	item(t);
	bufadd(t->b, t->call.data, t->call.len);
	if (t->what.len) {
		bufputs(t->b, " &middot; ");
		bufadd(t->b, t->what.data, t->what.len);
	}
	bufputs(t->b, "</summary></details></li>\n");
	t->call.len = 0;
	t->what.len = 0;
	t->body = NULL;
}

/* Layers whose changes began at or before step are shown before the step's call. */
static void changesupto(struct timeline *t, int step)
{
	while (t->ch && (size_t)t->lastlayer < t->ch->n && t->ch->v[t->lastlayer].from < step) {
		const struct layerchanges *l = &t->ch->v[t->lastlayer++];
		if (t->shown[l - t->ch->v] || (t->ws && strcmp(l->ws, t->ws) != 0))
			continue; /* another workspace's chain: jobs on other workspaces ran at the same time */
		t->shown[l - t->ch->v] = 1;
		closecall(t);
		if (l->n) {
			item(t);
			changesblock(t->b, l, &t->folds->diffed);
		}
	}
}

static void decision(struct timeline *t, const cJSON *ev)
{
	struct buf *c = &t->call;
	int step = (int)num(ev, "step", 0);
	changesupto(t, step);
	if (step > t->laststep)
		t->laststep = step;
	closecall(t);
	const char *d = jsonstr(ev, "decision", "?");
	int deny = strcmp(d, "deny") == 0, abort = strcmp(d, "abort") == 0;
	t->denials += deny || abort;
	bufprintf(c, "<li class=\"call %s\" id=\"step-%d\"><details", deny ? "deny" : abort ? "abort" : "allow", step);
	t->body = fold(c, t->folds);
	/* nightshift's facts first (here the verdict, then the result's exit code and time), the model's
	 * tool name and arguments last: no text of a stranger's stands where a verdict is read */
	bufprintf(c, "><summary>step %d &middot; %s", step, deny ? "<span class=\"bad\">&#10007; DENIED</span>" : abort ? "<span class=\"bad\">&#9940; ABORTED</span>" : "<span class=\"ok\">&#10003; allowed</span>");
	const cJSON *rule = get(ev, "rule");
	if (cJSON_IsNumber(rule))
		bufprintf(c, " by rule %d", rule->valueint);
	else if (cJSON_IsString(rule) && strncmp(rule->valuestring, "admin ", 6) == 0 && atoi(rule->valuestring + 6) > 0)
		bufprintf(c, " by admin rule %d", atoi(rule->valuestring + 6));
	else
		bufputs(c, " by the default");
	bufputs(&t->what, "<b>");
	linetext(&t->what, jsonstr(ev, "tool", "?"), TOOLLINE);
	bufputs(&t->what, "</b> ");
	argline(&t->what, get(ev, "arguments"));
	const char *tool = jsonstr(ev, "tool", "?"), *reason = jsonstr(ev, "reason", "");
	if (strlen(tool) > TOOLLINE) /* the whole name behind the fold */
		block(t->folds, t->body, "pre", tool, strlen(tool), NULL);
	block(t->folds, t->body, "p", reason, strlen(reason), NULL);
	char *args = cJSON_Print(get(ev, "arguments"));
	block(t->folds, t->body, "pre", args ? args : "", args ? strlen(args) : 0, NULL);
	free(args);
}

static void result(struct timeline *t, const cJSON *ev)
{
	struct buf *c = &t->call;
	if (!t->body) {
		bufputs(c, "<li class=\"call\"><details");
		t->body = fold(c, t->folds);
		bufprintf(c, "><summary>step %d result", (int)num(ev, "step", 0));
	}
	bufprintf(c, " &middot; exit code %.0f", num(ev, "exit_code", -1));
	if (num(ev, "signal", 0))
		bufprintf(c, ", signal %.0f", num(ev, "signal", 0));
	if (cJSON_IsTrue(get(ev, "timed_out")))
		bufputs(c, ", <span class=\"bad\">timed out</span>");
	if (cJSON_IsTrue(get(ev, "oom")))
		bufputs(c, ", <span class=\"bad\">out of memory</span>");
	bufprintf(c, " &middot; %.0f ms", num(ev, "duration_ms", 0));
	const char *err = jsonstr(ev, "error", NULL);
	if (err) {
		bufputs(c, " &middot; <span class=\"bad\">error</span>");
		block(t->folds, t->body, "bad", err, strlen(err), NULL);
	}
	const char *names[] = {"stdout", "stderr", "output"};
	for (int i = 0; i < 3; i++) {
		const char *s = jsonstr(ev, names[i], NULL);
		if (s && *s) {
			block(t->folds, t->body, "mute", names[i], strlen(names[i]), NULL);
			cutstr(t->folds, t->body, s);
		}
	}
}

static void response(struct timeline *t, const cJSON *ev)
{
	struct buf *b = t->b;
	closecall(t);
	item(t);
	const cJSON *u = get(ev, "usage");
	bufprintf(b, "<li class=\"turn\">turn %.0f &middot; <span class=\"mute\">%.0f in, %.0f out", num(ev, "turn", 0),
	          num(u, "input", 0), num(u, "output", 0));
	const char *fin = jsonstr(ev, "finish", NULL);
	if (fin) {
		bufputs(b, ", ");
		txt(b, fin);
	}
	bufputs(b, "</span>");
	double attempts = num(ev, "attempts", 1);
	const cJSON *fails = get(ev, "errors");
	if (attempts > 1 && attempts < 1e9) {
		const cJSON *first = cJSON_GetArrayItem(fails, 0);
		bufprintf(b, " <span class=\"warn\">&#8635; %.0f retr%s, waited %.1fs: ", attempts - 1, attempts == 2 ? "y" : "ies",
		          num(ev, "waited_ms", 0) / 1000);
		txt(b, jsonstr(first, "error", "?"));
		bufputs(b, "</span>");
	}
	const char *err = jsonstr(ev, "error", NULL);
	if (err) {
		bufputs(b, " <span class=\"bad\">&#10007; ");
		txt(b, err);
		bufputs(b, "</span>");
	}
	char *text = modeltext(get(ev, "response"));
	size_t n = strlen(text);
	if (n > TEXTFOLD) {
		bufputs(b, "<details");
		cut(t->folds, fold(b, t->folds), text, n);
		bufprintf(b, "><summary>the model said (%zu bytes)</summary></details>", n);
	} else if (n) {
		bufputs(b, "<pre>");
		htmltext(b, text, n);
		bufputs(b, "</pre>");
	}
	free(text);
	bufputs(b, "</li>\n");
}

/* An event shown folded: its summary, and text behind the fold. */
static void folded(struct timeline *t, const char *summary, const char *s)
{
	closecall(t);
	item(t);
	bufputs(t->b, "<li class=\"other\"><details");
	cutstr(t->folds, fold(t->b, t->folds), s);
	bufputs(t->b, "><summary>");
	txt(t->b, summary);
	bufputs(t->b, "</summary></details></li>\n");
}

static void event(struct timeline *t, const char *type, const cJSON *ev)
{
	struct buf *b = t->b;
	if (strcmp(type, "decision") == 0) {
		decision(t, ev);
	} else if (strcmp(type, "tool_result") == 0) {
		result(t, ev);
	} else if (strcmp(type, "model_response") == 0) {
		response(t, ev);
	} else if (strcmp(type, "job_start") == 0) {
		folded(t, "input", jsonstr(ev, "input", ""));
	} else if (strcmp(type, "output") == 0) {
		closecall(t);
		item(t);
		char *o = cJSON_Print(get(ev, "output"));
		bufputs(b, "<li class=\"other\">typed output<pre>");
		txt(b, o ? o : "");
		bufputs(b, "</pre></li>\n");
		free(o);
	} else if (strcmp(type, "job_end") == 0) {
		changesupto(t, t->laststep + 1);
		closecall(t);
		item(t);
		bufputs(b, "<li class=\"other\">job ended: ");
		status(b, jsonstr(ev, "status", NULL));
		const char *err = jsonstr(ev, "error", NULL);
		if (err) {
			bufputs(b, " &middot; ");
			txt(b, err);
		}
		bufputs(b, "</li>\n");
	} else if (strcmp(type, "file") == 0) {
		closecall(t);
		item(t);
		bufputs(b, "<li class=\"other\">declared file <code>");
		nametext(b, jsonstr(ev, "path", "?"));
		bufprintf(b, "</code> <span class=\"mute\">(%.0f bytes)</span></li>\n", num(ev, "bytes", 0));
	} else if (strcmp(type, "context_compacted") == 0) {
		char s[128];
		snprintf(s, sizeof s, "context: %.0f older messages summarized by the model%s", num(ev, "count", 0),
		         jsonstr(ev, "error", NULL) ? " (failed)" : "");
		folded(t, s, jsonstr(ev, "summary", jsonstr(ev, "error", "")));
	} else if (strcmp(type, "hard_links") == 0) {
		char s[160];
		snprintf(s, sizeof s, "warning: %.0f workspace file%s hard links outside the workspace", num(ev, "count", 0),
		         num(ev, "count", 0) == 1 ? " has" : "s have");
		char *j = cJSON_PrintUnformatted(ev);
		folded(t, s, j);
		free(j);
	} else if (strcmp(type, "model_request") != 0 && strcmp(type, "snapshot") != 0) {
		char *j = cJSON_PrintUnformatted(ev);
		folded(t, type, j);
		free(j);
	}
}

/* The page holds PAGEMAX bytes at most: a record decompresses to any size (a log of a few hundred
 * KB can hold millions of calls), so past it the page says so and reads no more. */
static int pagefull(const struct buf *b, const struct folds *folds)
{
	return b->len + folds->bytes > PAGEMAX;
}

/* Job's timeline into b; *full set when the page filled up before its log ended. */
static int jobsection(struct buf *b, struct folds *folds, const char *dir, const char *job, const struct runchanges *ch,
                      const char *ws, unsigned char *shown, int *denials, int *full, struct err *e)
{
	char *path = xasprintf("%s/jobs/%s/events.jsonl.zst", dir, job);
	struct evreader *r;
	int rc = evropen(&r, path, e);
	free(path);
	bufputs(b, "<section class=\"job\" id=\"job-");
	txt(b, job);
	bufputs(b, "\"><h2>Job ");
	txt(b, job);
	bufputs(b, "</h2><ol class=\"c\">\n");
	if (rc < 0) {
		bufputs(b, "<li class=\"other bad\">no event log: ");
		txt(b, e->msg);
		bufputs(b, "</li></ol></section>\n");
		return 0;
	}
	struct timeline t = {.b = b, .folds = folds, .ch = ch, .ws = ws, .shown = shown};
	const char *line;
	size_t len;
	while (!(*full = pagefull(b, folds)) && (rc = evrnext(r, &line, &len, e)) == 1) {
		cJSON *ev = cJSON_ParseWithLength(line, len);
		const char *type = jsonstr(ev, "type", NULL);
		if (type)
			event(&t, type, ev);
		cJSON_Delete(ev);
	}
	closecall(&t);
	buffree(&t.call);
	buffree(&t.what);
	if (*full)
		bufprintf(b, "<li class=\"other bad\">&#10007; the page stops here: the report holds at most %d MiB of a "
		             "run's events; the rest of this job's event log is not shown (nightshift audit lists every "
		             "call)</li>\n", PAGEMAX >> 20);
	if (evrtruncated(r))
		bufputs(b, "<li class=\"other bad\">&#10007; the event log ends inside a line: the run was cut short</li>\n");
	evrclose(r);
	*denials = t.denials;
	bufputs(b, "</ol></section>\n");
	return rc < 0 ? -1 : 0;
}

int reportwrite(const char *dir, int64_t maxbytes, FILE *out, struct err *warn, struct err *e)
{
	cJSON *run = runjsonread(dir, e);
	if (!run)
		return errc(e, ERR_INPUT, "%s is not a run directory: %s", dir, e->msg);
	struct runchanges ch = {0};
	struct err ce = {0};
	int haschanges = changesread(dir, maxbytes, &ch, &ce) == 0;
	*warn = (struct err){0};
	if (!haschanges)
		errc(warn, ce.kind, "the page shows no workspace changes: %s", ce.msg);
	cJSON *needs = needsof(dir, run);
	char sd[64] = {0}, jd[64] = {0};
	cspdigest(style, sd);
	cspdigest(script, jd);
	struct buf b = {0};
	bufputs(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ");
	bufprintf(&b, "style-src '%s'; script-src '%s'; img-src data:; base-uri 'none'; form-action 'none'\">\n", sd, jd);
	bufputs(&b, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" "
	            "content=\"no-referrer\">\n<title>nightshift ");
	txt(&b, jsonstr(run, "run_id", "run"));
	bufprintf(&b, "</title>\n<style>%s</style>\n</head><body>\n", style);
	header(&b, dir, run);
	bufputs(&b, "<nav><label><input type=\"checkbox\" id=\"only\"> show only denied and aborted calls</label> "
	            "&middot; <a href=\"#jobs\">jobs</a></nav>\n<noscript><p>Without script the folds of calls and "
	            "long texts open empty; the event logs hold them (zstd -dc RUN/jobs/JOB/events.jsonl.zst).</p></noscript>\n");
	struct buf body = {0};
	cJSON *denials = cJSON_CreateObject();
	struct folds folds = {cJSON_CreateArray(), 0, 0, 0};
	if (!haschanges) {
		bufputs(&body, "<p class=\"bad\">The snapshot layers cannot be read: ");
		txt(&body, ce.msg);
		bufputs(&body, "</p>\n");
	}
	const cJSON *j;
	int rc = 0, full = 0;
	unsigned char *shown = xcalloc(ch.n + 1, 1);
	cJSON_ArrayForEach(j, get(run, "jobs"))
	{
		if (!runnameok(j->string))
			continue;
		if (full) {
			bufputs(&body, "<section class=\"job\" id=\"job-");
			txt(&body, j->string);
			bufputs(&body, "\"><h2>Job ");
			txt(&body, j->string);
			bufputs(&body, "</h2><p class=\"bad\">Not shown: the page is full.</p></section>\n");
			cJSON_AddStringToObject(denials, j->string, "?");
			continue;
		}
		int nd = 0;
		/* a job's workspace (a delegate's is its caller's): with several, each has a chain of its own */
		const char *ws = jsonstr(j, "workspace", NULL), *parent = jsonstr(j, "parent", NULL);
		if (!ws && parent)
			ws = jsonstr(get(get(run, "jobs"), parent), "workspace", NULL);
		if (jobsection(&body, &folds, dir, j->string, haschanges ? &ch : NULL, ws, shown, &nd, &full, e) < 0) {
			rc = -1;
			break;
		}
		if (full) {
			char at[32];
			snprintf(at, sizeof at, "%d+", nd);
			cJSON_AddStringToObject(denials, j->string, at);
		} else {
			cJSON_AddNumberToObject(denials, j->string, nd);
		}
	}
	if (full) {
		char was[sizeof warn->msg];
		snprintf(was, sizeof was, "%s", warn->msg);
		errc(warn, ERR_INPUT, "the page stops where it holds %d MiB of the run's events: the logs hold more than it "
		     "shows%s%s", PAGEMAX >> 20, was[0] ? "; " : "", was);
	}
	free(shown);
	jobtable(&b, run, needs, denials);
	endskipped(&b, run);
	bufadd(&b, body.data ? body.data : "", body.len);
	buffree(&body);
	cJSON_Delete(denials);
	datablock(&b, folds.all);
	cJSON_Delete(folds.all);
	bufprintf(&b, "<script>%s</script>\n</body></html>\n", script);
	if (rc == 0 && fwrite(b.data, 1, b.len, out) != b.len)
		rc = errf(e, "write the report:");
	buffree(&b);
	cJSON_Delete(needs);
	cJSON_Delete(run);
	changesfree(&ch);
	return rc;
}
