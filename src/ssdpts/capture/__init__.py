"""Real-world workloads (SNIA RWSW): block-layer captures reduced to IO streams (`model`), how they are taken
(tracefs block tracepoints, blktrace files, fio iologs) and read back. docs/rwsw.md."""
