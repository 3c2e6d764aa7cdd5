#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vset(struct err *err, int code, const char *field, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
    return code;
}

int err_set(struct err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, NULL, fmt, ap);
    va_end(ap);
    return code;
}

int err_setf(struct err *err, int code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, field, fmt, ap);
    va_end(ap);
    return code;
}

int err_prefix(struct err *err, const char *fmt, ...)
{
    char prefix[ERR_MSG_MAX];
    char old[ERR_MSG_MAX];
    va_list ap;

    if (!err)
        return ERR_INTERNAL;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    /* truncation is acceptable: a long message keeps its start */
    size_t n = strlen(prefix);
    if (n > sizeof(err->msg) - 3)
        n = sizeof(err->msg) - 3;
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    size_t rest = sizeof(err->msg) - n - 3;
    size_t olen = strnlen(old, rest);
    memcpy(err->msg + n + 2, old, olen);
    err->msg[n + 2 + olen] = '\0';
    return err->code;
}

void err_clear(struct err *err)
{
    if (!err)
        return;
    err->code = 0;
    err->msg[0] = '\0';
    err->field[0] = '\0';
}

const char *err_name(int code)
{
    switch (code) {
#define ERR__NAME(name, val, http, str)                                                            \
    case val:                                                                                      \
        return str;
        ERR_MAP(ERR__NAME)
#undef ERR__NAME
    }
    return "Unknown";
}

int err_http_status(int code)
{
    switch (code) {
#define ERR__HTTP(name, val, http, str)                                                            \
    case val:                                                                                      \
        return http;
        ERR_MAP(ERR__HTTP)
#undef ERR__HTTP
    }
    return 500;
}
