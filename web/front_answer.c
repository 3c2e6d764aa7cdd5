/*
 * front_answer.c - reads the front end answers on its own thread, without civetweb.
 *
 * Relaying a request costs a loopback write and read each way and a civetweb worker's
 * wakeup; for a read whose answer is already in the read cache (jobs, a job, why, the
 * topology tree: reads.c) or a short audit tail, that hop was most of its time (bench/README.md
 * "Reads under load"). Such a request is served here by the same code civetweb's worker runs
 * (api__serve: Host, path, route, Origin, identity, role and rate limit, query
 * parameters, the handler, the request metrics and the log line), with a request view
 * whose conn is NULL (api_impl.h's struct req) and r->direct set: whatever would have to
 * wait (a miss, a resourceVersion beyond the store's last commit, the external
 * authenticator) sets r->relay before anything is replied, and the request goes to
 * civetweb as before.
 *
 * The route table says which routes may be answered here and checks each request first
 * (routes.c's front column): api__read_cached, a request whose answer is stored, new
 * enough and gzipped when asked so; api__audit_small, a short tail of the audit log (kept in
 * the read cache from one commit to the next, else read in short read transactions of the
 * store, begun with STORE_READ_NOWAIT: relayed while the map is being grown; LMDB's readers
 * never wait for its writer). That look comes
 * before anything is counted, so a request relayed anyway does not take a token of its
 * rate limit here and another on civetweb's side.
 */
#include <http_parser.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "front_msg.h"
#include "routes.h"
#include "serve.h"

void api_front_answers(struct api *api, int on)
{
    __atomic_store_n(&api->front_answers_off, !on, __ATOMIC_RELAXED);
}

/* A request view of fr for api__serve on this thread (path new in *path). 0, or -1 when
 * the request is one civetweb's reading of must decide (a fragment). */
static int view(struct api *api, const struct api__fr *fr, const struct api__front_info *info,
                struct req *r, char **path)
{
    if (!fr->url || fr->url[0] != '/')
        return -1;
    size_t n = strcspn(fr->url, "?#");
    if (fr->url[n] == '#')
        return -1; /* a fragment: civetweb's reading of it decides */
    *path = xstrndup(fr->url, n);
    *r = (struct req){
        .api = api,
        .fr = fr,
        .method = http_method_str((enum http_method)fr->p.method),
        .raw_path = *path,
        .query = fr->url[n] == '?' ? fr->url + n + 1 : NULL,
        .address = info->address,
        .tls = info->tls,
        .subject = info->subject[0] ? info->subject : NULL,
        .direct = 1,
    };
    return 0;
}

char *api__front_answer(void *ctx, const struct api__fr *fr, const struct api__front_info *info,
                        size_t *len, int *keep_alive)
{
    struct api *api = ctx;
    char allow[128], *path = NULL;
    struct req r;

    if (__atomic_load_n(&api->front_answers_off, __ATOMIC_RELAXED) ||
        (fr->p.method != HTTP_GET && fr->p.method != HTTP_HEAD) ||
        view(api, fr, info, &r, &path) < 0)
        return NULL;
    int i = api__route_lookup(&r, allow, sizeof(allow));
    api__params_free(&r);
    char *out = NULL;
    if (api__route_front(i, &r)) {
        api__serve(&r);
        if (!r.relay) {
            out = r.out;
            r.out = NULL;
            *len = r.out_len;
            *keep_alive = !r.close && fr->keep_alive;
            __atomic_add_fetch(&api->front_answers, 1, __ATOMIC_RELAXED);
        }
    }
    free(r.out);
    free(path);
    return out;
}

char *api__front_head_check(void *ctx, const struct api__fr *fr, const struct api__front_info *info,
                            size_t *len, int *keep_alive)
{
    struct api *api = ctx;
    char *path = NULL, *out = NULL;
    struct req r;

    if (view(api, fr, info, &r, &path) < 0)
        return NULL;
    r.head_only = 1;
    api__serve(&r);
    if (!r.relay) {
        out = r.out;
        r.out = NULL;
        *len = r.out_len;
        *keep_alive = 0; /* the body that follows is never read */
    }
    free(r.out);
    free(path);
    return out;
}
