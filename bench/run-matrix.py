#!/usr/bin/python3
"""run-matrix.py - the benchmark matrix of issue 6: workloads x modes x sizes x file systems.

  bench/run-matrix.py run [options]       run the matrix, write bench/results/matrix-TAG.json,
                                          then the report below
  bench/run-matrix.py report FILE.json    Markdown table (FILE.md) and PNG plots (FILE-*.png)

Workloads (C MPI programs in bench/, built here with the bblog MPI's mpicc):
  ior-strided     bench/ior.c -a strided, one segment, transfer i of rank r at (i*P + r)*t
  ior-contiguous  bench/ior.c -a contiguous, block = transfer (records appended)
  ior-fpp         bench/ior.c -F -a contiguous: IOR's file per process (-F), rank r writes its
                  whole block to ior.dat.0000000r, opened alone (MPI_COMM_SELF), in transfers of t
  ior-segmented   bench/ior.c -a contiguous, one segment: IOR's default layout, rank r writes
                  its whole block at r*b in transfers of t
  btio            bench/btio.c, BT diagonal multi-partition over 1, 4, 9 ranks, steps appended
  flash           bench/flash_h5.c through Debian's parallel HDF5: checkpoint + 2 plot files
  pnetcdf         bench/btio_nc.c through PnetCDF (ncmpi_put_vara_all), also with PnetCDF's own
                  burst-buffer driver (mode ncbb)
  ior-pnetcdf     bench/ior_nc.c: IOR's PnetCDF (NCMPI) back end, segmented layout (rank r's block
                  of --size bytes at r*size in one 1-D NC_BYTE variable, one put per transfer of
                  --lib-transfers); modes plain-*, bblog, bblog-indep and ncbb
  ior-hdf5        bench/ior_h5.c: IOR's HDF5 back end, the same layout in one contiguous 1-D
                  dataset, one H5Dwrite of a hyperslab per transfer; modes plain-*, bblog,
                  bblog-indep
  vpic            bench/vpic_h5.c: VPIC-IO's time steps through HDF5, --vpic-steps steps of 8
                  datasets, each rank one H5Dwrite of --vpic-sizes bytes per dataset, no
                  computation between steps (the large-write regime); modes plain-*, bblog,
                  bblog-indep
Modes: plain-indep, plain-coll (ROMIO ufs, independent / collective calls), bblog (bblog:
names, collective calls, bblog_drain=on_demand), bblog-mpi (bblog with
bblog_node_exchange=mpi: the drain moves data through ROMIO's two-phase exchange only),
bblog-indep (bblog, independent calls), ncbb (pnetcdf and ior-pnetcdf only: nc_burst_buf=enable,
log directory on the burst buffer), plain-ref (ior-strided and ior-segmented only: plain ROMIO
writing the point's bytes as contiguous 4 MiB independent transfers, IOR's -b 4m -t 4m, the
reference of the 0.8 bars measured beside bblog's runs of the same point, so that the stand-in's
drift between points does not enter the ratio). A workload runs the modes of --modes that apply
to it (LIB_MODES for the IOR library workloads).

Every point runs --reps times, modes interleaved (each repetition starting one mode later), and
the median is reported; the load average is recorded with every run and ratios are only taken
inside one matrix run. Every output file's md5 is compared with the output most runs of the same
point wrote, all modes counted (the first plain-coll run, the reference before, was itself one
of the GlusterFS stand-in's bad files once: bench/results/README.md). One more run per point
under strace (--strace) counts the write requests that reach the PFS files and their sizes;
bblog's own statistics (bblog_stats) are kept for every bblog run. Peak RSS is the largest
rank's.
"""
import argparse
import copy
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNETCDF = "/var/cache/bblog/pnetcdf-current/install"
HDF5_INC = "/usr/include/hdf5/mpich"
HDF5_LIB = "/usr/lib/x86_64-linux-gnu/hdf5/mpich"

PFS_TARGETS = {  # name -> directory the output files go to
    "gluster": "/mnt/pfs/bblog-matrix",
    "ext4": "/var/tmp/bblog-matrix/pfs",
    "tmpfs": "/dev/shm/bblog-matrix-pfs",
}
BB_TARGETS = {"shm": "/dev/shm/bblog-matrix-bb", "disk": "/var/tmp/bblog-matrix/bb"}
WORKLOADS = ("ior-strided", "ior-contiguous", "ior-segmented", "ior-fpp", "btio", "flash",
             "pnetcdf", "ior-pnetcdf", "ior-hdf5", "vpic")
MODES = ("plain-indep", "plain-coll", "bblog", "bblog-mpi", "bblog-indep", "ncbb", "plain-ref")
REF = 4 << 20   # plain-ref's transfer
REF_WORKLOADS = ("ior-strided", "ior-segmented")    # the points plain-ref runs in
# IOR through a library (bench/ior_nc.c, bench/ior_h5.c): program, output file, the modes it runs.
LIB_IOR = {"ior-pnetcdf": ("ior_nc", "ior.nc"), "ior-hdf5": ("ior_h5", "ior.h5")}
LIB_MODES = {"ior-pnetcdf": ("plain-indep", "plain-coll", "bblog", "bblog-indep", "ncbb"),
             "ior-hdf5": ("plain-indep", "plain-coll", "bblog", "bblog-indep"),
             "vpic": ("plain-indep", "plain-coll", "bblog", "bblog-indep")}


def die(msg):
    print(f"run-matrix: {msg}", file=sys.stderr)
    sys.exit(1)


def say(msg):
    print(f"run-matrix: {msg}", file=sys.stderr, flush=True)


def size_bytes(s):
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size '{s}' (e.g. 4k, 16m)")
    return int(m.group(1)) * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2).lower()]


