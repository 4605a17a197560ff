#!/usr/bin/python3
"""run-phases.py - output phases with computation between them (issue 21): the phase matrix.

  bench/run-phases.py run [options]      run it, write bench/results/phases.json and the report
  bench/run-phases.py report FILE.json   Markdown tables and the bars of issue 21 (FILE.md)

Workloads (built here with the bblog MPI's mpicc; every one opens one file, writes --steps
output phases with --compute seconds of computation (sleep) between or before them, closes):
  ior-seg-4k, ior-seg-1m  bench/ckpt.c -a segmented --no-sync: IOR's default layout, one
                          MPI_File_write_at_all per 4 KiB / 1 MiB transfer, 4 / 16 MiB per rank
                          per phase, a computation before each phase
  ior-str-4k, ior-str-1m  the same with -a strided (transfers of the ranks interleaved)
  ckpt                    bench/ckpt.c, the checkpoint benchmark: strided 1 MiB, 32 MiB per
                          rank per phase, MPI_File_sync after each
  hdf5-vpic               bench/vpic_h5.c: 8 one-dimensional datasets per time step (32 MiB per
                          rank), collective H5Dwrite, computation between the steps, H5Fflush
Configurations: plain (ufs:, plain ROMIO in its best mode for the workload: collective buffering
automatic or disabled, whichever a pilot run without computation finds faster), default
(bblog:, default hints) and bb (bblog:, bblog_mode=bb), the burst buffer in /dev/shm (shm) and
on the disk under /var/tmp (disk); each on a new file and on the file the previous run left
(written over). Every point runs --reps times, configurations interleaved; medians reported.

Per run: write = time in the write calls (ckpt: the bursts; vpic: the time steps), visible =
open-to-close minus computation, job = mpiexec's wall time (start-up and MPI_Finalize, which
waits for a background drain, included), PFS peak = the largest byte count the GlusterFS bricks
took in any 1-second window while the run lasted (bench/pfs-sampler.py, proc:glusterfsd).
Every output file's md5 must equal plain ROMIO's for the same workload and ranks; a file that
differs is copied into --work (mismatch-*) and listed in the report.
Floors, per workload and ranks: drain1 = one phase's bytes written by plain ROMIO in one
contiguous write per rank (median of 3), start-up = that run's wall time minus its open-to-close,
computation = plain ROMIO's open-to-close minus its visible I/O (median; runs recorded before
total_s was kept use the nominal seconds, which leave out the checkpoint benchmark's filling of
its buffers, about 0.5 s of 4 phases at 4 ranks).
"""
import argparse
import importlib.machinery
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
matrix = importlib.machinery.SourceFileLoader(
    "run_matrix", os.path.join(SRC, "bench/run-matrix.py")).load_module()

WORKLOADS = {  # name -> (program, args, bytes per rank per phase)
    "ior-seg-4k": ("ckpt", ["-a", "segmented", "-t", "4k", "-S", "4m", "--no-sync"], 4 << 20),
    "ior-seg-1m": ("ckpt", ["-a", "segmented", "-t", "1m", "-S", "16m", "--no-sync"], 16 << 20),
    "ior-str-4k": ("ckpt", ["-a", "strided", "-t", "4k", "-S", "4m", "--no-sync"], 4 << 20),
    "ior-str-1m": ("ckpt", ["-a", "strided", "-t", "1m", "-S", "16m", "--no-sync"], 16 << 20),
    "ckpt": ("ckpt", ["-a", "strided", "-t", "1m", "-S", "32m"], 32 << 20),
    "hdf5-vpic": ("vpic_h5", ["-n", "1m"], 32 << 20),
}
BB = {"shm": "/dev/shm/bblog-phases-bb", "disk": "/var/tmp/bblog-phases/bb"}
CONFIGS = ("plain", "default-shm", "bb-shm", "default-disk", "bb-disk")
say = matrix.say


