/*
 * test_why_msg.c - the table of reason messages (scheduler/reason/why_msg.h): every reason
 * code has its messages there, WHY_MSG_MAP lists them in WHY_MAP's order, and it lists
 * every message the header defines, so a message cannot be added beside the table.
 * (docs/why.md against WHY_MAP is test_preempt's test_preempt_why_doc_table.)
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "reason.h"
#include "sched_util.h"
#include "why_msg_map.h"

struct row {
    int code;
    const char *names;       /* "WHY_MSG_A, WHY_MSG_B" */
    const char *const *fmts; /* NULL-terminated */
};

static const struct row rows[] = {
#define ROW(code, ...) {code, #__VA_ARGS__, (const char *const[]){__VA_ARGS__, NULL}},
    WHY_MSG_MAP(ROW)
#undef ROW
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const struct row *row_of(int code)
{
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i].code == code)
            return &rows[i];
    return NULL;
}

/* Every reason code has at least one message. */
START_TEST(test_why_msg_every_code)
{
    for (int code = 0; code < WHY_CODE_COUNT; code++) {
        const struct row *r = row_of(code);
        ck_assert_msg(r && r->fmts[0], "%s has no message in WHY_MSG_MAP (why_msg_map.h)",
                      why_code_name(code));
    }
}
END_TEST

/* One row per code, in WHY_MAP's order, the code-less row last; no message is empty or
 * ends with a period or a newline. */
START_TEST(test_why_msg_map_order)
{
    int last = -1;
    for (size_t i = 0; i < NROWS; i++) {
        int code = rows[i].code < 0 ? WHY_CODE_COUNT : rows[i].code;
        ck_assert_msg(code <= WHY_CODE_COUNT, "row %zu: code %d is not in WHY_MAP", i, code);
        ck_assert_msg(code > last, "row %zu (%s): not in WHY_MAP's order or listed twice", i,
                      rows[i].code < 0 ? "-1" : why_code_name(code));
        last = code;
        for (const char *const *f = rows[i].fmts; *f; f++) {
            size_t len = strlen(*f);
            ck_assert_msg(len > 0, "row %zu (%s): an empty message", i, rows[i].names);
            ck_assert_msg((*f)[len - 1] != '.' && (*f)[len - 1] != '\n',
                          "row %zu: '%s' ends with a period or a newline", i, *f);
        }
    }
}
END_TEST

/* 1 when name is one of the comma-separated names of some row. */
static int listed(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < NROWS; i++)
        for (const char *p = rows[i].names; (p = strstr(p, name)); p += len)
            if ((p == rows[i].names || p[-1] == ' ') && (p[len] == ',' || !p[len]))
                return 1;
    return 0;
}

/* Each #define WHY_MSG_* of the headers is in WHY_MSG_MAP. */
START_TEST(test_why_msg_map_lists_every_define)
{
    static const char *const headers[] = {"why_msg.h", "why_msg_preempt.h"};
    int defines = 0;
    for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/scheduler/reason/%s", getenv("MUSTER_SOURCE_DIR"),
                 headers[i]);
        char *h = sched_util_read(path);
        ck_assert_msg(h != NULL, "cannot read '%s'", path);
        for (const char *p = h; (p = strstr(p, "\n#define WHY_MSG_")); p++) {
            char name[128];
            ck_assert_int_eq(sscanf(p + 9, "%127[A-Z_0-9]", name), 1);
            if (!strcmp(name, "WHY_MSG_MAP"))
                continue;
            defines++;
            ck_assert_msg(listed(name), "%s is not in WHY_MSG_MAP", name);
        }
        free(h);
    }
    ck_assert_int_gt(defines, 50);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_why_msg_every_code, test_why_msg_map_order,
                            test_why_msg_map_lists_every_define, NULL};
    return check_run(check_suite("why_msg", NULL, NULL, tests));
}
