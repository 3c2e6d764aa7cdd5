/* sources.c - GET /api/v1/sources: the state of what musterd mirrors (Kubernetes). */
#include "handlers.h"
#include "http.h"

void api__sources(struct req *r)
{
    json_t *doc = r->api->sources ? r->api->sources(r->api->sources_ctx) : NULL;

    if (!doc)
        doc = json_pack("{s:s, s:[]}", "mode", "standalone", "sources");
    api__reply_json(r, 200, doc);
}