def build(env, work):
    os.makedirs(work, exist_ok=True)
    cc = shutil.which("mpicc", path=env["PATH"]) or matrix.die("mpicc not found")
    flags = ["-O2", "-std=gnu11", "-Wall", "-Wextra", "-I" + os.path.join(SRC, "bench")]
    for name, extra in (("ckpt", []), ("vpic_h5", ["-I" + matrix.HDF5_INC, "-L" + matrix.HDF5_LIB,
                                                   "-lhdf5"])):
        cmd = [cc] + flags + [os.path.join(SRC, f"bench/{name}.c")] + extra + [
            "-o", os.path.join(work, name)]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            matrix.die(f"building {name} failed:\n{' '.join(cmd)}\n{r.stderr}")


def run(a, env, prog, args, path, nprocs, cfg, cb, stats):
    """One mpiexec; returns (the program's JSON, wall seconds, unix start, unix end)."""
    renv = dict(env)
    hints = []
    if cfg == "plain":
        name = "ufs:" + path
        if cb:
            hints.append(f"romio_cb_write={cb}")
    else:
        name = "bblog:" + path
        kind = cfg.split("-")[1]
        renv["BBLOG_DIR"] = BB[kind]
        os.makedirs(BB[kind], exist_ok=True)
        renv["BBLOG_STATS"] = stats
        if cfg.startswith("bb-"):
            hints.append("bblog_mode=bb")
    cmd = [shutil.which("mpiexec", path=env["PATH"]), "-n", str(nprocs),
           os.path.join(a.work, prog)] + args
    for h in hints:
        cmd += ["-H", h]
    cmd += ["-o", name] if prog == "vpic_h5" else ["--keep", name]
    subprocess.run(["sync"])
    u0, t0 = time.time(), time.monotonic()
    r = subprocess.run(cmd, env=renv, capture_output=True, text=True, timeout=a.timeout)
    wall, u1 = time.monotonic() - t0, time.time()
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        matrix.die(f"failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return json.loads(lines[-1]), wall, u0, u1


def times(prog, out, steps, T):
    """(write, visible, compute) seconds of one program's JSON; compute is nominal."""
    if prog == "vpic_h5":
        return out["write_s"], out["visible_s"], (steps - 1) * T
    return out["writes_s"], out["visible_s"], steps * T


def peak(samples, u0, u1):
    """Largest byte count taken in any 1-second window inside [u0, u1]."""
    pts = [(t, b) for t, b in samples if u0 - 0.1 <= t <= u1 + 0.1]
    best, j = 0, 0
    for i in range(len(pts)):
        while j + 1 < len(pts) and pts[j + 1][0] - pts[i][0] <= 1.0:
            j += 1
        best = max(best, pts[j][1] - pts[i][1])
    return best


def read_samples(path):
    """The sampler's (time, bytes) lines; a line that is not one (a sampler cut off mid-line,
    or a stray one of an earlier run writing to the same file) is skipped, and counted."""
    out, bad = [], 0
    with open(path, errors="replace") as f:
        for ln in f:
            try:
                t, b = ln.split()
                out.append((float(t), int(b)))
            except ValueError:
                bad += 1
    if bad:
        say(f"{path}: skipped {bad} malformed sample line(s)")
    out.sort()
    return out


def cmd_run(a):
    env = matrix.mpi_env(a.env)
    build(env, a.work)
    os.makedirs(a.pfs_dir, exist_ok=True)
    path = os.path.join(a.pfs_dir, "out")
    stats = os.path.join(a.work, "stats.json")
    sfile = os.path.join(a.work, "pfs-samples.txt")
    sampler = subprocess.Popen([sys.executable, os.path.join(SRC, "bench/pfs-sampler.py"),
                                "--source", "proc:glusterfsd", "--hz", "10", "--out", sfile])
    result = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "steps": a.steps, "reps": a.reps,
              "compute": a.compute, "np": a.np, "runs": [], "points": []}
    try:
        for w in a.workloads:
            prog, wargs, phase = WORKLOADS[w]
            for nprocs in a.np:
                base = wargs + ["-N", str(a.steps)]
                # Pilot: plain ROMIO's best collective-buffering mode, without computation.
                pilot = {}
                for cb in ("automatic", "disable"):
                    out, wall, _, _ = run(a, env, prog, base + ["-T", "0"], path, nprocs,
                                          "plain", cb, stats)
                    pilot[cb] = wall
                    os.unlink(path)
                cb = min(pilot, key=pilot.get)
                # Floors: one phase's bytes in one contiguous write per rank, plain ROMIO.
                cal = []
                for _ in range(3):
                    out, wall, _, _ = run(a, env, "ckpt", ["-a", "segmented", "-S", str(phase),
                                          "-t", str(phase), "-N", "1", "-T", "0"], path,
                                          nprocs, "plain", "disable", stats)
                    cal.append((out["total_s"], wall - out["total_s"] - out["open_s"]))
                    os.unlink(path)
                point = {"workload": w, "np": nprocs, "plain_cb": cb, "pilot_wall_s": pilot,
                         "drain1_s": statistics.median(c[0] for c in cal),
                         "startup_s": statistics.median(c[1] for c in cal)}
                result["points"].append(point)
                say(f"{w} np={nprocs}: plain best cb={cb} {pilot}, one phase to the PFS "
                    f"{point['drain1_s']:.3f} s, start-up {point['startup_s']:.3f} s")
                ref = None
                for rep in range(a.reps):
                    for T in a.compute:
                        for cfg in CONFIGS:
                            if os.path.exists(path):
                                os.unlink(path)
                            for kind in BB.values():
                                shutil.rmtree(kind, ignore_errors=True)
                            for fileset in ("new", "over"):
                                if os.path.exists(stats):
                                    os.unlink(stats)
                                out, wall, u0, u1 = run(a, env, prog, base + ["-T", str(T)],
                                                        path, nprocs, cfg, cb, stats)
                                digest = matrix.md5(path)
                                ref = ref or digest
                                kept = None
                                if digest != ref:
                                    kept = os.path.join(a.work, f"mismatch-{w}-{nprocs}-{T}-{cfg}-"
                                                        f"{fileset}-{rep}")
                                    shutil.copyfile(path, kept)
                                    say(f"{w} np={nprocs} {cfg} {fileset}: md5 {digest} differs "
                                        f"from the first run's {ref}; the file is kept as {kept}")
                                write, visible, compute = times(prog, out, a.steps, T)
                                st = matrix.stats_objects(stats)
                                rec = {"workload": w, "np": nprocs, "compute": T, "cfg": cfg,
                                       "file": fileset, "rep": rep, "write_s": write,
                                       "visible_s": visible, "compute_s": compute,
                                       "total_s": out["total_s"],
                                       "job_s": wall, "u0": u0, "u1": u1, "md5": digest,
                                       "md5_ok": digest == ref, "kept": kept,
                                       "loadavg": os.getloadavg()[0]}
                                if st:
                                    rec["bytes_logged"] = sum(s.get("bytes_logged", 0) for s in st)
                                    rec["bytes_through"] = sum(s.get("bytes_through", 0)
                                                               for s in st)
                                result["runs"].append(rec)
                                save(result, a)
                                say(f"{w} np={nprocs} T={T} {cfg} {fileset}: write {write:.3f} "
                                    f"visible {visible:.3f} job {wall:.2f}")
                if os.path.exists(path):
                    os.unlink(path)
    finally:
        sampler.send_signal(signal.SIGTERM)
        sampler.wait()
    samples = read_samples(sfile)
    for rec in result["runs"]:
        rec["pfs_peak_mb_s"] = round(peak(samples, rec["u0"], rec["u1"]) / 1e6, 1)
    say(f"wrote {save(result, a)}")
    report(os.path.join(a.out, f"{a.tag}.json"))


