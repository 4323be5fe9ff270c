"""Grades one ``oublier`` cell: one runner (a supervisor and one process per call, see
``course.labo.submission_runner``) for all scenarios, with one time limit and one set of budgets
for the whole submission, then one checker process that judges the files, then the criteria.

Nothing here runs student code in the calling process, so a notebook kernel that a submission
has tampered with can at worst fool its own copy of this module, never the grade nbgrader writes
(the grader's hooks call this from nbgrader's process). What is decided here, never by a process
that ran student code: whether the cell parses and defines ``oublier`` as an ``async def`` (its
syntax tree, read with bounded size and depth: a cell that breaks the parser is a 0 with a
reason, not an error of the grader); which records are believed (the journal's frames are
checked against the plan, ``protocol.JournalReader``: one outcome per planned call, in order;
anything else ends the run as a crash); where the snapshots are written (a private folder of
this process, out of the sandbox's reach). A checker that fails (crash, time limit, bad output)
makes every call unreadable, with a reason: a 0, never an exception that stops the class.

With ``sandboxed=True`` (grading), runner and checker run in the sandbox of
``course.labo.sandbox``; ``verifier`` runs them without it, with the student's own rights.
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
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .criteria import (
    NOT_WRITTEN,
    TESTS,
    Verdict,
    judge_all,
    load_problem,
    not_written,
    unfinished_message,
)
from .fixture import fixture_bytes
from .outcome import Outcome
from .protocol import (
    CallOutcome,
    CheckRequest,
    Crashed,
    ImageSpec,
    JournalReader,
    LimitExceeded,
    LoadFailure,
    ProtocolViolation,
    RaisedError,
    Reference,
    RunPlan,
    ScenarioPlan,
    SnapshotCheck,
    SnapshotFacts,
    Stalled,
    decode_facts,
)
from .sandbox import LIMITS, WORK_DIR, Sandbox
from .scenario import VISIBLE, CallResult, Role, RunEnd, Scenario, ScenarioResult

__all__ = [
    "ADK_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "Evaluation",
    "evaluate_source",
    "extract_source",
]

DEFAULT_TIMEOUT = 10.0  # seconds for the whole submission; the grader may set its own
# google-adk's import alone takes 3-10 s on a loaded hub: the ADK appendix's check gets more
ADK_TIMEOUT = 60.0
CHECKER_TIMEOUT = 120.0

# Captured at import: later monkeypatching of these modules does not reach the grader.
_Popen = subprocess.Popen
_killpg = getattr(os, "killpg", None)  # POSIX; elsewhere only the runner itself is killed
_executable = sys.executable

# A cell longer than this is not an answer: it is refused before it is parsed.
MAX_CELL_CHARS = 100_000
# Grace after the deadline before this process kills the runner itself (the supervisor stops at
# the deadline on its own).
GRACE = 5.0
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
        """Why the cell gave no oublier (the first scenario that says so), in French."""
        return next(filter(None, map(load_problem, self.results.values())), None)

    @property
    def timed_out(self) -> bool:
        return any(r.end is RunEnd.TIMED_OUT for r in self.results.values())

    @property
    def not_written(self) -> bool:
        """The untouched stub: the first call raised NotImplementedError."""
        return any(map(not_written, self.results.values()))

    def outcome(self) -> tuple[Outcome, str]:
        """How grading ended and, unless it ended graded, the French reason (a verdict's
        message); the grader's record says the rest (``grading.nbgrader_ext.outcome_record``)."""
        if self.not_written:
            return Outcome.NOT_WRITTEN, NOT_WRITTEN
        load_error = self.load_error
        if load_error:
            return Outcome.LOAD_ERROR, load_error
        for end, kind in ((RunEnd.TIMED_OUT, Outcome.TIMEOUT), (RunEnd.CRASHED, Outcome.CRASH)):
            for result in self.results.values():
                if result.end is end:
                    return kind, unfinished_message(result)
        return Outcome.GRADED, ""


