"""Offline analyses of saved logs, snapshots and captures, without running anything: the wear projection from
health snapshots (endurance.py), SLC-cache steps in a bandwidth log (slc_cache.py), a captured workload's
streams (workload.py). Their command lines are `ssdpts analyze ...` (commands/analyses.py, listed lazily by commands/analyze.py)."""
