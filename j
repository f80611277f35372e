{
  "command": [
    "python3",
    "-c",
    "\nimport os, signal\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\nif os.fork() == 0:\n    x = 0\n    for i in range(4000000):\n        x += i\n    os._exit(0)\ntry:\n    os.wait()\nexcept ChildProcessError:\n    pass\n"
  ],
  "exit_status": 0,
  "signal": null,
  "error": null,
  "wall_seconds": 0.748243,
  "user_seconds": 0.612466,
  "sys_seconds": 0.085169,
  "io_wait_seconds": 6.3e-05,
  "io_wait_full_seconds": 6.3e-05,
  "io_pressure_some_pct": 0.00841973,
  "io_pressure_full_pct": 0.00841973,
  "cpu_wait_seconds": 0.036182,
  "memory_wait_seconds": 0,
  "io_wait_method": "job-cgroup",
  "major_faults": 0,
  "minor_faults": 11070,
  "voluntary_context_switches": 109,
  "involuntary_context_switches": 90,
  "max_rss_bytes": 13725696,
  "disk_read_bytes": 4096,
  "cache_read_bytes": null,
  "rchar_bytes": 1690886,
  "disk_write_bytes": 0,
  "wchar_bytes": 1705,
  "still_running": 0,
  "notes": [
    "some processes of the job ended without being waited for (a parent ignored SIGCHLD): user and system time come from the job's cgroup, but their faults, context switches, memory and I/O bytes are not counted, so those figures are lower bounds"
  ]
}