def _plain_python(cell_source: str) -> str:
    """The cell as plain Python (IPython magics become calls, then dropped below)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is a dependency of the course
        return cell_source
    try:
        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 - a broken cell is reported below
        return cell_source


def extract_source(cell_source: str) -> str:
    """Definitions and imports of the student's cell, without its top-level actions.

    Calls such as ``await oublier(...)`` on the student's own database, or monkeypatching at top
    level, are left out: only what ``oublier`` needs to exist is kept. A cell that does not parse
    (or breaks the parser: too long, too deep) is returned unchanged; ``_analyse`` says why.
    """
    if len(cell_source) > MAX_CELL_CHARS:
        return cell_source
    source = _plain_python(cell_source)
    try:
        tree = ast.parse(source)
        kept = []
        for node in tree.body:
            if isinstance(node, _KEPT):
                kept.append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if all(isinstance(t, ast.Name) for t in targets):
                    kept.append(node)
        return ast.unparse(ast.Module(body=kept, type_ignores=[]))
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return source


def _analyse(cell_source: str) -> tuple[str, LoadFailure | None, bool]:
    """The code the runner gets, why the cell gives no ``oublier`` (or None), and whether
    ``oublier`` is an ``async def`` (its last top-level definition), from the syntax tree."""
    if len(cell_source) > MAX_CELL_CHARS:
        return "", LoadFailure("syntax", RaisedError("SyntaxError", "cellule trop longue")), False
    source = extract_source(cell_source)
    try:
        tree = ast.parse(source)
        compile(tree, "cellule_oublier", "exec")
    except SyntaxError as exc:
        message = f"{exc.msg} (ligne {exc.lineno})" if exc.lineno else str(exc.msg)
        return source, LoadFailure("syntax", RaisedError("SyntaxError", message)), False
    except (RecursionError, MemoryError, ValueError):
        error = RaisedError("SyntaxError", "expression trop imbriquée pour être lue")
        return source, LoadFailure("syntax", error), False
    bound = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "oublier":
                bound = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.asname or a.name.split(".")[0] for a in node.names]
            else:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            if "oublier" in names:
                bound = node
    if bound is None:
        return source, LoadFailure("missing"), False
    return source, None, _plainly_async(bound, tree)


# Names through which code can rebind ``oublier`` (or change the function's code) at run time,
# out of sight of the syntax tree: the module's namespace, frames, code objects, the import
# system, the interpreter's internals.
_DYNAMIC = frozenset(
    {
        "globals", "vars", "locals", "exec", "eval", "compile", "setattr", "delattr",
        "__setitem__", "__dict__", "__code__", "__globals__", "__builtins__", "builtins",
        "__import__", "importlib", "_getframe", "currentframe", "f_globals", "f_locals",
        "f_back", "gc", "get_referrers", "modules", "__class__", "__closure__", "pythonapi",
        "attrgetter", "methodcaller",
    }
)  # fmt: skip


def _dynamic(name: str) -> bool:
    """A name of `_DYNAMIC`, or of the C API (``PyEval_GetGlobals`` through ctypes)."""
    return name in _DYNAMIC or name.startswith(("Py", "_Py"))


def _plainly_async(bound: ast.stmt, tree: ast.Module) -> bool:
    """True only if the last binding of ``oublier`` is a plain ``async def`` (no decorator,
    which could return anything) and nothing in the cell can rebind it behind the syntax
    tree's back (``globals().__setitem__``, ``setattr`` on the module, a frame's
    ``f_globals``, a swapped ``__code__``…): async-ness is never read from what the student's
    code reports about itself."""
    if not isinstance(bound, ast.AsyncFunctionDef) or bound.decorator_list:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and _dynamic(node.id):
            return False
        if isinstance(node, ast.Attribute) and _dynamic(node.attr):
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _dynamic(node.value):
                return False
        if isinstance(node, ast.alias) and any(_dynamic(n) for n in node.name.split(".")):
            return False
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and (len(node.args) < 2 or not isinstance(node.args[1], ast.Constant))
        ):
            return False  # getattr(x, "glo" + "bals"): a name the tree cannot read
    return True


@dataclass
class _Run:
    """The runner process, the frames it sent, and what is needed to stop it."""

    plan: RunPlan
    proc: subprocess.Popen
    journal: int  # read end of the journal pipe
    info: int | None  # read end of bubblewrap's --info-fd pipe (the sandbox's first pid)
    stderr: Path
    reader: JournalReader
    thread: threading.Thread | None = None
    violation: str | None = None
    timed_out: bool = False


def _sandbox_pid(info_fd: int) -> int | None:
    """The host pid of the sandbox's PID 1, from bubblewrap's --info-fd output."""
    try:
        os.set_blocking(info_fd, False)
        data = os.read(info_fd, 65536)
        return int(json.loads(data.decode())["child-pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _stop(run: _Run) -> None:
    """Kill the runner and everything it started.

    With the sandbox: kill the PID namespace's first process while bubblewrap still waits for it
    (so its pid cannot have been reused); the kernel kills every other process of the namespace
    before that one is gone, and bubblewrap exits only then. Without the sandbox: SIGTERM first
    (the runner then kills its call's own session), then the runner's process group (a detached
    process can escape it: that is the student's own machine).
    """
    if run.proc.poll() is None and run.info is None:  # the runner kills its call's session
        run.proc.terminate()
        try:
            run.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
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


def _read_journal(run: _Run) -> None:
    """Feed the journal to its reader until the pipe closes or a frame breaks the protocol."""
    while True:
        try:
            chunk = os.read(run.journal, 1 << 20)
        except OSError:
            return
        if not chunk:
            return
        if run.violation is not None:
            continue  # keep draining so the writer never blocks; believe nothing more
        try:
            run.reader.feed(chunk)
        except ProtocolViolation as exc:
            run.violation = str(exc)


def _feed_stdin(proc: subprocess.Popen, chunks: list[bytes]) -> None:
    try:
        assert proc.stdin is not None
        for chunk in chunks:
            proc.stdin.write(chunk)
        proc.stdin.close()
    except (OSError, ValueError):  # it died at once: its stderr says why
        pass


def _start_runner(plan: RunPlan, stdin: list[bytes], base: Path, sandbox: Sandbox | None) -> _Run:
    journal_r, journal_w = os.pipe()
    info_r = info_w = None
    if sandbox is not None:
        work = WORK_DIR
        command = None
    else:
        work = str(base / "work")
        os.mkdir(work, 0o700)
    argv = [
        _executable,
        "-I",
        "-X",
        "utf8",
        "-m",
        "course.labo.submission_runner",
        work,
        str(journal_w),
    ]
    pass_fds = [journal_w]
    if sandbox is not None:
        info_r, info_w = os.pipe()
        pass_fds.append(info_w)
        command = sandbox.command(argv, work=True)
        command[1:1] = ["--info-fd", str(info_w)]
    else:
        command = argv
    stderr = base / "runner.stderr"
    with open(stderr, "wb") as err:
        proc = _Popen(
            command,
            cwd=base,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            pass_fds=pass_fds,
            start_new_session=True,
        )
    for fd in pass_fds:
        os.close(fd)
    run = _Run(plan, proc, journal_r, info_r, stderr, JournalReader(plan))
    run.thread = threading.Thread(target=_read_journal, args=(run,), daemon=True)
    run.thread.start()
    threading.Thread(target=_feed_stdin, args=(proc, stdin), daemon=True).start()
    return run


def _write_snapshots(run: _Run, folder: Path) -> dict[str, CallOutcome]:
    """The outcomes the journal gave, their snapshots written in `folder` (this process's)."""
    outcomes = {}
    for _name, record, payload in run.reader.records:
        if not isinstance(record, CallOutcome):
            continue
        outcomes[record.call_id] = record
        offset = 0
        for suffix, state in record.files:
            if state.state == "ok":
                path = folder / f"{record.call_id}.db{suffix}"
                path.write_bytes(payload[offset : offset + state.size])
                offset += state.size
    return outcomes


def _snapshot_problem(outcome: CallOutcome) -> SnapshotFacts | None:
    """Facts the checker need not read: the file was missing, unreadable or too big."""
    db = outcome.database
    if db.state == "missing":
        return SnapshotFacts(present=False)
    if db.state == "unreadable" or outcome.wal.state == "unreadable":
        return SnapshotFacts(
            present=True, problem="fichier illisible (droits retirés, ou pas un fichier)"
        )
    if "too_big" in (db.state, outcome.wal.state):
        size = (db.size + outcome.wal.size) >> 20
        return SnapshotFacts(
            present=True, problem=f"elle pèse {size}\u00a0Mio, bien plus que la base d'exemple"
        )
    return None


def _scenario_results(
    run: _Run,
    scenarios: tuple[Scenario, ...],
    outcomes: dict[str, CallOutcome],
    facts: dict,
    timeout: float,
) -> dict[str, ScenarioResult]:
    """Each scenario's result from the journal's records (believed up to a violation), with
    the call outcomes as this process settled them (`outcomes`)."""
    by_scenario: dict[str, list] = {s.name: [] for s in scenarios}
    stop = None  # Stalled or LimitExceeded: every scenario not finished ends that way
    started = False
    for name, record, _payload in run.reader.records:
        if name is None:
            started = True
            continue
        by_scenario[name].append(record)
        if isinstance(record, Stalled | LimitExceeded):
            stop = record
    if not started and run.violation is None:
        tail = run.stderr.read_text(errors="replace")[-2000:]
        raise RuntimeError(
            f"Le processus qui exécute oublier n'a pas démarré (code {run.proc.returncode})"
            f"\u00a0:\n{tail}"
        )
    results = {}
    for scenario in scenarios:
        records = by_scenario[scenario.name]
        load = next((r for r in records if isinstance(r, LoadFailure)), None)
        calls = scenario.calls()
        stalled, limit = None, None
        if load is not None:
            end = RunEnd.LOAD_FAILED
        elif all(call.call_id in outcomes for _role, call in calls):
            end = RunEnd.FINISHED
        elif isinstance(stop, Stalled) or (stop is None and run.timed_out):
            end = RunEnd.TIMED_OUT
            stalled = stop if isinstance(stop, Stalled) and stop in records else None
        else:
            end = RunEnd.CRASHED
            if isinstance(stop, LimitExceeded):
                limit = stop.kind
            elif run.violation is not None:
                limit = "protocol"
            elif any(isinstance(r, Crashed) and r.reason == "bad_report" for r in records):
                limit = "bad_report"
        results[scenario.name] = ScenarioResult(
            scenario=scenario,
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
            stalled=stalled,
            limit=limit,
        )
    return results


def _checker_failed(checks: tuple[SnapshotCheck, ...], why: str) -> dict[str, SnapshotFacts]:
    problem = f"le contrôle de la base n'a pas pu la lire ({why})"
    return {c.call_id: SnapshotFacts(present=True, problem=problem) for c in checks}


def _check(
    checks: tuple[SnapshotCheck, ...],
    folder: Path,
    images: dict[str, tuple[bytes, str]],
    sandbox: Sandbox | None,
) -> dict[str, SnapshotFacts]:
    """Run the checker on the snapshots in `folder`; the facts by call id. Any failure of the
    checker makes each of its snapshots unreadable, with the reason: never an exception."""
    if not checks:
        return {}
    references = tuple(Reference(name, len(images[name][0]), images[name][1]) for name in images)
    request = CheckRequest(references, checks).to_json().encode() + b"\n"
    request += b"".join(images[ref.name][0] for ref in references)
    argv = [_executable, "-I", "-X", "utf8", "-m", "course.labo.snapshot_checker"]
    if sandbox is not None:
        sandbox.hand_over(folder)
        command = sandbox.command(argv, readable=(folder,))
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
        stdout, _stderr = checker.communicate(input=request, timeout=CHECKER_TIMEOUT)
        checker.wait(timeout=10)  # bubblewrap exits once its namespace is empty
    except subprocess.TimeoutExpired:
        return _checker_failed(checks, "temps dépassé")
    finally:
        if checker.poll() is None:
            try:
                _killpg(checker.pid, signal.SIGKILL) if _killpg else checker.kill()
            except (ProcessLookupError, PermissionError):
                pass
        checker.wait()
    if checker.returncode != 0:
        return _checker_failed(checks, f"arrêt du contrôle, code {checker.returncode}")
    try:
        facts = decode_facts(stdout.decode())
    except (ValueError, TypeError, AttributeError):
        return _checker_failed(checks, "réponse du contrôle illisible")
    missing = [c for c in checks if c.call_id not in facts]
    return {**facts, **_checker_failed(tuple(missing), "réponse du contrôle incomplète")}


def _judge(
    results: dict[str, ScenarioResult], start: float, sandboxed: bool, scenarios
) -> Evaluation:
    return Evaluation(
        results=results,
        criteria=judge_all(results),
        seconds=time.monotonic() - start,
        sandboxed=sandboxed,
        names_by_hidden={s.hidden: s.name for s in scenarios},
    )


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
    if timeout is None:
        timeout = ADK_TIMEOUT if backend == "adk" else DEFAULT_TIMEOUT
    start = time.monotonic()
    code, load_failure, is_async = _analyse(source)
    if load_failure is not None:  # nothing to run: the same reason for every scenario
        results = {
            s.name: ScenarioResult(s, RunEnd.LOAD_FAILED, timeout, (), load_failure=load_failure)
            for s in scenarios
        }
        return _judge(results, start, sandboxed, scenarios)
    # In memory, built by this process: a submission that rewrites files cannot change them.
    images = {s.name: fixture_bytes(s.extra_learners, backend) for s in scenarios}
    sandbox = Sandbox() if sandboxed else None
    base = Path(tempfile.mkdtemp(prefix="labo-oublier-"))
    run = None
    try:
        plans = tuple(
            ScenarioPlan(
                s.name,
                tuple(call for _role, call in s.calls()),
                tuple(ImageSpec(db, len(images[s.name][0])) for db in s.databases()),
            )
            for s in scenarios
        )
        encoded = code.encode("utf-8")
        deadline = time.monotonic() + timeout
        plan = RunPlan(
            plans,
            len(encoded),
            deadline,
            memory_bytes=LIMITS.total_memory_bytes,
            cpu_seconds=LIMITS.total_cpu_seconds,
            sandboxed=sandboxed,
            service="adk" if backend == "adk" else "course",
        )
        stdin = [plan.to_json().encode() + b"\n", encoded]
        stdin += [images[s.name][0] for s in scenarios for _db in s.databases()]
        run = _start_runner(plan, stdin, base, sandbox)
        try:
            run.proc.wait(timeout=max(0.0, deadline + GRACE - time.monotonic()))
        except subprocess.TimeoutExpired:
            run.timed_out = True
        except BaseException:  # the learner's Stop button: their function stops with the check
            _stop(run)
            raise
        _stop(run)
        assert run.thread is not None
        run.thread.join(timeout=10)
        if run.reader.incomplete and run.violation is None:
            run.violation = "frame cut short"
        snapshots = base / "snapshots"
        snapshots.mkdir()
        outcomes = _write_snapshots(run, snapshots)
        for_checker, facts = [], {}
        for scenario in scenarios:
            for role, call in scenario.calls():
                outcome = outcomes.get(call.call_id)
                if outcome is None:
                    continue
                if not is_async and not outcome.not_async:
                    outcomes[call.call_id] = outcome = _replace_async(outcome)
                known = _snapshot_problem(outcome)
                if known is not None:
                    facts[call.call_id] = known
                    continue
                for_checker.append(
                    SnapshotCheck(
                        call_id=call.call_id,
                        reference=scenario.name,
                        snapshot=str(snapshots / f"{call.call_id}.db"),
                        user_id=call.user_id,
                        personal_data=scenario.personal_data if role is Role.ERASE else (),
                    )
                )
        facts.update(_check(tuple(for_checker), snapshots, images, sandbox))
        results = _scenario_results(run, scenarios, outcomes, facts, timeout)
        return _judge(results, start, sandboxed, scenarios)
    finally:
        if run is not None:
            for fd in (run.journal, run.info):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
        shutil.rmtree(base, ignore_errors=True)


def _replace_async(outcome: CallOutcome) -> CallOutcome:
    """The syntax tree says ``oublier`` is not plainly an ``async def``: so is the outcome (the
    runner never says: the call's process could say anything)."""
    return replace(outcome, not_async=True)
