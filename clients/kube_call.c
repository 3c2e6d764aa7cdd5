/*
 * kube_call.c - the one funnel of write-back's requests to the API server.
 *
 * Bindings, patches, evictions, Events, PodGroup status and the reads that decide them all
 * go through kube__call, which asks kube__may_write (kube_term.c) first, so a replica that
 * does not lead writes nothing, and counts each call (writebacks, writebackFailures). It
 * sits below every write-back file (kube_bind.c, kube_events.c, kube_pgstatus.c,
 * kube_outbox.c) and calls none of them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "kube_writeback.h"

void kube__count(struct kube *k, uint64_t *field)
{
    pthread_mutex_lock(&k->mu);
    (*field)++;
    pthread_mutex_unlock(&k->mu);
}

const char *kube__status_message(struct kube_resp *r, char *buf, size_t n)
{
    json_t *doc = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
    const char *m = json_string_value(json_object_get(doc, "message"));
    snprintf(buf, n, "HTTP %ld%s%s", r->status, m ? ": " : "", m ? m : "");
    json_decref(doc);
    return buf;
}

int kube__call(struct kube *k, struct kube_http *h, const char *method, const char *path,
               const char *ctype, json_t *body, struct kube_resp *r, struct err *err)
{
    if (!kube__may_write(k))
        return err_set(err, ERR_UNAVAILABLE, "%s '%s': this replica may not write now", method,
                       path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    char msg[512];
    kube__resp_release(r);
    int rc = kube__http_request(h, method, path, ctype, text, 30000, r, err);
    if (rc == 0 && r->status >= 500)
        rc = err_set(err, ERR_NETWORK, "%s '%s': %s", method, path,
                     kube__status_message(r, msg, sizeof(msg)));
    kube__count(k, rc == 0 ? &k->c.writebacks : &k->c.writeback_failures);
    free(text);
    return rc;
}
