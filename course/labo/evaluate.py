"""Grades one ``oublier`` cell: one runner process per scenario, with a time limit, then one
checker process that judges the files they left, then the criteria.

Nothing here runs student code in the calling process, so a notebook kernel that a submission
has tampered with can at worst fool its own copy of this module, never the grade nbgrader writes
(the grader's hooks call this from nbgrader's process). Each scenario runs in its own process and
folder: a runner never holds the inputs of another scenario. With ``sandboxed=True`` (grading),
runners and checker run in the sandbox of ``course.labo.sandbox``; ``verifier`` runs them
without it, with the student's own rights.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .criteria import (
    NOT_WRITTEN,
    TESTS,
    Verdict,
    judge_all,
    load_message,
    unfinished_message,
)
from .fixture import fixture_bytes
from .protocol import (
    CallOutcome,
    CheckRequest,
    LoadFailure,
    Ready,
    Reference,
    RunPlan,
    SnapshotCheck,
    Stalled,
    decode_facts,
    decode_record,
)
from .sandbox import Sandbox
from .scenario import VISIBLE, CallResult, Role, RunEnd, Scenario, ScenarioResult
from .submission_runner import SNAPSHOTS, SUBMISSION

__all__ = [
    "DEFAULT_TIMEOUT",
    "OUTCOMES",
    "Evaluation",
    "evaluate_source",
    "extract_source",
]

DEFAULT_TIMEOUT = float(os.environ.get("COURSE_LABO_TIMEOUT", "10"))
CHECKER_TIMEOUT = 120.0
# How a submission's grading ended, for the class report (see ``Evaluation.outcome``).
OUTCOMES = ("graded", "not_written", "timeout", "crash", "load_error")

# Captured at import: later monkeypatching of these modules does not reach the grader.
_Popen = subprocess.Popen
_killpg = getattr(os, "killpg", None)  # POSIX; elsewhere only the runner itself is killed
_executable = sys.executable

_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Evaluation:
    """Everything one evaluation found: per scenario, its run and a verdict per criterion."""

    results: dict[str, ScenarioResult]
    criteria: dict[str, dict[str, Verdict]]  # scenario name -> criterion key -> verdict
    seconds: float
    sandboxed: bool
    names_by_hidden: dict[bool, str] = field(default_factory=dict)  # is hidden -> scenario name

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Test id -> verdict, for the graded tests whose scenario ran (visible ones only for
        ``verifier``: the hidden inputs are not in this package)."""
        out = {}
        for test in TESTS.values():
            name = self.names_by_hidden.get(not test.visible)
            if name is not None:
                out[test.id] = self.criteria[name][test.criterion]
        return out

    @property
    def score(self) -> int:
        return sum(TESTS[t].points for t, v in self.verdicts.items() if v.ok)

    @property
    def max_score(self) -> int:
        return sum(TESTS[t].points for t in self.verdicts)

    @property
    def load_error(self) -> str | None:
        for result in self.results.values():
            failure = result.load_failure
            if failure is not None:
                error = failure.error
                return load_message(
                    failure.reason, error.type if error else "", error.message if error else ""
                )
        return None

    @property
    def timed_out(self) -> bool:
        return any(r.end is RunEnd.TIMED_OUT for r in self.results.values())

    @property
    def not_written(self) -> bool:
        """The untouched stub: the first call raised NotImplementedError."""
        for result in self.results.values():
            erase = result.of(Role.ERASE)
            outcome = erase[0].outcome if erase else None
            if outcome and outcome.error and outcome.error.type == "NotImplementedError":
                return True
        return False

    def outcome(self) -> tuple[str, str]:
        """How grading went, for the class report: one of ``OUTCOMES`` and a French sentence."""
        if self.not_written:
            return "not_written", NOT_WRITTEN
        load_error = self.load_error
        if load_error:
            return "load_error", load_error
        for end, kind in ((RunEnd.TIMED_OUT, "timeout"), (RunEnd.CRASHED, "crash")):
            for result in self.results.values():
                if result.end is end:
                    return kind, unfinished_message(result)
        where = "dans le bac à sable" if self.sandboxed else "sans bac à sable"
        seconds = f"{self.seconds:.1f}".replace(".", ",")
        return (
            "graded",
            f"Noté\u00a0: {self.score}/{self.max_score} points aux tests automatiques, en "
            f"{seconds}\u00a0s, {where}.",
        )


