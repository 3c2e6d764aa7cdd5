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

#endif
