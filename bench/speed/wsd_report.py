"""What the WSD evaluation report costs on ALL: ``wsd eval`` with and without it, its files' sizes.

Each command runs as a user runs it, a new process, its wall time from start to exit, with the
caches it finds (run ``workbench wsd eval`` once first, so that the encodings and gloss vectors
are cached and both variants do the same work):

* ``workbench wsd eval`` (ALL, the default system, baselines) without ``--out``, then
  ``workbench wsd eval --out DIR`` (the key file and the report: HTML, Markdown, JSON, the CSV
  tables, LaTeX), in turn, ``--repeats`` times each (A B A B);
* from each run's output: its own total (``time: ... total``) and, with ``--out``, the report's
  time the command prints (``report ALL: ... s``: building the report, intervals and tests
  included, and writing its files);
* the load average before each run (the machine is shared: wall times move with it);
* the size of each file the report wrote, and the HTML page's height at 1280 px wide;
* with ``--screenshot PATH``: the report's first screen (1280 x 900) drawn by Chromium, the
  picture docs/reports.md shows (``docs/img/wsd-report.png``);
* with ``--in-process N``: in one process, after one evaluation of ALL, the report built
  (``eval_report``: intervals, tests, splits, errors, figures) and its files' texts made
  (``report_texts``), N times each, wall and CPU seconds (CPU time moves less with the load of a
  shared machine); and, as the baseline in the same process, the JSON made the way it was before
  (every value of the 7,253-row per-instance table walked again by ``jsonable``).

Run::

    nice -n 10 python -m bench run wsd_report --repeats 3 --screenshot docs/img/wsd-report.png \\
        --json docs/bench_runs/wsd_report_cpu_2core.json
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.record import write_json
from devtools.browser import CHROMIUM, CHROMIUM_ARGS
from workbench.lexicon.wordnet import load_wordnet
from workbench.reports.writers import to_dict
from workbench.wsd.builds import mfs_counts
from workbench.wsd.evaluate import evaluate_corpus, load_corpus
from workbench.wsd.reporting.document import eval_report, facts_of
from workbench.wsd.reporting.files import json_text, report_json, report_texts, write_eval_report
from workbench.wsd.systems import open_system


def run(argv: list[str]) -> tuple[float, str]:
    """Wall seconds of one command and its output, stdout and stderr (exit 0 required)."""
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return seconds, done.stdout + done.stderr


def said(pattern: str, out: str) -> float | None:
    """The first number ``pattern`` (a regex with one group) finds in a command's output."""
    match = re.search(pattern, out, re.M)
    return float(match.group(1)) if match else None