def _plain_python(cell_source: str) -> str:
    """The cell as plain Python (IPython magics become calls, then dropped below)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is a dependency of the course
        return cell_source
    try:
        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 - a broken cell is reported by the runner
        return cell_source


def extract_source(cell_source: str) -> str:
    """Definitions and imports of the student's cell, without its top-level actions.

    Calls such as ``await oublier(...)`` on the student's own database, or monkeypatching at top
    level, are left out: only what ``oublier`` needs to exist is kept. A cell that does not parse
    is returned unchanged, so the runner reports its SyntaxError.
    """
    source = _plain_python(cell_source)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    kept = []
    for node in tree.body:
        if isinstance(node, _KEPT):
            kept.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) for t in targets):
                kept.append(node)
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


@dataclass
class _Run:
    """One runner process and what is needed to stop it and read it."""

    scenario: Scenario
    folder: Path
    proc: subprocess.Popen
    journal: int  # read end of the journal pipe
    info: int | None  # read end of bubblewrap's --info-fd pipe (the sandbox's first pid)
    stderr: Path
    timed_out: bool = False


def _sandbox_pid(info_fd: int) -> int | None:
    """The host pid of the sandbox's PID 1, from bubblewrap's --info-fd output."""
    try:
        data = os.read(info_fd, 65536)
        return int(json.loads(data.decode())["child-pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _stop(run: _Run) -> None:
    """Kill the runner and everything it started.

    With the sandbox: kill the PID namespace's first process while bubblewrap still waits for it
    (so its pid cannot have been reused); the kernel kills every other process of the namespace
    before that one is gone, and bubblewrap exits only then. Without the sandbox: the runner's
    process group (a detached process can escape it: that is the student's own machine).
    """
    if run.proc.poll() is None and run.info is not None:
        pid = _sandbox_pid(run.info)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                run.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    try:
        if _killpg is not None:
            _killpg(run.proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            run.proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
    run.proc.wait()


def _read_available(fd: int) -> str:
    """What a pipe holds now, without waiting (a detached process may keep it open)."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _start_runner(scenario: Scenario, folder: Path, plan: RunPlan, sandbox: Sandbox | None) -> _Run:
    journal_r, journal_w = os.pipe()
    info_r = info_w = None
    argv = [
        _executable,
        "-I",
        "-X",
        "utf8",
        "-m",
        "course.labo.submission_runner",
        str(folder),
        str(journal_w),
    ]
    pass_fds = [journal_w]
    if sandbox is not None:
        sandbox.hand_over(folder)
        info_r, info_w = os.pipe()
        pass_fds.append(info_w)
        command = sandbox.command(argv, writable=folder)
        command[1:1] = ["--info-fd", str(info_w)]
    else:
        command = argv
    stderr = folder.parent / f"{scenario.name}.stderr"
    with open(stderr, "wb") as err:
        proc = _Popen(
            command,
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            pass_fds=pass_fds,
            start_new_session=True,
        )
    for fd in pass_fds:
        os.close(fd)
    try:
        assert proc.stdin is not None
        proc.stdin.write(plan.to_json().encode())
        proc.stdin.close()
    except OSError:  # it died at once: its journal says why
        pass
    return _Run(scenario, folder, proc, journal_r, info_r, stderr)


def _prepare(source: str, scenario: Scenario, folder: Path, image: bytes) -> None:
    folder.mkdir()
    (folder / SUBMISSION).write_text(extract_source(source), encoding="utf-8")
    for database in scenario.databases():
        (folder / database).write_bytes(image)


def _scenario_result(run: _Run, facts, timeout: float) -> ScenarioResult:
    records = [decode_record(line) for line in _read_available(run.journal).splitlines()]
    outcomes = {r.call_id: r for r in records if isinstance(r, CallOutcome)}
    load = next((r for r in records if isinstance(r, LoadFailure)), None)
    stalled = next((r for r in records if isinstance(r, Stalled)), None)
    calls = run.scenario.calls()
    if load is not None:
        end = RunEnd.LOAD_FAILED
    elif all(call.call_id in outcomes for _role, call in calls):
        end = RunEnd.FINISHED
    elif run.timed_out:
        end = RunEnd.TIMED_OUT
    elif any(isinstance(r, Ready) for r in records):
        end = RunEnd.CRASHED
    else:
        tail = run.stderr.read_text(errors="replace")[-2000:]
        raise RuntimeError(
            f"Le processus qui exécute oublier n'a pas démarré (code {run.proc.returncode})"
            f"\u00a0:\n{tail}"
        )
    return ScenarioResult(
        scenario=run.scenario,
        end=end,
        timeout=timeout,
        calls=tuple(
            CallResult(
                role,
                call,
                outcomes.get(call.call_id),
                facts.get(call.call_id) if call.call_id in outcomes else None,
            )
            for role, call in calls
        ),
        load_failure=load,
        stalled=stalled if end is RunEnd.TIMED_OUT else None,
    )


def _check(runs: list[_Run], images: dict[str, tuple[bytes, str]], sandbox: Sandbox | None) -> dict:
    """Run the checker on every snapshot of every run; the facts by call id."""
    references = tuple(Reference(name, len(images[name][0]), images[name][1]) for name in images)
    checks = tuple(
        SnapshotCheck(
            call_id=call.call_id,
            reference=run.scenario.name,
            snapshot=str(run.folder / SNAPSHOTS / f"{call.call_id}.db"),
            user_id=call.user_id,
            personal_data=run.scenario.personal_data if role is Role.ERASE else (),
        )
        for run in runs
        for role, call in run.scenario.calls()
    )
    request = CheckRequest(references, checks).to_json().encode() + b"\n"
    request += b"".join(images[ref.name][0] for ref in references)
    argv = [_executable, "-I", "-X", "utf8", "-m", "course.labo.snapshot_checker"]
    if sandbox is not None:
        command = sandbox.command(argv, readable=tuple(run.folder for run in runs))
    else:
        command = argv
    checker = _Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = checker.communicate(input=request, timeout=CHECKER_TIMEOUT)
        checker.wait(timeout=10)  # bubblewrap exits once its namespace is empty
    finally:
        if checker.poll() is None:
            checker.kill()
        checker.wait()
    if checker.returncode != 0:
        raise RuntimeError(
            "le contrôle de la base a échoué\u00a0:\n" + stderr.decode(errors="replace")[-2000:]
        )
    return decode_facts(stdout.decode())


def evaluate_source(
    source: str,
    *,
    scenarios: tuple[Scenario, ...] = (VISIBLE,),
    sandboxed: bool = False,
    timeout: float | None = None,
    backend: str = "course",
) -> Evaluation:
    """Run `source` (a cell defining ``oublier``) on every scenario and judge it.

    ``backend="adk"``: the bases are written by google-adk 2.10 and ``oublier`` gets ADK's
    service (the ADK appendix); the criteria and the checker are the same.
    """
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    start = time.monotonic()
    # In memory, built by this process: a submission that rewrites files cannot change them.
    images = {s.name: fixture_bytes(s.extra_learners, backend) for s in scenarios}
    sandbox = Sandbox() if sandboxed else None
    base = Path(tempfile.mkdtemp(prefix="labo-oublier-"))
    runs: list[_Run] = []
    try:
        deadline = time.monotonic() + timeout
        for scenario in scenarios:
            folder = base / scenario.name
            _prepare(source, scenario, folder, images[scenario.name][0])
            calls = tuple(call for _role, call in scenario.calls())
            plan = RunPlan(calls, deadline, "adk" if backend == "adk" else "course")
            runs.append(_start_runner(scenario, folder, plan, sandbox))
        for run in runs:
            try:
                run.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                run.timed_out = True
            _stop(run)
        facts = _check(runs, images, sandbox)
        results = {run.scenario.name: _scenario_result(run, facts, timeout) for run in runs}
        return Evaluation(
            results=results,
            criteria=judge_all(results),
            seconds=time.monotonic() - start,
            sandboxed=sandboxed,
            names_by_hidden={s.hidden: s.name for s in scenarios},
        )
    finally:
        for run in runs:
            for fd in (run.journal, run.info):
                if fd is not None:
                    os.close(fd)
        shutil.rmtree(base, ignore_errors=True)
