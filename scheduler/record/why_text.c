/*
 * why_text.c - the why document's parts written as text: the head, and the members from
 * "primary" to "preemption" in parts, so that the parts the jobs failing in a row share (the
 * node filter of their shape) are serialised once. The same bytes a dump of the whole
 * document gives (store_json_text: jansson's compact output, members in insertion order).
 */
#include <stdlib.h>
#include <string.h>

#include "why.h"
#include "why_msg.h"

/* The text of the node-filter part (borrowed, valid until the next call): the jobs of one
 * shape that fail in a row share one (cycle_attempt.c caches it per shape). */
static const char *nf_text(struct sched_cyc *c, json_t *nf)
{
    struct sched_why_writer *ww = sched__why_w(c);
    if (nf != ww->nf) {
        json_decref(ww->nf); /* held, so its address is not reused while cached */
        free(ww->nf_text);
        ww->nf = json_incref(nf);
        ww->nf_text = store_json_text(nf, 0);
    }
    return ww->nf_text;
}

const char *sched__why_blockers_text(struct sched_cyc *c, json_t *blockers)
{
    struct sched_why_writer *ww = sched__why_w(c);
    if (!blockers)
        return "null";
    if (blockers != ww->blockers || !ww->blockers_text.len) {
        json_decref(ww->blockers); /* held, so its address is not reused while cached */
        ww->blockers = json_incref(blockers);
        ww->blockers_text.len = 0;
        store_jw_value(&ww->blockers_text, blockers, JSON_SORT_KEYS);
        store_jw_raw(&ww->blockers_text, "", 1);
    }
    return ww->blockers_text.buf;
}

/* The n strings one after another (new): no printf, whose %s is slow on kilobytes. */
static char *concat(const char *const *part, size_t n)
{
    size_t len = 0, l;
    for (size_t i = 0; i < n; i++)
        len += strlen(part[i]);
    char *out = xmalloc(len + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        l = strlen(part[i]);
        memcpy(o, part[i], l);
        o += l;
    }
    *o = '\0';
    return out;
}

/* v's text, "null" for NULL or null (new). */
static char *text_or_null(json_t *v)
{
    return v && !json_is_null(v) ? store_json_text(v, 0) : xstrdup("null");
}

/* The document's members from "primary" to "preemption" as the text of one object (new),
 * written in parts so that the node filter's is reused. */
char *sched__why_mid_text(struct sched_cyc *c, const struct sched_why_input *in, int primary,
                          json_t *topology)
{
    json_t *pd = NULL;
    if (in->primary)
        pd = json_pack("{s:s,s:s,s:s}", "code", why_code_name(primary), "class",
                       why_class_name(why_code_class(primary)), "message", in->primary->message);
    json_t *pre =
        in->preemption
            ? json_incref(in->preemption)
            : json_pack("{s:b,s:b,s:s}", "attempted", 0, "relevant", 0, "reason",
                        in->placement ? WHY_MSG_PREEMPT_PLACED : WHY_MSG_PREEMPT_NOT_TRIED);
    char *p = text_or_null(pd), *g = text_or_null(in->gang), *t = text_or_null(topology),
         *e = text_or_null(pre);
    const char *b = json_is_null(in->blockers) ? "null" : sched__why_blockers_text(c, in->blockers);
    const char *nf = in->nf && !json_is_null(in->nf) ? nf_text(c, in->nf) : "null";
    const char *part[] = {
        "{\"primary\":",  p, ",\"blockers\":",   b, ",\"gang\":", g, ",\"nodeFilter\":", nf,
        ",\"topology\":", t, ",\"preemption\":", e, "}"};
    char *out = concat(part, sizeof(part) / sizeof(part[0]));
    free(p);
    free(g);
    free(t);
    free(e);
    json_decref(pd);
    json_decref(pre);
    return out;
}

/* {"job","state","cycle","auditSeq"} as store_json_text writes it. New. */
char *sched__why_id_head(const char *job, const char *state, uint64_t cycle, uint64_t seq)
{
    struct store_jw w = {0};
    store_jw_lit(&w, "{\"job\":");
    store_jw_str(&w, job);
    store_jw_key(&w, "state");
    store_jw_str(&w, state);
    store_jw_key(&w, "cycle");
    store_jw_int(&w, (int64_t)cycle);
    store_jw_key(&w, "auditSeq");
    store_jw_int(&w, (int64_t)seq);
    store_jw_raw(&w, "}", 2);
    return w.buf;
}
