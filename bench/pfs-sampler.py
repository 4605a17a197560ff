#!/usr/bin/env python3
"""pfs-sampler.py - samples how many bytes the parallel file system has taken, at a fixed rate.

Sources (--source):
  dir:PATH     the allocated bytes (st_blocks * 512) of the regular files under PATH, except
               names matching --exclude. Counts new data only (an overwrite allocates nothing),
               which is what a checkpoint that fills a new region each time produces; ext4
               counts delayed-allocation blocks at write time, tmpfs at once.
  proc:NAME    the sum of write characters (wchar in /proc/PID/io, needs root) of the processes
               whose command name is NAME, e.g. proc:glusterfsd for the bricks of the GlusterFS
               stand-in: every byte the file system servers write, overwrites included.
Prints "unix_time bytes" lines to --out (flushed each sample) on an absolute schedule of --hz
samples per second, until SIGTERM/SIGINT. The rate is the difference of successive samples.
Exit status: 0, or 2 for a usage error (the message names the source).
"""
import argparse
import fnmatch
import os
import signal
import sys
import time

stop = False


def on_signal(sig, frame):
    global stop
    stop = True


def dir_bytes(root, exclude):
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if any(fnmatch.fnmatch(name, pat) for pat in exclude):
                continue
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue  # removed while we walked
            total += st.st_blocks * 512
    return total


def proc_bytes(name):
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/{pid}/io") as f:
                for line in f:
                    if line.startswith("wchar:"):
                        total += int(line.split()[1])
        except OSError:
            continue  # gone, or not ours to read
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="dir:PATH or proc:NAME")
    ap.add_argument("--exclude", action="append", default=[], help="file name glob (dir:)")
    ap.add_argument("--hz", type=float, default=10.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    kind, _, arg = a.source.partition(":")
    if kind == "dir":
        if not os.path.isdir(arg):
            sys.exit(f"pfs-sampler: --source {a.source}: {arg} is not a directory")
        sample = lambda: dir_bytes(arg, a.exclude)
    elif kind == "proc" and arg:
        sample = lambda: proc_bytes(arg)
    else:
        print(f"pfs-sampler: bad --source '{a.source}' (dir:PATH or proc:NAME)", file=sys.stderr)
        sys.exit(2)
    if not a.hz > 0:
        sys.exit("pfs-sampler: --hz must be > 0")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    step = 1.0 / a.hz
    parent = os.getppid()
    with open(a.out, "w") as out:
        nxt = time.monotonic()
        # A runner killed without stopping its sampler leaves it to init: it stops then, so
        # that it cannot write on into the file of the runner's next run.
        while not stop and os.getppid() == parent:
            out.write(f"{time.time():.6f} {sample()}\n")
            out.flush()
            nxt += step
            while nxt < time.monotonic():
                nxt += step  # missed samples are skipped, not made up
            delay = nxt - time.monotonic()
            if delay > 0 and not stop:
                time.sleep(delay)


if __name__ == "__main__":
    main()
