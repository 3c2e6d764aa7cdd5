/*
 * check_run.h - the one way every suite's main() runs: Check's defaults (each test forked,
 * CK_NORMAL output, CK_DEFAULT_TIMEOUT from the environment), exit status for CTest.
 *
 *     int main(void) { return check_run(store_suite()); }
 */
#ifndef MUSTER_TESTS_CHECK_RUN_H
#define MUSTER_TESTS_CHECK_RUN_H

#include <check.h>

/* Runs every test of s (takes ownership of s) and returns EXIT_SUCCESS or EXIT_FAILURE. */
int check_run(Suite *s);
/* A suite (new) of one test case, both named name, of tests (NULL-terminated); setup and
 * teardown (either may be NULL) run around each test as a checked fixture, inside its fork.
 * The whole suite function of a suite of one case:
 *
 *     int main(void)
 *     {
 *         const TTest *tests[] = {test_x_one, test_x_two, NULL};
 *         return check_run(check_suite("x", NULL, NULL, tests));
 *     }
 */
Suite *check_suite(const char *name, SFun setup, SFun teardown, const TTest *tests[]);

#endif
