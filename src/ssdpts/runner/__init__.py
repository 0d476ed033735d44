"""A run, by stage: the checks before it (checks.py), its life from start or resume to its end (lifecycle.py),
one test with its health snapshots (testrun.py), failed drives and targets (failures.py), what it says as a
test or the run ends (outcome.py), its files and deletion (files.py), its log (log.py), the hold on its
target (lock.py). Nothing is imported here: `ssdpts delete` needs files.py alone, `plan` checks.py alone."""
