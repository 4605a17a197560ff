#!/usr/bin/env python3
"""pacing-report.py - turns the records of run-pacing-bench.sh into JSON lines and PNGs.

Usage: pacing-report.py [--png-dir DIR] [--source S] [--pfs-dir D] [--bb-dir D] RUNS MODE...

Per MODE it reads RUNS/MODE.ckpt.json (bench/ckpt.c), MODE.rate.txt (bench/pfs-sampler.py:
"unix_time bytes"), MODE.probe.json and MODE.probe.txt (bench/probe.c), MODE.stats.json (the
driver's bblog_stats, when written), or MODE.refused (the driver's message when it refused the
mode). Times are seconds from the ckpt run's t0 (after open).

Reported per mode ("run"): the PFS bytes taken during the run, the peak rate over any 1-second
window (successive samples at most 1 s apart; 10 Hz samples make windows of 0.9-1.0 s) over
the whole record and while the application computes (windows that end by the start of the last
burst: what is left after it drains at full speed at close or MPI_Finalize), the mean rate, the target S/T of issue 5 taken as the aggregate P * S / T, and their ratio; per
checkpoint when the PFS had taken all data up to it (99%, the sampler counts other bytes too
on GlusterFS) and whether that was before the next burst began; the probe's p50/p99 over the
run. Then one "bar" per target of issue 5 when the modes it compares are there. Asserts
nothing.
"""
import argparse
import json
import os
import platform
import statistics
import sys


