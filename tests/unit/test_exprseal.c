/* exprseal: after exprsealenv, ${{ env.NAME }} expands to nothing and never reads the environment
 * (a record's manifest replayed); inputs still expand; a value inserted is never expanded again. */
#include <stdlib.h>
#include "../../manifest/expr.h"
#include "t.h"

int main(void)
{
	struct strv sets = {0};
	strvadd(&sets, "who=${{ env.SEAL_SECRET }}");
	struct exprenv env = {.sets = &sets};
	struct err e = {0};
	setenv("SEAL_SECRET", "ghp_sealtest123", 1);
	char *before = exprexpand("t=${{ env.SEAL_SECRET }}", &env, &e);
	okstr(before, "t=ghp_sealtest123", "before the seal: the environment");
	free(before);
	exprsealenv();
	const char *cases[][2] = {
		{"t=${{ env.SEAL_SECRET }}", "t="},
		{"t=${{env.SEAL_SECRET}}", "t="},
		{"${{ env.SEAL_SECRET }}${{ env.HOME }}${{ env.PATH }}", ""},
		{"t=${{ env.SEAL_UNSET_NAME }}", "t="}, /* unset: nothing either, no error naming the variable */
		{"i=${{ inputs.who }}", "i=${{ env.SEAL_SECRET }}"}, /* an input's value is not expanded again */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = exprexpand(cases[i][0], &env, &e);
		okstr(got, cases[i][1], cases[i][0]);
		free(got);
	}
	ok(exprcheck("${{ env.SEAL_UNSET_NAME }}", &env, &e) == 0, "exprcheck passes a sealed env.*: %s", e.msg);
	ok(exprenvdenied() >= 6, "each sealed read counted: %zu", exprenvdenied());
	struct err e2 = {0};
	ok(exprexpand("${{ env.A.B }}", &env, &e2) == NULL, "env.A.B is still a bad expression");
	strvfree(&sets);
	return tdone();
}
