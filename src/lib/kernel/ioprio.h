/*
 * ioprio.h - a thread's I/O priority (ioprio_get(2), ioprio_set(2)).
 *
 * The priority is the thread's, not the process's: the kernel keeps it
 * per task (IOPRIO_WHO_PROCESS with pid 0 names the calling thread), and
 * a thread or process started afterwards inherits it. glibc has no
 * wrapper, so these are the one place that calls the system calls.
 */
#ifndef HOTSET_IOPRIO_H
#define HOTSET_IOPRIO_H

/*
 * The value the kernel takes: class << 13 | level. IOPRIO_CLASS_NONE (0)
 * is "as the process's nice value says", IOPRIO_CLASS_IDLE's only level
 * is 0: the disk serves the thread when no one else asks.
 */
#define HS_IOPRIO_NONE 0
#define HS_IOPRIO_IDLE (3 << 13)

/* The calling thread's I/O priority, or -errno. */
int hs_ioprio_get(void);

/* Set the calling thread's I/O priority to prio. Returns 0 or -errno. */
int hs_ioprio_set(int prio);

/*
 * Set the calling thread's I/O priority to the idle class (threads it
 * starts afterwards inherit it): a warmer that must not slow the job it
 * works for. Returns 0 or -errno.
 */
int hs_ioprio_idle(void);

#endif
