/* front_msg.c - what the front end writes itself: its error answers, and the
 * X-Muster-Front header that tells civetweb's side who the client is (front.h). */
#include <ctype.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "front_msg.h"

static const char *reason(int status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 431:
        return "Request Header Fields Too Large";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

static int code_of(int status)
{
    switch (status) {
    case 408:
        return ERR_REQUEST_TIMEOUT;
    case 413:
        return ERR_TOO_LARGE;
    case 431:
        return ERR_HEADERS_TOO_LARGE;
    case 502:
        return ERR_NETWORK;
    case 503:
        return ERR_UNAVAILABLE;
    case 505:
        return ERR_VERSION;
    default:
        return ERR_INVALID;
    }
}

char *api__front_error(int status, const char *msg, const char *headers, size_t *len)
{
    json_t *body =
        json_pack("{s:{s:s, s:s}}", "error", "code", err_name(code_of(status)), "message", msg);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    char *out = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\nCache-Control: no-store\r\n%s\r\n"
                          "Connection: close\r\n\r\n%s\n",
                          status, reason(status), (text ? strlen(text) : 2) + 1, headers,
                          text ? text : "{}");
    json_decref(body);
    free(text);
    *len = strlen(out);
    return out;
}

/* The subject travels percent-encoded: it may hold any byte but CR and LF. */
char *api__front_header_value(const char *secret, const struct api__front_info *info)
{
    char enc[3 * sizeof(info->subject) + 1];
    size_t k = 0;

    for (const unsigned char *p = (const unsigned char *)info->subject; *p; p++) {
        if (isalnum(*p) || strchr("=.-_ ,", *p))
            enc[k++] = (char)*p;
        else
            k += (size_t)snprintf(enc + k, 4, "%%%02X", *p);
    }
    enc[k] = '\0';
    return xasprintf("%s: %s;addr=%s;tls=%d;cert=%s", API_FRONT_HEADER, secret, info->address,
                     info->tls, enc);
}

int api__front_header_parse(const char *value, const char *secret, struct api__front_info *out)
{
    char dec[sizeof(out->subject)];
    size_t k = 0;
    int tls = -1, used = 0;

    memset(out, 0, sizeof(*out));
    if (!value || strlen(value) < API_FRONT_SECRET_HEX ||
        CRYPTO_memcmp(value, secret, API_FRONT_SECRET_HEX) != 0)
        return -1;
    const char *p = value + API_FRONT_SECRET_HEX;
    if (sscanf(p, ";addr=%63[^;];tls=%d;cert=%n", out->address, &tls, &used) != 2 || !used)
        return -1;
    out->tls = tls == 1;
    for (p += used; *p && k + 1 < sizeof(dec); p++) {
        unsigned hex;
        if (*p == '%' && sscanf(p + 1, "%2x", &hex) == 1) {
            dec[k++] = (char)hex;
            p += 2;
        } else {
            dec[k++] = *p;
        }
    }
    dec[k] = '\0';
    memcpy(out->subject, dec, k + 1);
    return 0;
}