def load_json(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    dec, out, pos = json.JSONDecoder(), [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        try:
            obj, pos = dec.raw_decode(text, pos)
        except ValueError:
            out.append({"unparsed": text[pos:pos + 200]})
            break
        out.append(obj)
    return out


def load_pairs(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    rows.append((float(parts[0]), float(parts[1])))
    except OSError:
        pass
    return rows


def pct(values, q):
    v = sorted(values)
    if not v:
        return None
    i = max(1, min(len(v), int(q * len(v) + 0.999999999)))
    return v[i - 1]


def peak_1s(samples):
    """Largest byte count taken over any window of at most 1 s between two samples."""
    peak, j = 0.0, 0
    for i in range(len(samples)):
        j = max(j, i)
        while j + 1 < len(samples) and samples[j + 1][0] - samples[i][0] <= 1.0 + 1e-6:
            j += 1
        if j > i:
            peak = max(peak, (samples[j][1] - samples[i][1]) / 1.0)
    return peak


def analyse(runs, mode):
    refused = os.path.join(runs, f"{mode}.refused")
    if os.path.exists(refused):
        return {"type": "run", "mode": mode, "accepted": False,
                "error": open(refused).read().strip()}, None
    ck = (load_json(os.path.join(runs, f"{mode}.ckpt.json")) or [None])[0]
    if not ck or "t0_unix" not in ck:
        return {"type": "run", "mode": mode, "accepted": True, "error": "no ckpt record"}, None
    t0 = ck["t0_unix"]
    P, S, T = ck["nprocs"], ck["bytes_per_rank"], ck["compute_s"]
    samples = [(t - t0, b) for t, b in load_pairs(os.path.join(runs, f"{mode}.rate.txt"))]
    base = samples[0][1] if samples else 0
    samples = [(t, b - base) for t, b in samples]
    # Rate between successive samples, and the peak over windows of at most 1 s: over the
    # whole record, and while the application computes (windows that end by the start of the
    # last burst). What is left after the last burst drains at full speed at close or
    # MPI_Finalize, with nothing left to overlap with (DESIGN.md section 6); the pacing bar is
    # about the PFS load while the application computes.
    series = [((t1 + t2) / 2, (b2 - b1) / (t2 - t1))
              for (t1, b1), (t2, b2) in zip(samples, samples[1:]) if t2 > t1]
    last_burst = ck["ckpts"][-1]["write_start"] if ck["ckpts"] else None
    peak = peak_1s(samples)
    peak_comp = peak_1s([(t, b) for t, b in samples if t <= last_burst]) \
        if last_burst is not None else None
    run_end = ck["total_s"]
    in_run = [(t, b) for t, b in samples if 0 <= t <= run_end]
    taken = (in_run[-1][1] - in_run[0][1]) if len(in_run) > 1 else 0
    target = P * S / T if T > 0 else None
    phases = []
    for k, c in enumerate(ck["ckpts"]):
        need = 0.99 * (k + 1) * P * S
        done = next((t for t, b in samples if b >= need and t >= c["write_start"]), None)
        nxt = ck["ckpts"][k + 1]["write_start"] if k + 1 < len(ck["ckpts"]) else None
        phases.append({"k": k, "write_start": c["write_start"], "sync_end": c["sync_end"],
                       "pfs_has_it_at": done,
                       "drain_s": None if done is None else round(done - c["write_start"], 3),
                       "before_next": None if nxt is None else (done is not None and done <= nxt)})
    probe = (load_json(os.path.join(runs, f"{mode}.probe.json")) or [{}])[0]
    lat = [l for t, l in load_pairs(os.path.join(runs, f"{mode}.probe.txt"))
           if 0 <= t - t0 <= run_end]
    stats = load_json(os.path.join(runs, f"{mode}.stats.json"))
    row = {"type": "run", "mode": mode, "accepted": True, "ok": ck.get("ok"),
           "nprocs": P, "bytes_per_rank": S, "compute_s": T, "count": ck["count"],
           "transfer": ck["transfer"], "sync": ck["sync"], "total_s": run_end,
           "write_s_mean": round(statistics.mean(c["write_s"] for c in ck["ckpts"]), 4),
           "sync_s_mean": round(statistics.mean(c["sync_s"] for c in ck["ckpts"]), 4),
           "close_s": ck["close_s"],
           "pfs_bytes_in_run": taken, "pfs_bytes_expected": P * S * ck["count"],
           "peak_1s_MiBps": round(peak / 2**20, 2),
           "mean_MiBps": round(taken / run_end / 2**20, 2) if run_end > 0 else None,
           "target_S_over_T_MiBps": round(target / 2**20, 2) if target else None,
           "peak_over_target": round(peak / target, 3) if target else None,
           "peak_1s_computing_MiBps": None if peak_comp is None else round(peak_comp / 2**20, 2),
           "peak_computing_over_target": round(peak_comp / target, 3)
           if target and peak_comp is not None else None,
           "phases": phases,
           "all_drained_before_next": all(p["before_next"] for p in phases
                                          if p["before_next"] is not None),
           "probe_count": len(lat), "probe_p50_ms": None, "probe_p99_ms": None,
           "probe_whole_run": {k: probe.get(k) for k in ("count", "missed_ticks", "p50_s",
                                                         "p99_s", "max_s")},
           "bblog_stats": (stats[-1] if stats and len(stats) == 1 else stats) or None}
    if lat:
        row["probe_p50_ms"] = round(pct(lat, 0.5) * 1e3, 3)
        row["probe_p99_ms"] = round(pct(lat, 0.99) * 1e3, 3)
    return row, {"series": series, "ck": ck, "target": target,
                 "lat": [(t - t0, l) for t, l in load_pairs(os.path.join(runs,
                                                                          f"{mode}.probe.txt"))]}


def plot(png_dir, data):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = [m for m in data if data[m]]
    if not modes:
        return []
    fig, axes = plt.subplots(len(modes), 1, figsize=(10, 2.6 * len(modes)), sharex=True,
                             squeeze=False)
    for ax, m in zip(axes[:, 0], modes):
        d = data[m]
        xs = [t for t, _ in d["series"]]
        ys = [r / 2**20 for _, r in d["series"]]
        ax.plot(xs, ys, lw=1, label="PFS write rate")
        for c in d["ck"]["ckpts"]:
            ax.axvspan(c["write_start"], c["sync_end"], color="orange", alpha=0.3, lw=0)
        if d["target"]:
            ax.axhline(d["target"] / 2**20, color="green", ls="--", lw=1, label="P*S/T")
            ax.axhline(1.25 * d["target"] / 2**20, color="red", ls=":", lw=1,
                       label="1.25 P*S/T")
        ax.set_ylabel("MiB/s")
        ax.set_title(f"{m}: PFS write rate (orange: write burst + sync)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("seconds since open")
    fig.tight_layout()
    rate_png = os.path.join(png_dir, "pacing-rate.png")
    fig.savefig(rate_png, dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    for m in modes:
        lat = data[m]["lat"]
        ax.plot([t for t, _ in lat], [l * 1e3 for _, l in lat], lw=0, marker=".", ms=3,
                label=m)
    ax.set_yscale("log")
    ax.set_xlabel("seconds since open")
    ax.set_ylabel("4 KiB write+fsync latency (ms)")
    ax.set_title("probe client, every 100 ms on the same PFS", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    probe_png = os.path.join(png_dir, "pacing-probe.png")
    fig.savefig(probe_png, dpi=100)
    plt.close(fig)
    return [rate_png, probe_png]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--png-dir")
    ap.add_argument("--source")
    ap.add_argument("--pfs-dir")
    ap.add_argument("--bb-dir")
    ap.add_argument("runs")
    ap.add_argument("modes", nargs="+")
    a = ap.parse_args()
    emit = lambda o: print(json.dumps(o), flush=True)
    emit({"type": "env", "host": platform.node(), "cpus": os.cpu_count(), "records": a.runs,
          "rate_source": a.source, "pfs_dir": a.pfs_dir, "bb_dir": a.bb_dir})
    rows, data = {}, {}
    for m in a.modes:
        rows[m], data[m] = analyse(a.runs, m)
        emit(rows[m])
    pro, rea = rows.get("proactive"), rows.get("reactive")
    if pro and pro.get("accepted") and pro.get("peak_computing_over_target") is not None:
        emit({"type": "bar", "what": "proactive peak 1-s rate while computing <= 1.25 x S/T",
              "value": pro["peak_computing_over_target"], "target": 1.25,
              "met": pro["peak_computing_over_target"] <= 1.25,
              "whole_run": pro["peak_over_target"]})
        emit({"type": "bar", "what": "proactive: every phase drained before the next begins",
              "met": pro["all_drained_before_next"]})
        if rea and rea.get("accepted") and rea.get("probe_p99_ms") is not None:
            emit({"type": "bar", "what": "probe p99 under proactive < under reactive",
                  "value": pro["probe_p99_ms"], "target": rea["probe_p99_ms"],
                  "met": pro["probe_p99_ms"] < rea["probe_p99_ms"]})
    else:
        emit({"type": "bar", "what": "issue 5 targets", "met": None,
              "why": "proactive did not run (not accepted by the driver?)"})
    if a.png_dir:
        for png in plot(a.png_dir, data):
            print(f"pacing-report: wrote {png}", file=sys.stderr)


if __name__ == "__main__":
    main()