def human(n):
    for unit, div in (("m", 2**20), ("k", 2**10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def fstype(path):
    r = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return r.stdout.strip() or None


def mpi_env(script):
    """The environment after sourcing the bblog MPI's env script."""
    out = subprocess.run(["bash", "-c", f'. "{script}" >/dev/null && env -0'],
                         capture_output=True, check=True).stdout.decode()
    return dict(kv.split("=", 1) for kv in out.split("\0") if "=" in kv)


def build(env, work):
    os.makedirs(work, exist_ok=True)
    cc = shutil.which("mpicc", path=env["PATH"]) or die("mpicc not found in the MPI env")
    flags = ["-O2", "-std=gnu11", "-Wall", "-Wextra", "-I" + os.path.join(SRC, "bench")]
    progs = {
        "ior": ([os.path.join(SRC, "bench/ior.c")], []),
        "btio": ([os.path.join(SRC, "bench/btio.c")], []),
        "sync_probe": ([os.path.join(SRC, "bench/sync_probe.c")], []),
        "flash_h5": ([os.path.join(SRC, "bench/flash_h5.c"), "-I" + HDF5_INC],
                     ["-L" + HDF5_LIB, "-lhdf5"]),
        "btio_nc": ([os.path.join(SRC, "bench/btio_nc.c"), "-I" + PNETCDF + "/include"],
                    [PNETCDF + "/lib/libpnetcdf.a", "-lm"]),
        "ior_nc": ([os.path.join(SRC, "bench/ior_nc.c"), "-I" + PNETCDF + "/include"],
                   [PNETCDF + "/lib/libpnetcdf.a", "-lm"]),
        "ior_h5": ([os.path.join(SRC, "bench/ior_h5.c"), "-I" + HDF5_INC],
                   ["-L" + HDF5_LIB, "-lhdf5"]),
        "vpic_h5": ([os.path.join(SRC, "bench/vpic_h5.c"), "-I" + HDF5_INC],
                    ["-L" + HDF5_LIB, "-lhdf5"]),
    }
    for name, (srcs, libs) in progs.items():
        cmd = [cc] + flags + srcs + ["-o", os.path.join(work, name)] + libs
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"building {name} failed:\n{' '.join(cmd)}\n{r.stderr}")


def points(a):
    """(workload, point label, nprocs, program, args, output files relative to the PFS dir)."""
    out = []
    for w in a.workloads:
        if w in ("ior-strided", "ior-contiguous", "ior-segmented", "ior-fpp"):
            for t in a.transfers:
                if a.size % t:
                    die(f"--size {human(a.size)} is not a multiple of transfer {human(t)}")
                if w == "ior-strided":
                    args = ["-a", "strided", "-b", str(a.size), "-t", str(t), "-s", "1"]
                elif w == "ior-segmented":
                    args = ["-a", "contiguous", "-b", str(a.size), "-t", str(t), "-s", "1"]
                elif w == "ior-fpp":
                    args = ["-F", "-a", "contiguous", "-b", str(a.size), "-t", str(t), "-s", "1"]
                else:
                    args = contiguous_args(a.size, t)
                files = (["ior.dat.%08d" % r for r in range(a.np)] if w == "ior-fpp"
                         else ["ior.dat"])
                out.append((w, human(t), a.np, "ior", args + ["-k"], files))
        elif w == "btio":
            for n in a.btio_np:
                out.append((w, f"np{n}", n, "btio", ["-n", str(a.btio_grid), "-s",
                                                     str(a.btio_steps)], ["btio.dat"]))
        elif w == "flash":
            out.append((w, f"nxb{a.flash_nxb}", a.np, "flash_h5", ["-b", str(a.flash_nxb)],
                        ["flash_chk.h5", "flash_plt0.h5", "flash_plt1.h5"]))
        elif w == "pnetcdf":
            for n in a.btio_np:
                out.append((w, f"np{n}", n, "btio_nc", ["-n", str(a.btio_grid), "-s",
                                                        str(a.btio_steps)], ["btio.nc"]))
        elif w == "vpic":
            for s in a.vpic_sizes:     # 4-byte particles' variables
                out.append((w, human(s), a.np, "vpic_h5", ["-n", str(s // 4), "-N",
                                                           str(a.vpic_steps), "-T", "0"],
                            ["vpic.h5"]))
        elif w in LIB_IOR:
            prog, fname = LIB_IOR[w]
            for t in a.lib_transfers:
                if a.lib_size % t:
                    die(f"--lib-size {human(a.lib_size)} is not a multiple of transfer {human(t)}")
                out.append((w, human(t), a.np, prog, ["-b", str(a.lib_size), "-t", str(t)],
                            [fname]))
    return out


def contiguous_args(size, t):
    """IOR's records appended: each write call one transfer t, size bytes per rank."""
    return ["-a", "contiguous", "-b", str(t), "-t", str(t), "-s", str(size // t)]


def modes_for(w, modes):
    if w in LIB_MODES:
        return [m for m in modes if m in LIB_MODES[w]]
    return [m for m in modes if (m != "ncbb" or w == "pnetcdf") and
            (m != "plain-ref" or w in REF_WORKLOADS)]


def md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def stats_objects(path):
    try:
        text = open(path).read()
    except OSError:
        return []
    dec, out, pos = json.JSONDecoder(), [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        obj, pos = dec.raw_decode(text, pos)
        out.append(obj)
    return out


CALL = re.compile(r'^\d+\s+(pwrite64|write|pwritev2?|writev)\(\d+<([^>]*)>, (.*)')


def strace_requests(path, targets):
    """Write calls on descriptors of the files `targets` and a histogram of their sizes
    (power-of-two buckets: bucket k holds sizes in [2^k, 2^(k+1)))."""
    n = nbytes = 0
    hist = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = CALL.match(line)
            if not m or m.group(2) not in targets:
                continue
            call, rest = m.group(1), m.group(3)
            if call in ("pwrite64", "write"):
                s = re.match(r'^""(?:\.\.\.)?, (\d+)', rest)
                size = int(s.group(1)) if s else 0
            else:
                size = sum(int(x) for x in re.findall(r'iov_len=(\d+)', rest))
            n += 1
            nbytes += size
            b = size.bit_length() - 1 if size > 0 else -1
            hist[b] = hist.get(b, 0) + 1
    return {"count": n, "bytes": nbytes, "mean_bytes": round(nbytes / n, 1) if n else None,
            "log2_hist": {str(k): v for k, v in sorted(hist.items())}}


def run_one(a, env, work, pfs_dir, bb_dir, w, label, nprocs, prog, args, files, mode, tag,
            strace=False):
    """One mpiexec run; returns the record."""
    pfs_real = os.path.realpath(pfs_dir)
    paths = [os.path.join(pfs_real, f) for f in files]
    for p in paths:
        if os.path.exists(p):
            os.unlink(p)
    shutil.rmtree(bb_dir, ignore_errors=True)
    os.makedirs(bb_dir)
    stats = os.path.join(work, f"{tag}.stats.json")
    if os.path.exists(stats):
        os.unlink(stats)
    renv = dict(env)
    renv["BBLOG_DIR"] = bb_dir
    cargs = list(args)
    if mode == "plain-ref":     # the same bytes in 4 MiB contiguous transfers
        cargs = contiguous_args(a.size, REF) + ["-k"]
    indep = mode in ("plain-indep", "bblog-indep", "plain-ref")
    if prog in ("btio_nc", "ior_nc"):
        # PnetCDF: a plain path (bblog through ROMIO_FSTYPE_FORCE), -i for independent data mode.
        name = os.path.join(pfs_real, files[0])
        if indep:
            cargs.append("-i")
        if mode.startswith("bblog"):
            renv["ROMIO_FSTYPE_FORCE"] = "bblog:"
        if mode == "ncbb":
            cargs += ["-H", "nc_burst_buf=enable", "-H", f"nc_burst_buf_dirname={bb_dir}",
                      "-H", "nc_burst_buf_overwrite=enable"]
    else:
        base = os.path.join(pfs_real, files[0])
        if "-F" in args:  # a file per process: ior.c adds each rank's suffix
            base = os.path.join(pfs_real, "ior.dat")
        if prog == "flash_h5":
            base = os.path.join(pfs_real, "flash")
        name = ("bblog:" if mode.startswith("bblog") else "ufs:") + base
        if prog in ("ior_h5", "vpic_h5"):  # collective unless -i
            if indep:
                cargs.append("-i")
        elif not indep:
            cargs.append("-c")
    if mode.startswith("bblog"):
        renv["BBLOG_STATS"] = stats
    if mode == "bblog-mpi":
        renv["BBLOG_NODE_EXCHANGE"] = "mpi"
    cmd = [shutil.which("mpiexec", path=env["PATH"]), "-n", str(nprocs),
           os.path.join(work, prog)] + cargs + ["--json", "-o", name]
    if strace:
        st_out = os.path.join(work, f"{tag}.strace")
        cmd = ["strace", "-f", "--seccomp-bpf", "-qq", "-y", "-s", "0", "-e",
               "trace=pwrite64,write,pwritev,pwritev2,writev", "-o", st_out] + cmd
    subprocess.run(["sync"])
    load = os.getloadavg()
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=renv, capture_output=True, text=True, timeout=a.timeout)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        die(f"{tag} failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        die(f"{tag}: no JSON from {' '.join(cmd)}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    rec = json.loads(lines[-1])
    rec.update({"workload": w, "point": label, "mode": mode, "pfs_dir": pfs_dir, "bb_dir": bb_dir,
                "loadavg_before": [round(x, 2) for x in load], "wall_s": round(wall, 3),
                "md5": {f: md5(p) for f, p in zip(files, paths)}})
    if mode.startswith("bblog"):
        rec["bblog_stats"] = stats_objects(stats)
        if os.path.exists(stats):
            os.unlink(stats)
    if strace:
        rec["pfs_requests"] = strace_requests(st_out, set(paths))
        os.unlink(st_out)
    for p in paths:
        os.unlink(p)
    shutil.rmtree(bb_dir, ignore_errors=True)
    return rec


def sync_probe(env, work, nprocs):
    """Cost of one barrier / allreduce among nprocs ranks now (bench/sync_probe.c)."""
    r = subprocess.run([shutil.which("mpiexec", path=env["PATH"]), "-n", str(nprocs),
                        os.path.join(work, "sync_probe"), "-n", "20"], env=env,
                       capture_output=True, text=True, timeout=600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if r.returncode == 0 and lines else None


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def cmd_run(a):
    try:
        import matplotlib  # noqa: F401  (the report's plots, made after the runs)
    except ImportError:
        die(f"matplotlib is missing for {sys.executable}: run scripts/install-deps.sh "
            "(Debian's python3-matplotlib) and start this script as bench/run-matrix.py "
            "(/usr/bin/python3)")
    env = mpi_env(a.env)
    work = a.work
    build(env, work)
    if {"pnetcdf", "ior-pnetcdf"} & set(a.workloads) and \
            not os.path.exists(PNETCDF + "/lib/libpnetcdf.a"):
        die(f"no PnetCDF at {PNETCDF}: run scripts/build-pnetcdf.sh, or leave out pnetcdf and "
            "ior-pnetcdf")
    if a.strace != "none" and not shutil.which("strace"):
        die("strace not found (scripts/install-deps.sh), or pass --strace none")
    pts = points(a)
    os.makedirs(a.out, exist_ok=True)
    result = {"matrix": 1, "argv": sys.argv, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "host": platform.node(), "cpus": os.cpu_count(), "uptime_start": uptime(),
              "np": a.np, "size_per_rank": a.size, "lib_size_per_rank": a.lib_size, "reps": a.reps, "statistic": "median",
              "targets": [], "runs": []}
    out_json = os.path.join(a.out, f"matrix-{a.tag}.json")
    for pfs in a.pfs:
        pfs_dir = PFS_TARGETS[pfs]
        if pfs == "gluster" and not any(l.split()[1] == "/mnt/pfs" and "glusterfs" in l.split()[2]
                                        for l in open("/proc/mounts")):
            die("/mnt/pfs is not a GlusterFS mount: run bench/pfs.sh setup first")
        os.makedirs(pfs_dir, exist_ok=True)
        for bb in a.bb:
            bb_dir = BB_TARGETS[bb]
            os.makedirs(bb_dir, exist_ok=True)
            result["targets"].append({"pfs": pfs, "pfs_dir": pfs_dir, "pfs_fstype": fstype(pfs_dir),
                                      "bb": bb, "bb_dir": bb_dir, "bb_fstype": fstype(bb_dir)})
            for (w, label, nprocs, prog, args, files) in pts:
                ms = modes_for(w, a.modes)
                probe = sync_probe(env, work, nprocs)
                result.setdefault("sync_probes", []).append(
                    {"pfs": pfs, "bb": bb, "workload": w, "point": label, "uptime": uptime(),
                     **(probe or {})})
                for rep in range(1, a.reps + 1):
                    # each repetition starts one mode later, so that no mode always runs right
                    # after the same other mode (and its file's deletion)
                    k = (rep - 1) % len(ms)
                    for m in ms[k:] + ms[:k]:
                        tag = f"{pfs}-{bb}-{w}-{label}-{m}-{rep}"
                        rec = run_one(a, env, work, pfs_dir, bb_dir, w, label, nprocs, prog, args,
                                      files, m, tag)
                        rec.update({"pfs": pfs, "bb": bb, "rep": rep, "uptime": uptime()})
                        result["runs"].append(rec)
                        say(f"{tag}: write {rec['write_s']:.3f} s, total {rec['total_s']:.3f} s, "
                            f"load {rec['loadavg_before'][0]}")
                do_strace = a.strace == "all" or (
                    a.strace == "some" and bb == a.bb[0] and pfs == a.pfs[0] and
                    (w.startswith("ior") and label in ("4k", "64k", "4m") or
                     not w.startswith("ior")))
                if do_strace:
                    for m in ms:
                        tag = f"{pfs}-{bb}-{w}-{label}-{m}-strace"
                        rec = run_one(a, env, work, pfs_dir, bb_dir, w, label, nprocs, prog, args,
                                      files, m, tag, strace=True)
                        rec.update({"pfs": pfs, "bb": bb, "rep": "strace", "uptime": uptime()})
                        result["runs"].append(rec)
                        say(f"{tag}: {rec['pfs_requests']['count']} PFS write requests")
                with open(out_json, "w") as f:  # partial results survive an interruption
                    json.dump(result, f, indent=1)
        shutil.rmtree(pfs_dir, ignore_errors=True)
    result["uptime_end"] = uptime()
    result["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1)
    say(f"results in {out_json}")
    report(out_json)


# ---------------------------------------------------------------------------------------------
# Report


def aggregate(result):
    """Medians per (pfs, bb, workload, point, mode), md5 agreement with the output most runs of
    the point wrote (where the point has plain-coll runs to compare with)."""
    groups = {}
    for r in result["runs"]:
        key = (r["pfs"], r["bb"], r["workload"], r["point"], r["mode"])
        groups.setdefault(key, []).append(r)
    agg = {}
    for key, rs in groups.items():
        timed = [r for r in rs if r["rep"] != "strace"]
        if not timed:
            continue
        med = {k: statistics.median(r[k] for r in timed) for k in ("write_s", "total_s")}
        total = timed[0]["bytes_total"]
        row = {"pfs": key[0], "bb": key[1], "workload": key[2], "point": key[3], "mode": key[4],
               "nprocs": timed[0]["nprocs"], "bytes_total": total, "reps": len(timed), **med,
               "write_MiBps": total / 2**20 / med["write_s"],
               "total_MiBps": total / 2**20 / med["total_s"],
               "total_s_runs": [r["total_s"] for r in timed],
               "max_rss_kib": max(r["max_rss_kib"] for r in timed),
               "loadavg": [r["loadavg_before"][0] for r in timed],
               "md5": [r["md5"] for r in rs]}
        st = [r for r in rs if r["rep"] == "strace"]
        if st:
            row["pfs_requests"] = st[0]["pfs_requests"]
        bs = [r["bblog_stats"] for r in timed if r.get("bblog_stats")]
        if bs:
            objs = bs[0]
            row["bblog_inner_write_calls"] = sum(o.get("inner_write_calls", 0) for o in objs)
            row["bblog_rounds"] = sum(o.get("rounds", 0) for o in objs)
            row["bblog_bytes_drained"] = sum(o.get("bytes_drained", 0) for o in objs)
            row["bblog_bytes_through"] = sum(o.get("bytes_through", 0) for o in objs)
            row["bblog_files"] = len(objs)
        agg[key] = row
    votes = {}
    for key, row in agg.items():
        if key[4] == "plain-ref":   # other offsets per rank, so other bytes: not in the vote
            continue
        for m in row["md5"]:
            v = votes.setdefault(key[:4], {})
            k = json.dumps(m, sort_keys=True)
            v[k] = v.get(k, 0) + 1
    for key, row in agg.items():
        if key[4] == "plain-ref":
            row["md5_ok"] = None
            continue
        # A reference needs plain ROMIO's output in the vote (either mode).
        if not any(key[:4] + (m,) in agg for m in ("plain-coll", "plain-indep")):
            row["md5_ok"] = None
            continue
        want = max(votes[key[:4]].items(), key=lambda kv: kv[1])[0]
        row["md5_ok"] = all(json.dumps(m, sort_keys=True) == want for m in row["md5"])
    return agg


def bars(agg):
    out = []
    targets = sorted({(k[0], k[1]) for k in agg})
    for pfs, bb in targets:
        g = lambda w, p, m: agg.get((pfs, bb, w, p, m))
        b, pc, pi = (g("ior-strided", "4k", m) for m in ("bblog", "plain-coll", "plain-indep"))
        if b and pc:
            v = pc["total_s"] / b["total_s"]
            out.append({"pfs": pfs, "bb": bb, "bar": "IOR strided 4 KiB: bblog end-to-end vs "
                        "plain collective", "target": 4.2, "value": round(v, 2), "met": v >= 4.2})
        if b and pi:
            v = pi["total_s"] / b["total_s"]
            out.append({"pfs": pfs, "bb": bb, "bar": "IOR strided 4 KiB: bblog end-to-end vs "
                        "plain independent", "target": 2.0, "value": round(v, 2), "met": v >= 2.0})
        c4 = [x for x in (g("ior-contiguous", "4m", "plain-coll"),
                          g("ior-contiguous", "4m", "plain-indep")) if x]
        ref = max(x["total_MiBps"] for x in c4) if c4 else None
        for (p_, b_, w, pt, m), row in sorted(agg.items(), key=lambda kv: size_bytes(kv[0][3])
                                              if kv[0][3][0].isdigit() else 0):
            if (p_, b_, m) == (pfs, bb, "bblog") and w in REF_WORKLOADS:
                # The reference measured in the point itself where it ran (plain-ref)
                here = g(w, pt, "plain-ref")
                if here or ref:
                    v = row["total_MiBps"] / (here["total_MiBps"] if here else ref)
                    out.append({"pfs": pfs, "bb": bb, "bar": f"IOR {w[4:]} {pt}: bblog "
                                "end-to-end bandwidth vs " + (
                                    "plain contiguous 4 MiB in the point" if here
                                    else "best plain contiguous 4 MiB"),
                                "target": 0.8, "value": round(v, 2), "met": v >= 0.8})
        cb, cc = g("ior-contiguous", "4m", "bblog"), g("ior-contiguous", "4m", "plain-coll")
        if cb and cc:
            v = cc["total_s"] / cb["total_s"]
            out.append({"pfs": pfs, "bb": bb, "bar": "IOR contiguous 4 MiB: bblog end-to-end vs "
                        "plain collective", "target": 0.95, "value": round(v, 2), "met": v >= 0.95})
        for (p_, b_, w, pt, m), row in sorted(agg.items()):
            if (p_, b_, w) == (pfs, bb, "pnetcdf") and m == "bblog" and \
                    g(w, pt, "ncbb"):
                v = g(w, pt, "ncbb")["total_s"] / row["total_s"]
                out.append({"pfs": pfs, "bb": bb, "bar": f"PnetCDF BTIO {pt}: bblog "
                            "end-to-end vs PnetCDF burst-buffer driver", "target": 1.0,
                            "value": round(v, 2), "met": v >= 1.0})
        # IOR through the libraries, per transfer size: bblog against PnetCDF's own burst
        # buffer, and against the faster of the two plain ROMIO modes under HDF5.
        for w in LIB_IOR:
            for pt in sorted({k[3] for k in agg if k[:3] == (pfs, bb, w)}, key=size_bytes):
                b = g(w, pt, "bblog")
                if not b:
                    continue
                if w == "ior-pnetcdf" and g(w, pt, "ncbb"):
                    v = g(w, pt, "ncbb")["total_s"] / b["total_s"]
                    out.append({"pfs": pfs, "bb": bb, "bar": f"IOR through PnetCDF {pt}: bblog "
                                "end-to-end vs PnetCDF burst-buffer driver", "target": 1.0,
                                "value": round(v, 2), "met": v >= 1.0})
                plain = [x for x in (g(w, pt, "plain-coll"), g(w, pt, "plain-indep")) if x]
                mine = [x for x in (b, g(w, pt, "bblog-indep")) if x]
                if w == "ior-hdf5" and plain:
                    # The application picks collective or independent transfers; bblog's best
                    # against plain ROMIO's best, and mode for mode (collective H5Dwrite pays
                    # HDF5's own MPI_Allreduce per call either way).
                    v = min(x["total_s"] for x in plain) / min(x["total_s"] for x in mine)
                    out.append({"pfs": pfs, "bb": bb, "bar": f"IOR HDF5 {pt}: best bblog mode "
                                "end-to-end vs best plain ROMIO mode", "target": 1.0,
                                "value": round(v, 2), "met": v >= 1.0})
                    out += vs_contiguous(pfs, bb, f"IOR HDF5 {pt}", mine, ref)
                    for m, name in (("coll", "collective"), ("indep", "independent")):
                        pm, bm = g(w, pt, "plain-" + m), g(w, pt, "bblog" if m == "coll" else
                                                           "bblog-indep")
                        if pm and bm:
                            v = pm["total_s"] / bm["total_s"]
                            out.append({"pfs": pfs, "bb": bb, "bar": f"IOR HDF5 {pt} {name}: "
                                        "bblog end-to-end vs plain ROMIO", "target": 1.0,
                                        "value": round(v, 2), "met": v >= 1.0})
        # Large writes (VPIC-IO through HDF5, IOR segmented at 1 MiB or more): bblog with
        # default hints in the program's own mode, collective and independent, each against the
        # faster of plain ROMIO's two modes (issue 72).
        for w in ("vpic", "ior-segmented"):
            for pt in sorted({k[3] for k in agg if k[:3] == (pfs, bb, w)}, key=size_bytes):
                plain = [x for x in (g(w, pt, "plain-coll"), g(w, pt, "plain-indep")) if x]
                if not plain or size_bytes(pt) < 1 << 20:
                    continue
                best = min(x["total_s"] for x in plain)
                name = "VPIC-IO" if w == "vpic" else "IOR segmented"
                for m, how in (("bblog", "collective"), ("bblog-indep", "independent")):
                    if g(w, pt, m):
                        v = best / g(w, pt, m)["total_s"]
                        out.append({"pfs": pfs, "bb": bb, "bar": f"{name} {pt} large writes, "
                                    f"bblog {how} end-to-end vs best plain ROMIO mode",
                                    "target": 1.0, "value": round(v, 2), "met": v >= 1.0})
        # FLASH-IO through HDF5: bblog's best mode against plain ROMIO's best.
        fl = sorted({k[3] for k in agg if k[:3] == (pfs, bb, "flash")})
        for pt in fl:
            plain = [x for x in (g("flash", pt, "plain-coll"), g("flash", pt, "plain-indep")) if x]
            mine = [x for x in (g("flash", pt, "bblog"), g("flash", pt, "bblog-indep")) if x]
            if plain and mine:
                v = min(x["total_s"] for x in plain) / min(x["total_s"] for x in mine)
                out.append({"pfs": pfs, "bb": bb, "bar": f"FLASH-IO {pt}: best bblog mode "
                            "end-to-end vs best plain ROMIO mode", "target": 1.0,
                            "value": round(v, 2), "met": v >= 1.0})
                out += vs_contiguous(pfs, bb, f"FLASH-IO {pt}", mine, ref)
    return out


def vs_contiguous(pfs, bb, what, mine, ref):
    """A library workload's best bblog bandwidth against plain ROMIO's best contiguous 4 MiB
    MPI-IO writes to the same PFS (the IOR reference): reported, no target (target and met
    None), so that the library's own cost shows beside what the PFS takes at its best."""
    if not ref or not mine:
        return []
    v = max(x["total_MiBps"] for x in mine) / ref
    return [{"pfs": pfs, "bb": bb, "bar": f"{what}: best bblog mode end-to-end bandwidth vs "
             "best plain contiguous 4 MiB MPI-IO (reported)", "target": None,
             "value": round(v, 2), "met": None}]


def report(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = json.load(open(path))
    agg = aggregate(result)
    stem = os.path.splitext(path)[0]
    bl = bars(agg)
    # Each bar again from each repetition alone (the modes of a repetition ran back to back):
    # the spread over the runs of the matrix.
    for k in sorted({r["rep"] for r in result["runs"] if r["rep"] != "strace"}):
        one = aggregate(dict(result, runs=[r for r in result["runs"] if r["rep"] in (k, "strace")]))
        each = {(b["pfs"], b["bb"], b["bar"]): b["value"] for b in bars(one)}
        for b in bl:
            b.setdefault("runs", []).append(each.get((b["pfs"], b["bb"], b["bar"])))
    lines = [f"# Benchmark matrix {os.path.basename(stem)}", "",
             f"Host {result['host']}, {result['cpus']} CPUs; {result['np']} ranks unless the "
             f"point says; {human(result['size_per_rank'])} per rank for IOR; median of "
             f"{result['reps']}; started {result['started']}.", "",
             f"`uptime` at start: `{result['uptime_start']}`  ",
             f"`uptime` at end: `{result.get('uptime_end', '(interrupted)')}`", "",
             f"Command: `{' '.join(result['argv'])}`", "", "## Bars", "",
             "| PFS | BB | bar | target | measured (medians) | each run | met |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for b in bl:
        each = " / ".join("-" if v is None else f"{v}" for v in b.get("runs", []))
        met = "-" if b["met"] is None else "yes" if b["met"] else "**no**"
        lines.append(f"| {b['pfs']} | {b['bb']} | {b['bar']} | "
                     f"{'-' if b['target'] is None else b['target']} | {b['value']} | "
                     f"{each} | {met} |")
    probes = result.get("sync_probes", [])
    if probes:
        bms = sorted(p["barrier_ms"] for p in probes if "barrier_ms" in p)
        lines += ["", f"MPI_Barrier cost measured before each point (bench/sync_probe.c): "
                  f"median {statistics.median(bms):.2f} ms, min {bms[0]:.2f}, max {bms[-1]:.2f} "
                  f"(idle 2-core machine: well under 0.1 ms). Every collective call of a "
                  f"workload pays about this much."]
    lines += ["", "## All points", "",
              "Times in seconds (median), bandwidths in MiB/s; requests = write calls on the PFS "
              "file seen by strace (one extra run); inner = bblog's write calls on the PFS "
              "driver (bblog_stats); md5 = output identical in every run to the output most runs of "
              "the point wrote, all modes counted (n/a: plain-ref writes other bytes, its "
              "ranks' transfers in another order); load = 1-min load "
              "average before each run.", "",
              "| PFS | BB | workload | point | mode | write s | total s | write MiB/s | "
              "end-to-end MiB/s | PFS requests (mean bytes) | bblog inner calls / rounds | "
              "peak RSS MiB | md5 | load |",
              "|" + " --- |" * 14]
    for k in sorted(agg, key=lambda k: (k[0], k[1], WORKLOADS.index(k[2]),
                                        size_bytes(k[3]) if k[3][0].isdigit() else k[3],
                                        MODES.index(k[4]))):
        r = agg[k]
        req = r.get("pfs_requests")
        reqs = f"{req['count']} ({req['mean_bytes']:.0f})" if req and req["count"] else \
            ("0" if req else "")
        inner = f"{r['bblog_inner_write_calls']} / {r['bblog_rounds']}" \
            if "bblog_inner_write_calls" in r else ""
        md5s = "n/a" if r["mode"] == "plain-ref" else \
            {None: "ref?", True: "ok", False: "**DIFF**"}[r["md5_ok"]]
        lines.append(f"| {r['pfs']} | {r['bb']} | {r['workload']} | {r['point']} | {r['mode']} | "
                     f"{r['write_s']:.3f} | {r['total_s']:.3f} | {r['write_MiBps']:.1f} | "
                     f"{r['total_MiBps']:.1f} | {reqs} | {inner} | "
                     f"{r['max_rss_kib'] / 1024:.0f} | {md5s} | "
                     f"{'/'.join(f'{x:.1f}' for x in r['loadavg'])} |")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(stem + "-summary.json", "w") as f:
        json.dump({"bars": bl, "points": [
            {k: v for k, v in r.items() if k != "md5"} for r in agg.values()]}, f, indent=1)

    colors = {"plain-indep": "tab:orange", "plain-coll": "tab:red", "bblog": "tab:blue",
              "bblog-mpi": "tab:purple", "bblog-indep": "tab:cyan",
              "ncbb": "tab:green", "plain-ref": "tab:gray"}
    # Figure 5 of seed 000: bandwidth vs transfer size, per pattern and mode; end-to-end solid,
    # write phase dashed.
    targets = sorted({(k[0], k[1]) for k in agg})
    for pfs, bb in targets:
        ior_layouts = ("ior-strided", "ior-contiguous", "ior-segmented")
        if not any(k[:2] == (pfs, bb) and k[2] in ior_layouts for k in agg):
            axes = ()           # no IOR layout in this run (the library workloads alone)
        else:
            fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
        for ax, w in zip(axes, ior_layouts):
            for m in MODES:
                pts = sorted(((size_bytes(k[3]), r) for k, r in agg.items()
                              if k[:3] == (pfs, bb, w) and k[4] == m), key=lambda x: x[0])
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                ax.plot(xs, [p[1]["total_MiBps"] for p in pts], "o-", color=colors[m],
                        label=f"{m} end-to-end")
                ax.plot(xs, [p[1]["write_MiBps"] for p in pts], "x--", color=colors[m],
                        alpha=0.6, label=f"{m} write phase")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("transfer size (bytes)")
            ax.set_ylabel("MiB/s")
            ax.set_title(f"IOR {w.split('-')[1]}, PFS {pfs}, BB {bb}")
            ax.grid(True, which="both", alpha=0.3)
        if len(axes):
            axes[0].legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(f"{stem}-ior-{pfs}-{bb}.png", dpi=110)
            plt.close(fig)
        # The other workloads, IOR through the libraries included: end-to-end time per mode,
        # bars.
        others = sorted({(k[2], k[3]) for k in agg if k[:2] == (pfs, bb) and
                         (not k[2].startswith("ior") or k[2] in LIB_IOR)},
                        key=lambda wp: (WORKLOADS.index(wp[0]),
                                        size_bytes(wp[1]) if wp[1][0].isdigit() else 0, wp[1]))
        if others:
            fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(others)), 4))
            width = 0.8 / len(MODES)
            for i, m in enumerate(MODES):
                ys = [agg.get((pfs, bb, w, p, m), {}).get("total_s", 0) for w, p in others]
                if any(ys):
                    ax.bar([j + i * width for j in range(len(others))], ys, width,
                           color=colors[m], label=m)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(others))])
            ax.set_xticklabels([f"{w}\n{p}" for w, p in others], fontsize=8)
            ax.set_ylabel("end-to-end time (s)")
            ax.set_title(f"BTIO / FLASH / PnetCDF / IOR via PnetCDF, HDF5, PFS {pfs}, BB {bb}")
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(f"{stem}-apps-{pfs}-{bb}.png", dpi=110)
            plt.close(fig)
    # Request-size histograms of the strace'd points.
    hp = sorted((k, r) for k, r in agg.items() if r.get("pfs_requests", {}).get("count"))
    cases = sorted({k[:4] for k, _ in hp})
    if cases:
        ncol = 3
        nrow = (len(cases) + ncol - 1) // ncol
        fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.2 * nrow), squeeze=False)
        for ax, case in zip(axes.flat, cases):
            rows = [(k[4], r) for k, r in hp if k[:4] == case]
            width = 0.8 / max(1, len(rows))
            for i, (m, r) in enumerate(rows):
                h = {int(b): c for b, c in r["pfs_requests"]["log2_hist"].items()}
                ax.bar([b + i * width for b in h], list(h.values()), width, color=colors[m],
                       label=f"{m} ({r['pfs_requests']['count']})")
            ax.set_yscale("log")
            ax.set_xlabel("request size, log2 bytes (12 = 4 KiB, 20 = 1 MiB)")
            ax.set_ylabel("requests")
            ax.set_title(f"{case[2]} {case[3]} ({case[0]})", fontsize=9)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(cases):]:
            ax.axis("off")
        fig.tight_layout()
        fig.savefig(f"{stem}-requests.png", dpi=110)
        plt.close(fig)
    say(f"report: {stem}.md, {stem}-summary.json, {stem}-*.png")
    for b in bl:
        print(f"{b['pfs']}/{b['bb']}: {b['bar']}: {b['value']}" + (
            "" if b["met"] is None else
            f" (target {b['target']}) {'met' if b['met'] else 'NOT MET'}"))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the matrix")
    r.add_argument("--quick", action="store_true",
                   help="scaled down: 4m per rank, transfers 4k 64k 4m, 1 repeat, BTIO on 4 "
                        "ranks, grid 32 (about 15 minutes on GlusterFS before ior-pnetcdf and "
                        "ior-hdf5 were added)")
    r.add_argument("--pfs", default="gluster", help="comma list of gluster, ext4, tmpfs")
    r.add_argument("--bb", default="shm", help="comma list of shm (/dev/shm), disk (/var/tmp)")
    r.add_argument("--workloads", default=",".join(WORKLOADS))
    r.add_argument("--modes", default="plain-indep,plain-coll,plain-ref,bblog,bblog-indep,ncbb")
    r.add_argument("--np", default="4",
                   help="ranks for IOR and FLASH (default 4); a comma list (1,2,4) runs the "
                        "matrix once per count, into matrix-TAG-npN.*, BTIO in the run of its "
                        "own count (square counts only) unless --btio-np says otherwise")
    r.add_argument("--size", type=size_bytes, default=None,
                   help="IOR bytes per rank, also through the libraries (default 64m as in "
                        "the paper; --quick 4m)")
    r.add_argument("--transfers", default=None, help="default 4k,16k,64k,256k,1m,4m")
    r.add_argument("--lib-size", help="bytes per rank of ior-pnetcdf and ior-hdf5 (default: "
                   "--size; a collective put costs several collectives through plain ROMIO)")
    r.add_argument("--lib-transfers", default="4k,64k",
                   help="transfer sizes of ior-pnetcdf and ior-hdf5 (default 4k,64k)")
    r.add_argument("--vpic-sizes", default="1m,2m,4m,8m",
                   help="vpic: bytes per rank per dataset (default 1m,2m,4m,8m)")
    r.add_argument("--vpic-steps", type=int, default=4, help="vpic: time steps (default 4)")
    r.add_argument("--reps", type=int, default=None, help="default 3 (--quick 1)")
    r.add_argument("--btio-np", default=None, help="ranks for BTIO and PnetCDF (default 1,4,9)")
    r.add_argument("--btio-grid", type=int, default=None, help="points per edge (default 64)")
    r.add_argument("--btio-steps", type=int, default=5)
    r.add_argument("--flash-nxb", type=int, default=None, help="8 (default) or 16")
    r.add_argument("--strace", choices=("none", "some", "all"), default="some",
                   help="extra strace runs: some = IOR 4k/64k/4m and the other workloads on "
                        "the first PFS and BB (default)")
    r.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    r.add_argument("--env", default=None, help="MPI env script of scripts/build-mpi.sh "
                   "(default: $BBLOG_ENV, else /var/cache/bblog/current/bin/bblog-env.sh)")
    r.add_argument("--out", default=os.path.join(SRC, "bench/results"))
    r.add_argument("--work", default="/var/tmp/bblog-matrix/work")
    r.add_argument("--tag", default=None, help="results name (default: PFS list + time)")
    rp = sub.add_parser("report", help="table and plots from a results file")
    rp.add_argument("file")
    a = p.parse_args()
    if a.cmd == "report":
        report(a.file)
        return
    q = a.quick
    a.size = a.size or (4 << 20 if q else 64 << 20)
    a.transfers = [size_bytes(t) for t in (a.transfers or
                                           ("4k,64k,4m" if q else "4k,16k,64k,256k,1m,4m"))
                   .split(",")]
    a.lib_transfers = [size_bytes(t) for t in a.lib_transfers.split(",")]
    a.lib_size = size_bytes(a.lib_size) if a.lib_size else a.size
    a.vpic_sizes = [size_bytes(s) for s in a.vpic_sizes.split(",")]
    if any(s % 4 or s > 16 << 20 for s in a.vpic_sizes):
        die("--vpic-sizes: multiples of 4 bytes, at most 16m (vpic_h5 -n 4m)")
    a.reps = a.reps or (1 if q else 3)
    btio_default = a.btio_np is None
    a.btio_np = [int(x) for x in (a.btio_np or ("4" if q else "1,4,9")).split(",")]
    a.btio_grid = a.btio_grid or (32 if q else 64)
    a.flash_nxb = a.flash_nxb or 8
    a.pfs = a.pfs.split(",")
    a.bb = a.bb.split(",")
    a.workloads = a.workloads.split(",")
    a.modes = a.modes.split(",")
    for name, vals, allowed in (("--pfs", a.pfs, PFS_TARGETS), ("--bb", a.bb, BB_TARGETS),
                                ("--workloads", a.workloads, WORKLOADS),
                                ("--modes", a.modes, MODES)):
        bad = [v for v in vals if v not in allowed]
        if bad:
            die(f"{name}: unknown {', '.join(bad)} (known: {', '.join(allowed)})")
    if "plain-ref" in a.modes and a.size % REF and \
            any(w in REF_WORKLOADS for w in a.workloads):
        die(f"--modes plain-ref: --size {human(a.size)} is not a multiple of 4 MiB")
    a.env = a.env or os.environ.get("BBLOG_ENV") or "/var/cache/bblog/current/bin/bblog-env.sh"
    if not os.path.exists(a.env):
        die(f"no MPI env script {a.env}: run scripts/build-mpi.sh --env-out FILE")
    a.tag = a.tag or f"{'-'.join(a.pfs)}-{time.strftime('%Y%m%d-%H%M%S')}"
    counts = [int(x) for x in a.np.split(",")]
    for n in counts:
        b = copy.copy(a)
        b.np = n
        if len(counts) > 1:
            b.tag = f"{a.tag}-np{n}"
            if btio_default:
                b.btio_np = [x for x in a.btio_np if x == n]
            if not b.btio_np:
                b.workloads = [w for w in a.workloads if w != "pnetcdf"]
        cmd_run(b)


if __name__ == "__main__":
    main()
