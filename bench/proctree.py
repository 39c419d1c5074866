"""A process and the processes under it, read from /proc: the benches
that watch a crawl's memory (its own, its PDF readers', its browser's)
share these."""

import os


def children(pid):
    """The children of every thread of `pid` (a child hangs under the
    thread that started it, whichever thread of the runtime that was)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def tree(pid):
    """Every process under `pid`, itself included."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children(p))
    return found


def _field_kib(path, field):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kib(pid):
    """Resident memory of `pid`, 0 once it has gone."""
    return _field_kib(f"/proc/{pid}/status", "VmRSS:")


def pss_kib(pid):
    """Proportional set size of `pid` (shared pages split among their
    users, so a tree's sum counts each page once), 0 once it has gone."""
    return _field_kib(f"/proc/{pid}/smaps_rollup", "Pss:")