def save(result, a):
    """Writes the results so far (a run cut short keeps what it measured)."""
    out = os.path.join(a.out, f"{a.tag}.json")
    os.makedirs(a.out, exist_ok=True)
    with open(out + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(out + ".tmp", out)
    return out


def computation(runs):
    """The computation of the floors: plain ROMIO's measured open-to-close minus visible I/O
    (the program's own computation, data generation included: the checkpoint benchmark fills
    its buffers there), where the runs recorded total_s; else the nominal seconds."""
    if runs and all("total_s" in r for r in runs):
        return statistics.median(r["total_s"] - r["visible_s"] for r in runs)
    return med(runs, "compute_s")


def med(runs, key):
    vals = [r[key] for r in runs if key in r]
    return statistics.median(vals) if vals else float("nan")


def report(path):
    res = json.load(open(path))
    pts = {(p["workload"], p["np"]): p for p in res["points"]}
    groups = {}
    for r in res["runs"]:
        groups.setdefault((r["workload"], r["np"], r["compute"], r["file"]), {}) \
              .setdefault(r["cfg"], []).append(r)
    lines = [f"# Output phases with computation between them ({res['started']})", ""]
    if res.get("note"):
        lines += [f"Note: {res['note']}.", ""]
    lines += [
             f"`bench/run-phases.py run`: {res['steps']} output phases per run, medians of "
             f"{res['reps']} runs, configurations interleaved; GlusterFS stand-in as the PFS. "
             "Cells: write / visible I/O / whole job, seconds; visible = open-to-close minus "
             "computation; job = mpiexec's wall time. floor: visible = BB write of the bb-shm "
             "run + one phase to the PFS; job = start-up + computation + that, the computation "
             "plain ROMIO's measured one (open to close minus visible I/O: data generation "
             "included) where the runs recorded it, else the nominal seconds. Bars (issue 21): "
             "bb visible <= 1.25 x floor, bb job <= plain and <= 1.1 x floor, default visible "
             "and job <= plain. PFS-bound job (not a bar: what the PFS allows when it is slower "
             "than the computation): start-up + the computation before the first phase + the "
             "bb-shm run's burst-buffer write of one phase + every phase drained one after "
             "the other at the floor's speed; bb/bound = bb-shm's job over the larger of the "
             "two floors.", "",
             "| workload | np | compute | file | plain (best cb) | default shm | bb shm | "
             "default disk | bb disk | floor vis / job | PFS-bound job, bb/bound | "
             "PFS peak MB/s plain / bb-shm | bars |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    fails = []
    for (w, n, T, fs), by in sorted(groups.items()):
        p = pts[(w, n)]
        m = {c: {k: med(rs, k) for k in ("write_s", "visible_s", "job_s", "compute_s",
                                           "pfs_peak_mb_s")} for c, rs in by.items()}
        cell = lambda c: (f"{m[c]['write_s']:.2f} / {m[c]['visible_s']:.2f} / "
                          f"{m[c]['job_s']:.2f}") if c in m else "-"
        bad = []
        for kind in ("shm", "disk"):
            bb, dflt = m.get(f"bb-{kind}"), m.get(f"default-{kind}")
            if not bb or not dflt:
                continue
            fvis = bb["write_s"] + p["drain1_s"]
            fjob = p["startup_s"] + computation(by["plain"]) + fvis
            if bb["visible_s"] > 1.25 * fvis:
                bad.append(f"bb-{kind} visible {bb['visible_s'] / fvis:.2f}x floor")
            if bb["job_s"] > m["plain"]["job_s"]:
                bad.append(f"bb-{kind} job > plain")
            if bb["job_s"] > 1.1 * fjob:
                bad.append(f"bb-{kind} job {bb['job_s'] / fjob:.2f}x floor")
            for k in ("visible_s", "job_s"):
                if dflt[k] > m["plain"][k]:
                    bad.append(f"default-{kind} {k[:-2]} > plain")
        fvis = m["bb-shm"]["write_s"] + p["drain1_s"] if "bb-shm" in m else float("nan")
        comp, nominal, steps = computation(by["plain"]), m["plain"]["compute_s"], res["steps"]
        fjob = p["startup_s"] + comp + fvis
        # The computation before the first phase: its nominal share of the whole.
        first = comp * (nominal - (steps - 1) * T) / nominal if nominal > 0 else 0.0
        bound = (p["startup_s"] + first +
                 m.get("bb-shm", {"write_s": float("nan")})["write_s"] / steps +
                 steps * p["drain1_s"])
        bbjob = m.get("bb-shm", {"job_s": float("nan")})["job_s"]
        lines.append(f"| {w} | {n} | {T} | {fs} | {cell('plain')} ({p['plain_cb']}) | "
                     f"{cell('default-shm')} | {cell('bb-shm')} | {cell('default-disk')} | "
                     f"{cell('bb-disk')} | {fvis:.2f} / {fjob:.2f} | "
                     f"{bound:.2f}, {bbjob / max(fjob, bound):.2f} | "
                     f"{m['plain']['pfs_peak_mb_s']:.0f} / "
                     f"{m.get('bb-shm', {'pfs_peak_mb_s': float('nan')})['pfs_peak_mb_s']:.0f} | "
                     f"{'ok' if not bad else '; '.join(bad)} |")
        fails += [f"{w} np={n} T={T} {fs}: {b}" for b in bad]
    # The right output of a workload and ranks is the md5 most of its runs wrote (the first run
    # alone may be the odd one: the stand-in has corrupted plain ROMIO's files too).
    votes = {}
    for r in res["runs"]:
        c = votes.setdefault((r["workload"], r["np"]), {})
        c[r["md5"]] = c.get(r["md5"], 0) + 1
    bad_md5 = [r for r in res["runs"] if "md5" in r and
               r["md5"] != max(votes[(r["workload"], r["np"])].items(), key=lambda kv: kv[1])[0]]
    lines += ["", f"Bars: {len(groups)} points, {len(fails)} misses. Output files whose md5 "
              f"differs from the one most runs of their workload and ranks wrote: {len(bad_md5)}."]
    lines += [f"- md5: {r['workload']} np={r['np']} T={r['compute']} {r['cfg']} {r['file']}"
              for r in bad_md5]
    lines += [f"- {f}" for f in fails]
    md = os.path.splitext(path)[0] + ".md"
    with open(md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--workloads", default=",".join(WORKLOADS))
    r.add_argument("--np", default="2,4")
    r.add_argument("--compute", default="0.5,2", help="seconds of computation per phase")
    r.add_argument("--steps", type=int, default=4)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--pfs-dir", default="/mnt/pfs/bblog-phases")
    r.add_argument("--work", default="/var/tmp/bblog-phases/work")
    r.add_argument("--env", default=os.environ.get(
        "BBLOG_ENV", "/var/cache/bblog/current/bin/bblog-env.sh"))
    r.add_argument("--out", default=os.path.join(SRC, "bench/results"))
    r.add_argument("--tag", default="phases")
    r.add_argument("--timeout", type=int, default=600)
    rp = sub.add_parser("report")
    rp.add_argument("file")
    a = p.parse_args()
    if a.cmd == "report":
        report(a.file)
        return
    a.workloads = a.workloads.split(",")
    for w in a.workloads:
        if w not in WORKLOADS:
            matrix.die(f"unknown workload '{w}' (one of {', '.join(WORKLOADS)})")
    a.np = [int(x) for x in a.np.split(",")]
    a.compute = [float(x) for x in a.compute.split(",")]
    cmd_run(a)


if __name__ == "__main__":
    main()
