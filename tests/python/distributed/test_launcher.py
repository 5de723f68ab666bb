"""``python -m ember.distributed.run``, the torchrun-style launcher: the environment its workers
get, how the worker is run (script, -m, --no-python, --run-path), what happens when a worker
fails or the launcher is signalled, and the command lines it refuses.

The launcher runs as a subprocess, as users run it; the workers are small scripts that write
what they saw to files under tmp_path. Every subprocess call is bounded by a timeout.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ember
from ember.distributed import run

LAUNCHER_TIMEOUT_S = 30
# The directory holding the ember package the tests import (the dev build), so the launcher and
# its workers import the same one.
EMBER_PATH = str(Path(ember.__file__).parent.parent)

ENV_KEYS = [
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
    "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
    "OMP_NUM_THREADS",
]

# Writes the launcher's variables and the worker's argv to <dir>/rank<RANK>.json, where <dir>
# is the worker's first argument.
DUMP_ENV_SCRIPT = f"""
import json, os, sys
seen = {{key: os.environ.get(key) for key in {ENV_KEYS!r}}}
seen["argv"] = sys.argv
with open(os.path.join(sys.argv[1], "rank" + os.environ["RANK"] + ".json"), "w") as f:
    json.dump(seen, f)
"""


def launcher_env(**overrides):
    """os.environ without what would change the launch (OMP_NUM_THREADS, torchrun's PET_*)."""
    env = {key: value for key, value in os.environ.items()
           if key != "OMP_NUM_THREADS" and not key.startswith(("PET_", "TORCHELASTIC_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [EMBER_PATH, env.get("PYTHONPATH")]))
    env.update(overrides)
    return env


def launch(tmp_path, *args, env=None, timeout=LAUNCHER_TIMEOUT_S):
    return subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", *map(str, args)],
        cwd=tmp_path, env=env or launcher_env(), capture_output=True, text=True, timeout=timeout)


def write_script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def seen_by_ranks(directory):
    """{RANK: what that worker saw}, from the files DUMP_ENV_SCRIPT wrote."""
    return {int(path.stem[len("rank"):]): json.loads(path.read_text())
            for path in Path(directory).glob("rank*.json")}


def assert_succeeded(result):
    assert result.returncode == 0, result.stderr


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for_files(paths, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not all(path.exists() and path.read_text() for path in paths):
        assert time.monotonic() < deadline, f"workers did not write {paths}"
        time.sleep(0.05)


def test_workers_get_torchrun_environment(tmp_path):
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--nproc-per-node", 3, script, tmp_path)
    assert_succeeded(result)
    seen = seen_by_ranks(tmp_path)
    assert sorted(seen) == [0, 1, 2]
    for rank, env in seen.items():
        assert env["LOCAL_RANK"] == env["ROLE_RANK"] == str(rank)
        assert env["WORLD_SIZE"] == env["LOCAL_WORLD_SIZE"] == env["ROLE_WORLD_SIZE"] == "3"
        assert (env["GROUP_RANK"], env["GROUP_WORLD_SIZE"]) == ("0", "1")
        assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "29500")
        assert env["ROLE_NAME"] == "default"
        assert env["TORCHELASTIC_RUN_ID"] == "none"
        assert env["TORCHELASTIC_RESTART_COUNT"] == env["TORCHELASTIC_MAX_RESTARTS"] == "0"
        # Several workers on one node: one OpenMP thread each unless the user says otherwise.
        assert env["OMP_NUM_THREADS"] == "1"
        assert env["argv"] == [str(script), str(tmp_path)]
    assert result.stderr.count("Setting OMP_NUM_THREADS") == 1


def test_user_thread_count_is_kept_without_warning(tmp_path):
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--nproc_per_node=2", script, tmp_path,
                    env=launcher_env(OMP_NUM_THREADS="3"))
    assert_succeeded(result)
    assert {env["OMP_NUM_THREADS"] for env in seen_by_ranks(tmp_path).values()} == {"3"}
    assert "Setting OMP_NUM_THREADS" not in result.stderr


def test_second_node_has_the_ranks_after_the_first(tmp_path):
    # The launcher of node 1 of 2 runs alone here: nobody needs to connect for the ranks.
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--nnodes", 2, "--node_rank", 1, "--nproc_per_node", 2,
                    "--master_addr", "10.1.2.3", "--master_port", 1234, script, tmp_path)
    assert_succeeded(result)
    seen = seen_by_ranks(tmp_path)
    assert sorted(seen) == [2, 3]
    assert [seen[rank]["LOCAL_RANK"] for rank in (2, 3)] == ["0", "1"]
    for env in seen.values():
        assert (env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"]) == ("4", "2")
        assert (env["GROUP_RANK"], env["GROUP_WORLD_SIZE"]) == ("1", "2")
        assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("10.1.2.3", "1234")


def test_rdzv_endpoint_is_the_master_address(tmp_path):
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--rdzv-backend", "static", "--rdzv-endpoint", "10.9.8.7:4321",
                    "--rdzv-id", "job42", script, tmp_path)
    assert_succeeded(result)
    env = seen_by_ranks(tmp_path)[0]
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("10.9.8.7", "4321")
    assert env["TORCHELASTIC_RUN_ID"] == "job42"
    # One worker: OMP_NUM_THREADS is left alone.
    assert env["OMP_NUM_THREADS"] is None


def test_standalone_picks_a_free_port(tmp_path):
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--standalone", "--nproc-per-node", 2, script, tmp_path)
    assert_succeeded(result)
    seen = seen_by_ranks(tmp_path)
    ports = {env["MASTER_PORT"] for env in seen.values()}
    run_ids = {env["TORCHELASTIC_RUN_ID"] for env in seen.values()}
    assert len(ports) == 1 and len(run_ids) == 1
    assert 0 < int(ports.pop()) < 65536
    assert {env["MASTER_ADDR"] for env in seen.values()} == {"localhost"}
    assert run_ids.pop() != "none"


def test_module_and_script_arguments(tmp_path):
    write_script(tmp_path, "dump_env_module.py", DUMP_ENV_SCRIPT)
    # Options after the module name belong to it, even the launcher's own.
    result = launch(tmp_path, "--nproc-per-node", 2, "-m", "dump_env_module", tmp_path,
                    "--lr", "0.1", "--nproc-per-node", "7")
    assert_succeeded(result)
    seen = seen_by_ranks(tmp_path)
    assert sorted(seen) == [0, 1]
    for env in seen.values():
        assert env["argv"][0].endswith("dump_env_module.py")
        assert env["argv"][1:] == [str(tmp_path), "--lr", "0.1", "--nproc-per-node", "7"]


def test_no_python_runs_the_command_as_is(tmp_path):
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--no-python", sys.executable, script, tmp_path, "extra")
    assert_succeeded(result)
    assert seen_by_ranks(tmp_path)[0]["argv"] == [str(script), str(tmp_path), "extra"]


def test_run_path_runs_the_script_file(tmp_path):
    script = write_script(tmp_path, "dump_env.py", DUMP_ENV_SCRIPT)
    result = launch(tmp_path, "--run-path", script, tmp_path, "extra")
    assert_succeeded(result)
    assert seen_by_ranks(tmp_path)[0]["argv"] == [str(script), str(tmp_path), "extra"]


def test_workers_see_a_torchelastic_launch(tmp_path):
    script = write_script(tmp_path, "check.py", (
        "import ember.distributed as dist\n"
        "open('launched.txt', 'w').write(str(dist.is_torchelastic_launched()))\n"))
    assert_succeeded(launch(tmp_path, script))
    assert (tmp_path / "launched.txt").read_text() == "True"


def test_failed_worker_stops_the_others_and_is_reported(tmp_path):
    # Rank 1 fails once rank 0 has written its pid; rank 0 would sleep forever.
    script = write_script(tmp_path, "fail.py", """
import os, sys, time
rank = os.environ["LOCAL_RANK"]
if rank == "0":
    with open("pid0.tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace("pid0.tmp", "pid0")
    time.sleep(3600)
deadline = time.monotonic() + 10
while not os.path.exists("pid0") and time.monotonic() < deadline:
    time.sleep(0.02)
print("about to fail", file=sys.stderr)
raise ValueError("bad batch on rank " + rank)
""")
    started = time.monotonic()
    result = launch(tmp_path, "--nproc-per-node", 2, script)
    assert time.monotonic() - started < 10
    assert result.returncode == 1
    report = result.stderr[result.stderr.index("Root Cause"):]
    assert "rank      : 1 (local_rank: 1)" in report
    assert "exitcode  : 1" in report
    assert "ValueError: bad batch on rank 1" in report
    assert "Traceback (most recent call last):" in report
    # The worker's stderr also reached the console as it was written.
    assert "about to fail" in result.stderr[:result.stderr.index("ChildFailedError")]
    assert not pid_alive(int((tmp_path / "pid0").read_text()))


def test_worker_killed_by_a_signal_is_reported(tmp_path):
    script = write_script(tmp_path, "die.py", """
import os, signal, time
if os.environ["RANK"] == "1":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(3600)
""")
    result = launch(tmp_path, "--nproc-per-node", 2, script)
    assert result.returncode == 1
    assert "exitcode  : -9" in result.stderr
    assert "Signal 9 (SIGKILL) received by PID" in result.stderr
    assert "rank      : 1 (local_rank: 1)" in result.stderr


def test_sigterm_to_the_launcher_reaches_the_workers(tmp_path):
    script = write_script(tmp_path, "wait.py", """
import os, time
with open("pid%s.tmp" % os.environ["RANK"], "w") as f:
    f.write(str(os.getpid()))
os.replace("pid%s.tmp" % os.environ["RANK"], "pid" + os.environ["RANK"])
time.sleep(3600)
""")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", str(script)],
        cwd=tmp_path, env=launcher_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        pid_files = [tmp_path / "pid0", tmp_path / "pid1"]
        wait_for_files(pid_files)
        launcher.send_signal(signal.SIGTERM)
        _, stderr = launcher.communicate(timeout=LAUNCHER_TIMEOUT_S)
    finally:
        launcher.kill()
    assert launcher.returncode == 1
    assert "received SIGTERM" in stderr
    assert not any(pid_alive(int(path.read_text())) for path in pid_files)


def test_tee_prefixes_lines_and_writes_log_files(tmp_path):
    script = write_script(tmp_path, "hello.py", (
        "import os, sys\n"
        "print('hello from', os.environ['RANK'])\n"
        "print('note from', os.environ['RANK'], file=sys.stderr)\n"))
    logs = tmp_path / "logs"
    result = launch(tmp_path, "--nproc-per-node", 2, "--tee", 3, "--log-dir", logs, script)
    assert_succeeded(result)
    assert "[default0]:hello from 0" in result.stdout
    assert "[default1]:hello from 1" in result.stdout
    assert "[default1]:note from 1" in result.stderr
    (attempt_dir,) = logs.glob("none_*/attempt_0")
    assert (attempt_dir / "1" / "stdout.log").read_text() == "hello from 1\n"
    assert (attempt_dir / "0" / "stderr.log").read_text() == "note from 0\n"


def test_redirects_keep_output_off_the_console(tmp_path):
    script = write_script(tmp_path, "hello.py", "print('hello')\n")
    logs = tmp_path / "logs"
    result = launch(tmp_path, "--redirects", 1, "--log_dir", logs, script)
    assert_succeeded(result)
    assert "hello" not in result.stdout
    (log_file,) = logs.glob("none_*/attempt_0/0/stdout.log")
    assert log_file.read_text() == "hello\n"


@pytest.mark.parametrize("arguments, message", [
    (["--nnodes", "1:4"], "elastic training (a range of node counts) is not supported"),
    (["--max-restarts", "3"], "elastic restarts are not supported"),
    (["--max_restarts=1"], "elastic restarts are not supported"),
    (["--rdzv-backend", "c10d", "--nnodes", "2"], "dynamic (elastic) rendezvous"),
    (["--rdzv_backend", "etcd"], "--rdzv-backend=etcd is not supported"),
    (["--nproc-per-node", "gpu"], "no GPUs"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank must be in [0, 2)"),
    (["--standalone", "--nnodes", "2"], "--standalone runs a single node"),
    (["--no-python", "-m"], "don't use both"),
])
def test_unsupported_command_lines_are_refused(arguments, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.main([*arguments, "train.py"])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_nnodes_range_of_one_count_and_cpu_workers_are_accepted():
    args = run.build_parser().parse_args(["--nnodes", "2:2", "--nproc-per-node", "auto",
                                          "train.py"])
    config = run.build_config(args)
    assert config.nnodes == 2 and config.nproc_per_node == (os.cpu_count() or 1)


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--nproc-per-node", "--nnodes", "--node-rank", "--master-addr",
                   "--master-port", "--standalone", "--max-restarts", "--no-python",
                   "--run-path", "--redirects", "--tee", "--rdzv-endpoint"):
        assert option in out


@pytest.mark.parametrize("endpoint, expected", [
    ("node7:1234", ("node7", 1234)),
    ("node7", ("node7", 99)),
    ("[::1]:1234", ("::1", 1234)),
    ("::1", ("::1", 99)),
])
def test_parse_endpoint(endpoint, expected):
    assert run.parse_endpoint(endpoint, 99) == expected


def test_last_traceback_keeps_the_chained_exceptions():
    stderr = [
        "loading data",
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in <module>',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in <module>',
        "ValueError: bad",
    ]
    assert run.last_traceback(stderr) == stderr[1:]
    assert run.last_traceback(["no traceback here"]) == []


def test_command_that_cannot_start_is_reported(tmp_path):
    result = launch(tmp_path, "--no-python", tmp_path / "no-such-command")
    assert result.returncode == 1
    assert "failed to start local rank 0" in result.stderr
