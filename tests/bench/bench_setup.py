"""Benchmark: a fresh clone's set-up with uv against the same set-up with plain pip.

Run ``python tests/bench/bench_setup.py`` (``make bench-setup``; standard library only, no .venv
needed). Each run clones the repository's committed HEAD into a new private folder (``mktemp
-d``), then times:

- ``make lab`` until JupyterLab answers HTTP on its port (then stops it by its process group);
- ``make setup-test`` (the test set; ``--lab-only`` skips it);

with ``INSTALLER=uv`` (uv taken from PyPI into .venv, as on a machine without uv) and with
``INSTALLER=pip``, each with a cold package cache (a new, empty UV_CACHE_DIR and PIP_CACHE_DIR)
and then a warm one (the same cache folders again, in a new clone). Every configuration runs in
one process, in alternating order, so they meet the same machine load; ``--repeat N`` runs N
rounds and prints medians. The ratios printed are pip / uv, measured in this one run. Nothing is
gated: the figures depend on the network and the machine's load, which are printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 1800  # seconds; a cold pip set-up of the test set takes minutes


@dataclass
class Measure:
    installer: str
    cache: str
    setup: float  # seconds until .venv's set-up stamp is written
    total: float  # seconds until the target is done (make lab: until JupyterLab answers)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clone(workdir: Path, name: str) -> Path:
    dest = workdir / name
    subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], check=True)
    return dest


def stop_group(proc: subprocess.Popen) -> None:
    """Stop a process group we started, by its id, then check nothing of it is left."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)


def run_env(workdir: Path, caches: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        UV_CACHE_DIR=str(caches / "uv"),
        PIP_CACHE_DIR=str(caches / "pip"),
        JUPYTER_RUNTIME_DIR=str(workdir / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(workdir / "workspaces"),
    )
    env.pop("VIRTUAL_ENV", None)
    return env


def make_args(checkout: Path, installer: str) -> list[str]:
    # UV pointing into the clone: uv comes from PyPI, as for a student who has none
    return ["make", "--no-print-directory", f"INSTALLER={installer}", f"UV={checkout}/.venv/bin/uv"]


def time_lab(workdir: Path, caches: Path, installer: str, cache: str, log: Path) -> Measure:
    checkout = clone(workdir, f"lab-{installer}-{cache}")
    token = secrets.token_hex(16)
    # the port is free now, perhaps not after a minute of set-up: Jupyter may move to the next
    # one (port_retries), and the URL it prints says which
    lab_args = (
        f"--no-browser --ServerApp.ip=127.0.0.1 --port={free_port()} "
        f"--IdentityProvider.token={token}"
    )
    served = re.compile(r"http://127\.0\.0\.1:(\d+)/lab")  # the token is masked there
    stamp = checkout / ".venv" / ".stamp-runtime"
    run_log = workdir / f"lab-{installer}-{cache}.log"
    with run_log.open("wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(
            [*make_args(checkout, installer), "lab", f"LAB_ARGS={lab_args}"],
            cwd=checkout,
            env=run_env(workdir, caches),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    setup = None
    try:
        while True:
            now = time.monotonic()
            if setup is None and stamp.exists():
                setup = now - start
            if proc.poll() is not None:
                raise RuntimeError(f"make lab exited ({proc.returncode})")
            if now - start > RUN_TIMEOUT:
                raise RuntimeError(f"make lab: no answer within {RUN_TIMEOUT} s")
            found = served.search(run_log.read_text(errors="replace"))
            try:
                if not found:
                    raise OSError("not serving yet")
                url = f"http://127.0.0.1:{found.group(1)}/api/status?token={token}"
                with urllib.request.urlopen(url, timeout=2) as response:
                    json.load(response)
                total = time.monotonic() - start
                break
            except OSError:
                time.sleep(0.1)
    finally:
        stop_group(proc)
        with log.open("ab") as out:
            out.write(run_log.read_bytes())
    shutil.rmtree(checkout, ignore_errors=True)
    return Measure(installer, cache, setup if setup is not None else total, total)


def time_setup_test(workdir: Path, caches: Path, installer: str, cache: str, log: Path) -> Measure:
    checkout = clone(workdir, f"test-{installer}-{cache}")
    with log.open("ab") as out:
        start = time.monotonic()
        subprocess.run(
            [*make_args(checkout, installer), "setup-test"],
            cwd=checkout,
            env=run_env(workdir, caches),
            stdout=out,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=RUN_TIMEOUT,
            start_new_session=True,
        )
        total = time.monotonic() - start
    shutil.rmtree(checkout, ignore_errors=True)
    return Measure(installer, cache, total, total)


def measure(workdir: Path, what: str, log: Path, repeat: int) -> list[Measure]:
    """Cold then warm, uv and pip alternately (which goes first alternates too), own caches."""
    timer = time_lab if what == "lab" else time_setup_test
    caches = {installer: workdir / f"cache-{what}-{installer}" for installer in ("uv", "pip")}
    results = []
    for round_ in range(repeat):
        order = ("uv", "pip") if round_ % 2 == 0 else ("pip", "uv")
        for cache in ("cold", "warm"):
            for installer in order:
                if cache == "cold":
                    shutil.rmtree(caches[installer], ignore_errors=True)
                    caches[installer].mkdir()
                print(f"  {what}: {installer}, {cache} cache...", end=" ", flush=True)
                results.append(timer(workdir, caches[installer], installer, cache, log))
                print(f"{results[-1].total:.1f} s", flush=True)
    return results


def report(title: str, results: list[Measure], column: str) -> None:
    """Median per configuration, every run after it, and the ratio pip / uv of the medians."""
    print(f"\n{title}")
    print(f"{'cache':<6} {'uv (s)':>9} {'pip (s)':>9} {'pip / uv':>9}   runs uv | pip")
    for cache in ("cold", "warm"):
        runs = {
            installer: [
                getattr(m, column) for m in results if (m.installer, m.cache) == (installer, cache)
            ]
            for installer in ("uv", "pip")
        }
        uv, pip = statistics.median(runs["uv"]), statistics.median(runs["pip"])
        every = (
            " ".join(f"{t:.0f}" for t in runs["uv"])
            + " | "
            + " ".join(f"{t:.0f}" for t in runs["pip"])
        )
        print(f"{cache:<6} {uv:>9.1f} {pip:>9.1f} {pip / uv:>8.1f}x   {every}")


def uv_version() -> str:
    lock = (REPO / "requirements" / "uv.txt").read_text(encoding="utf-8")
    return next(line.split("==")[1].split()[0] for line in lock.splitlines() if "==" in line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab-only", action="store_true", help="skip make setup-test")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (medians are printed)")
    args = parser.parse_args()
    if subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", "HEAD"]).returncode:
        print("note: uncommitted changes are not measured (the bench clones HEAD)")
    workdir = Path(tempfile.mkdtemp(prefix="bench-setup-"))
    log = workdir / "make.log"
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    try:
        lab = measure(workdir, "lab", log, args.repeat)
        test = [] if args.lab_only else measure(workdir, "setup-test", log, args.repeat)
    except (RuntimeError, subprocess.SubprocessError) as error:
        print(f"FAILED: {error}\n--- end of the make log ---")
        print(log.read_text(errors="replace")[-4000:])
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report("make lab: set-up only (until .venv/.stamp-runtime)", lab, "setup")
    report("make lab: until JupyterLab answers HTTP", lab, "total")
    if test:
        report("make setup-test (runtime and test sets)", test, "total")
    print(f"\nload average {os.getloadavg()[0]:.1f} at end; uv {uv_version()} from PyPI into .venv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
