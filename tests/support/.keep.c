/* keeps the support library non-empty */
typedef int muster_testsupport_keep;
