//! Bad input to mcp-chaos itself: a server that prints garbage, exits at once, or never
//! answers `initialize` gives a clear error and exit code 2 within the deadline, and leaves no
//! process behind.

use std::time::{Duration, Instant};

use mcp_chaos_tests::{process_running, run_chaos};

fn assert_start_failure(command: &str, marker: &str, expect_in_error: &str) {
    let started = Instant::now();
    let run = run_chaos(&["run", "--stdio", command, "--timeout-ms", "1500"]);
    let elapsed = started.elapsed();
    assert_eq!(
        run.code, 2,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains(expect_in_error),
        "stderr should mention {expect_in_error:?}: {}",
        run.stderr
    );
    // Within the deadline plus the shutdown sequence (close stdin, SIGTERM, SIGKILL).
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    // Nothing is left behind: the whole process group was killed.
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_running(marker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !process_running(marker),
        "a process matching {marker:?} outlived the run"
    );
}

/// A server that prints garbage and never answers.
#[test]
fn garbage_server_exits_2() {
    assert_start_failure(
        "sh -c 'echo hello world; echo not json either; exec sleep 31.4101'",
        "sleep 31.4101",
        "did not answer initialize within 1500 ms",
    );
}

/// A server that exits at once.
#[test]
fn server_that_exits_at_once_exits_2() {
    assert_start_failure(
        "sh -c 'echo fatal: missing config >&2; exit 7'",
        "missing config",
        "exited before answering initialize (exit code 7)",
    );
}

/// A server that never answers `initialize`, with a grandchild that ignores SIGTERM: the
/// whole tree must still be gone.
#[test]
fn silent_server_with_stubborn_grandchild_exits_2() {
    assert_start_failure(
        "sh -c 'trap \"\" TERM; sleep 31.4102 & cat > /dev/null'",
        "sleep 31.4102",
        "did not answer initialize",
    );
}

/// A program that does not exist.
#[test]
fn missing_program_exits_2() {
    let run = run_chaos(&["run", "--stdio", "/no/such/mcp-server --flag"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("could not start \"/no/such/mcp-server\""),
        "{}",
        run.stderr
    );
}
