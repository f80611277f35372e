/*
 * record.c - choosing a record backend, and the rules both share.
 */
#include <errno.h>
#include <linux/magic.h>
#include <string.h>

#include "kernel/procfs.h"
#include "record/record.h"

const char *hs_record_backend_name(enum hs_record_backend b)
{
	switch (b) {
	case HS_BACKEND_PTRACE: return "ptrace";
	case HS_BACKEND_BPF: return "bpf";
	default: return "auto";
	}
}

int hs_record_backend_parse(const char *s, enum hs_record_backend *b)
{
	if (!strcmp(s, "auto"))
		*b = HS_BACKEND_AUTO;
	else if (!strcmp(s, "ptrace"))
		*b = HS_BACKEND_PTRACE;
	else if (!strcmp(s, "bpf") || !strcmp(s, "ebpf"))
		*b = HS_BACKEND_BPF;
	else
		return -EINVAL;
	return 0;
}

int hs_record_probe(enum hs_record_backend b, struct hs_error *why)
{
	if (b == HS_BACKEND_BPF)
		return hs_record_bpf_probe(why);
	if (b == HS_BACKEND_PTRACE)
		return hs_record_ptrace_probe(why);
	/* auto: one of the two */
	return hs_record_bpf_probe(NULL) == 0 ? 0 : hs_record_ptrace_probe(why);
}

int hs_record_run(const struct hs_record_opts *o, struct hs_recording *rec,
		  struct hs_record_result *res, struct hs_error *err)
{
	enum hs_record_backend b = o->backend;

	if (b == HS_BACKEND_AUTO)
		b = hs_record_bpf_probe(NULL) == 0 ? HS_BACKEND_BPF : HS_BACKEND_PTRACE;
	memset(res, 0, sizeof(*res));
	res->backend = b;
	if (o->service && b != HS_BACKEND_BPF) {
		struct hs_error why = { 0 };

		/* a running process cannot be made to stop at its calls, as the job's are */
		if (o->backend == HS_BACKEND_PTRACE)
			return hs_error_set(err, EOPNOTSUPP, "the ptrace backend follows only a "
					    "command hotset starts: recording a running service "
					    "needs the bpf backend");
		hs_record_bpf_probe(&why);
		return hs_error_set(err, EPERM, "recording a running service needs the bpf "
				    "backend, which cannot run here: %s", why.msg);
	}
	if (b == HS_BACKEND_BPF)
		return hs_record_bpf(o, rec, res, err);
	return hs_record_ptrace(o, rec, res, err);
}

/* Paths under these are never part of a working set. */
static const char *const excluded_dirs[] = { "/proc/", "/sys/", "/dev/" };

bool hs_record_excluded(const char *path, long fs_magic)
{
	if (hs_pseudo_fs_name(fs_magic))
		return true;
	/* in memory (or swap) whatever happens: nothing for a page cache to keep */
	if (fs_magic == TMPFS_MAGIC || fs_magic == RAMFS_MAGIC)
		return true;
	for (size_t i = 0; i < sizeof(excluded_dirs) / sizeof(excluded_dirs[0]); i++)
		if (!strncmp(path, excluded_dirs[i], strlen(excluded_dirs[i])))
			return true;
	/* memfd_create() files: "/memfd:NAME (deleted)" */
	return !strncmp(path, "/memfd:", 7) || path[0] != '/';
}

#ifndef HAVE_BPF
int hs_record_bpf_probe(struct hs_error *why)
{
	return hs_error_set(why, ENOSYS, "this hotset was built without the eBPF backend (libbpf)");
}

int hs_record_bpf(const struct hs_record_opts *o, struct hs_recording *rec,
		  struct hs_record_result *res, struct hs_error *err)
{
	(void)o, (void)rec, (void)res;
	return hs_record_bpf_probe(err);
}
#endif
