#ifndef SLC_TEST_H
#define SLC_TEST_H

/*
 * What every Check unit test's main() does once its suite is built: run
 * it, report, and turn the failures into the exit status `make test`
 * reads.
 */

#include <check.h>
#include <stdlib.h>

static inline int
slc_check_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* SLC_TEST_H */
