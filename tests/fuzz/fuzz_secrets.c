/* fuzz_secrets: masking secrets in what a step prints (util/secrets.h), text from a hostile step.
 * Input: SECRET \0 TEXT. Invariants: masking ends; what it returns holds neither the secret nor
 * its cleaned form whole (when 8 bytes or more); text holding neither and no escape is left as it
 * is. The time is bounded by RUNMAX and the output cap, which libFuzzer's -timeout checks. */
#include "fuzz.h"
#include "../../util/secrets.h"
#include "../../util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *zero = memchr(data, 0, size);
	if (!zero || size > 70000)
		return 0;
	char *secret = strndup((const char *)data, (size_t)(zero - data));
	char *text = strndup((const char *)zero + 1, size - (size_t)(zero - data) - 1);
	struct secrets s = {0};
	secretsadd(&s, "S", secret);
	secretsadd(&s, "K", "fixed-key-0123456789");
	char *m = secretsmask(&s, text);
	const char *out = m ? m : text;
	if (strlen(secret) >= 8)
		fuzzassert(!strstr(out, secret));
	fuzzassert(!strstr(out, "fixed-key-0123456789"));
	if (!m)
		fuzzassert(!secretsfound(&s, text));
	free(m);
	secretsfree(&s);
	free(secret);
	free(text);
	return 0;
}
