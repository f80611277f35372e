/*
 * fuzz-keepstate.c - libFuzzer target for keep's state file parser
 * (state.h): a state file is read back at every start, whatever wrote it.
 *
 * Feeds arbitrary bytes to hs_keep_state_parse(). A failure leaves nothing
 * allocated and says why; a success holds every profile line it read.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "keep/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_keep_state st;
	struct hs_error err = { 0 };
	FILE *f;
	int rc;

	if (!size || !(f = fmemopen((void *)data, size, "r")))
		return 0;
	rc = hs_keep_state_parse(f, &st, &err);
	fclose(f);
	if (rc) {
		assert(rc < 0 && !st.profiles && !st.nprofiles);
		assert(rc != -EINVAL || err.msg[0]);
		return 0;
	}
	for (size_t i = 0; i < st.nprofiles; i++)
		assert(st.profiles[i]);
	hs_keep_state_release(&st);
	return 0;
}
