/* roles.c - the names of roles and the rate syntax (api.h's API_ROLE_MAP and struct
 * api_rate): read by the tokens file, the route table's refusals and musterd's config. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "err.h"

static const char *const role_names[] = {
#define ROLE_NAME(name, str, what) str,
    API_ROLE_MAP(ROLE_NAME)
#undef ROLE_NAME
};

const char *api_role_name(enum api_role role)
{
    return role >= 0 && role < API_ROLE_COUNT ? role_names[role] : "unknown";
}

int api_role_parse(const char *name, enum api_role *out, struct err *err)
{
    for (int i = API_ROLE_NONE + 1; name && i < API_ROLE_COUNT; i++)
        if (!strcmp(name, role_names[i]))
            return *out = (enum api_role)i, 0;
    return err_set(err, ERR_INVALID, "'role' must be one of viewer, operator, admin, not '%.64s'",
                   name ? name : "");
}

int api_rate_parse(const char *s, struct api_rate *out, struct err *err)
{
    char *end = NULL;
    double rate = strtod(s, &end), burst = 0;

    if (end != s && *end == '/') {
        const char *b = end + 1;
        burst = strtod(b, &end);
        if (end == b)
            end = (char *)b - 1; /* "20/" */
    }
    if (end == s || *end || !(rate >= 0) || rate > 1e6 || !(burst >= 0) || burst > 1e6 ||
        (burst > 0 && burst < 1))
        return err_set(err, ERR_INVALID,
                       "a rate must be 'REQUESTS_PER_SECOND' or 'REQUESTS_PER_SECOND/BURST' "
                       "(\"20\", \"20/40\"; 0 is unlimited), not '%.64s'",
                       s);
    *out = (struct api_rate){rate, burst};
    return 0;
}
