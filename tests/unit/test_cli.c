/* test_cli: exit codes come from one table in cmd/cli.c (DESIGN.md's list): each kind of error
 * and each end of a run to its code, anything else to 1. */
#include "t.h"
#include "../../cmd/cmd.h"
#include "../../run/run.h"

int main(void)
{
	ok(exitfor(ERR_FAIL) == 1, "a failure exits 1");
	ok(exitfor(ERR_INPUT) == 2, "an input error exits 2");
	ok(exitfor(ERR_ABORT) == 3, "an abort exits 3");
	ok(exitfor(ERR_VERIFY) == 4, "a verification failure exits 4");
	ok(exitfor(ERR_INTR) == 130, "an interruption exits 130");
	ok(exitfor((enum errkind)99) == 1, "a kind without a code exits 1");
	ok(exitforrun(RUN_SUCCEEDED) == 0, "a run that succeeded exits 0");
	ok(exitforrun(RUN_FAILED) == 1, "a failed run exits 1");
	ok(exitforrun(RUN_ABORTED) == 3, "an aborted run exits 3");
	ok(exitforrun(RUN_CANCELLED) == 130, "a cancelled run exits 130");
	ok(exitforrun(-1) == 1 && exitforrun(99) == 1, "an end without a code exits 1");
	return tdone();
}
