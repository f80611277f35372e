/*
 * ioprio.c - the calling thread's I/O priority, through the raw system
 * calls (glibc has no wrapper).
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/ioprio.h"

/* IOPRIO_WHO_PROCESS: with pid 0, the calling thread (linux/ioprio.h) */
#define WHO_THREAD 1

int hs_ioprio_get(void)
{
	long prio = syscall(SYS_ioprio_get, WHO_THREAD, 0);

	return prio < 0 ? -errno : (int)prio;
}

int hs_ioprio_set(int prio)
{
	return syscall(SYS_ioprio_set, WHO_THREAD, 0, prio) < 0 ? -errno : 0;
}

int hs_ioprio_idle(void)
{
	return hs_ioprio_set(HS_IOPRIO_IDLE);
}