def draw(html: Path, screenshot: Path | None) -> dict:
    """Open the report in Chromium: its height at 1280 px, the figures drawn, the page's
    errors, and (``screenshot``) its first screen saved."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.resolve().as_uri())
        page.wait_for_function(
            "document.querySelectorAll('div.plotly-figure .main-svg').length >= 2", timeout=60_000
        )
        facts = {
            "height_px": page.evaluate("document.body.scrollHeight"),
            "figures_drawn": page.evaluate(
                "document.querySelectorAll('div.plotly-figure .main-svg').length"
            ),
            "page_errors": errors,
        }
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
        browser.close()
    return facts


def in_process(repeats: int) -> dict:
    """Wall and CPU seconds (medians of ``repeats``) of the report's parts on ALL, in one
    process after one evaluation; and the JSON made the old way, the baseline."""
    opened, corpus, wordnet = open_system(), load_corpus("ALL"), load_wordnet()
    run_all = evaluate_corpus(opened, corpus, wordnet, mfs_counts())
    facts = facts_of(opened, run_all.index)

    def build():
        return eval_report(run_all, corpus, wordnet, facts, {})

    out: dict = {}
    w, c = time.perf_counter(), time.process_time()
    doc = build()  # the first time: plotly's figure classes are set up (once per process)
    report_texts(doc, "wsd-ALL")
    out["first eval_report + report_texts"] = {
        "wall": time.perf_counter() - w, "cpu": time.process_time() - c,
    }  # fmt: skip
    first = out["first eval_report + report_texts"]
    print(f"  in process, the first report: wall {first['wall']:.2f} s, CPU {first['cpu']:.2f} s")
    folder = Path(tempfile.mkdtemp(prefix="wb-report-files-"))

    def old_json() -> str:  # before: the whole report, instances included, through jsonable
        content = to_dict(doc.report)
        instances = content["data"].pop("instances", None)
        content.update({k: v for k, v in content["data"].items() if k not in content})
        content["instances"] = instances
        return json_text(content)

    parts = {
        "eval_report": build,
        "report_texts": lambda: report_texts(doc, "wsd-ALL"),
        "json (now)": lambda: json_text(report_json(doc)),
        "json (before, baseline)": old_json,
        "write_eval_report": lambda: write_eval_report(doc, folder, "wsd-ALL"),
    }
    for name, fn in parts.items():
        walls, cpus = [], []
        for _ in range(repeats):
            w, c = time.perf_counter(), time.process_time()
            fn()
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        out[name] = {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}
        print(f"  in process, {name}: wall {out[name]['wall']:.2f} s, "
              f"CPU {out[name]['cpu']:.2f} s")  # fmt: skip
    shutil.rmtree(folder)
    return out


def subprocess_runs(repeats: int, screenshot: Path | None) -> dict:
    """The commands, A B A B (see the module's docstring), and the report they wrote."""
    wsd_eval = [sys.executable, "-m", "workbench", "wsd", "eval"]
    runs: dict[str, list[dict]] = {"eval": [], "eval --out": []}
    with tempfile.TemporaryDirectory(prefix="wb-report-") as tmp:
        out = Path(tmp) / "report"
        for _ in range(repeats):
            for name, extra in (("eval", []), ("eval --out", ["--out", str(out)])):
                load = os.getloadavg()[0]
                seconds, printed = run(wsd_eval + extra)
                record = {
                    "wall": seconds,
                    "total": said(r"^time: .*total ([\d.]+) s", printed),
                    "report": said(r"report ALL: ([\d.]+) s", printed),
                    "load_before": load,
                    "all_f1": said(r"^ALL\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s", printed),
                }
                runs[name].append(record)
                print(f"  {name}: wall {seconds:.1f} s, its total {record['total']} s, report "
                      f"{record['report']} s, load {load:.1f}")  # fmt: skip
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
        page = draw(out / "wsd-ALL.html", screenshot)
    summary = {
        name: {k: statistics.median(r[k] for r in rs if r[k] is not None)
               for k in ("wall", "total")}
        for name, rs in runs.items()
    }  # fmt: skip
    reports = [r["report"] for r in runs["eval --out"] if r["report"] is not None]
    summary["report"] = {"median": statistics.median(reports), "max": max(reports)}
    print(f"  medians: {summary}")
    megabytes = sizes.get("wsd-ALL.html", 0) / 1e6
    print(f"  wsd-ALL.html {megabytes:.2f} MB, {page['height_px']} px tall, "
          f"{page['figures_drawn']} figures drawn, page errors {page['page_errors']}")  # fmt: skip
    return {"runs": runs, "summary": summary, "sizes": sizes, "page": page,
            "load_average_end": os.getloadavg()}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="command pairs (0: none)")
    ap.add_argument("--screenshot", type=Path, default=None, help="save the first screen here")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--in-process", type=int, default=0, help="repeats of the in-process part")
    args = ap.parse_args()
    results: dict = {}
    if args.repeats:
        results.update(subprocess_runs(args.repeats, args.screenshot))
    write_json(args.json, results)
    if args.in_process:
        results["in_process"] = in_process(args.in_process)
        results["load_average_end"] = os.getloadavg()
        write_json(args.json, results)


if __name__ == "__main__":
    main()
