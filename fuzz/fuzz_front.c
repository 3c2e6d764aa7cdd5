/*
 * fuzz_front.c - the front end's request reader (web/front_req.c) on arbitrary bytes: the
 * framing, limits and checks every client request passes before civetweb sees it.
 *
 * The first byte picks how the rest is cut into pieces (1 to 64 bytes, or whole), as a
 * slow or pipelining client would send them; up to 8 requests are read one after another.
 * Invariants: the reader never consumes more than it was given; the same bytes read whole
 * and in pieces give the same outcome (refused, or the same forwarded request); a refusal
 * carries a status the front end answers with and a non-empty UTF-8 message; a forwarded
 * request parses again as exactly one complete request with a Content-Length equal to its
 * body (never chunked), begins with the X-Muster-Front line, and carries no
 * Transfer-Encoding, Expect or second X-Muster-Front.
 */
#include "fuzz.h"

#include <ctype.h>

#include "../web/front_req.h"
#include "../web/utf8.h"

#define FRONT "X-Muster-Front: secret"

static const struct api__fr_limits lim = {2048, 20, 4096};

struct outcome {
    int status;
    char *forwarded; /* new, or NULL */
    size_t len;
    size_t used;
};

/* Reads one request from data[0..n) in pieces of step bytes (0: whole). */
static struct outcome read_one(const char *data, size_t n, size_t step)
{
    struct api__fr fr;
    struct outcome o = {0};

    api__fr_init(&fr, &lim);
    while (o.used < n && !fr.done && !fr.status) {
        size_t give = step && n - o.used > step ? step : n - o.used;
        size_t got = api__fr_feed(&fr, data + o.used, give);
        FUZZ_CHECK(got <= give, "consumed %zu of %zu", got, give);
        o.used += got;
        if (!got && !fr.done && !fr.status)
            break;
    }
    o.status = fr.status;
    if (fr.status) {
        FUZZ_CHECK(fr.status == 400 || fr.status == 413 || fr.status == 431 || fr.status == 505,
                   "status %d", fr.status);
        FUZZ_CHECK(fr.msg[0] && api__utf8_valid(fr.msg, strlen(fr.msg)), "message '%s'", fr.msg);
    } else if (fr.done) {
        o.forwarded = api__fr_forward(&fr, FRONT, &o.len);
    }
    api__fr_release(&fr);
    return o;
}

static int on_complete(http_parser *p)
{
    (*(int *)p->data)++;
    return 0;
}

/* The forwarded request read back by http-parser. */
static void check_forwarded(const struct outcome *o)
{
    static const http_parser_settings s = {.on_message_complete = on_complete};
    http_parser p;
    int complete = 0;

    http_parser_init(&p, HTTP_REQUEST);
    p.data = &complete;
    size_t used = http_parser_execute(&p, &s, o->forwarded, o->len);
    FUZZ_CHECK(HTTP_PARSER_ERRNO(&p) == HPE_OK && used == o->len && complete == 1,
               "forwarded request does not parse back (%s, %zu of %zu, %d complete): %.300s",
               http_errno_name(HTTP_PARSER_ERRNO(&p)), used, o->len, complete, o->forwarded);
    FUZZ_CHECK(!(p.flags & F_CHUNKED), "forwarded request is chunked");
    const char *eol = strstr(o->forwarded, "\r\n");
    FUZZ_CHECK(eol && !strncmp(eol + 2, FRONT "\r\n", strlen(FRONT) + 2),
               "X-Muster-Front is not the first header: %.300s", o->forwarded);
    const char *head_end = strstr(o->forwarded, "\r\n\r\n");
    FUZZ_CHECK(head_end != NULL, "no end of head");
    char *head = strndup(o->forwarded, (size_t)(head_end - o->forwarded));
    for (char *q = head; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    FUZZ_CHECK(!strstr(head, "\ntransfer-encoding:") && !strstr(head, "\nexpect:") &&
                   !strstr(strstr(head, "\nx-muster-front:") + 1, "\nx-muster-front:"),
               "a header the front end removes was forwarded: %.300s", head);
    free(head);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = data[0] % 65;
    const char *in = (const char *)data + 1;
    size_t n = size - 1, at = 0;

    for (int i = 0; i < 8 && at < n; i++) {
        struct outcome whole = read_one(in + at, n - at, 0);
        struct outcome cut = read_one(in + at, n - at, step);
        /* a request wrong in two ways may be refused for either, by where the bytes are cut */
        FUZZ_CHECK(!whole.status == !cut.status, "status %d whole, %d in pieces of %zu",
                   whole.status, cut.status, step);
        FUZZ_CHECK(!whole.forwarded == !cut.forwarded &&
                       (!whole.forwarded || (whole.len == cut.len && whole.used == cut.used &&
                                             !memcmp(whole.forwarded, cut.forwarded, cut.len))),
                   "whole and in pieces of %zu forward different requests", step);
        int forwarded = whole.forwarded != NULL;
        if (forwarded)
            check_forwarded(&whole);
        free(whole.forwarded);
        free(cut.forwarded);
        if (!whole.used || whole.status || !forwarded)
            break;
        at += whole.used;
    }
    return 0;
}
