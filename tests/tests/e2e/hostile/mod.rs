//! Issue 12's zoo of hostile servers (`hostile/` of the tests crate, one small Python script
//! each; its README lists them), each run against the real `mcp-chaos` binary with defaults
//! (only the flags that point it at the server, plus `--report-json`), checking the issue's
//! acceptance: an exit code 0, 1 or 2 (never a signal); mcp-chaos's peak RSS under 256 MiB;
//! the row's wall bound (generous: only a runaway breaks it); the JSON report written and
//! parseable; the owed finding; no process left and no port left listening.
//!
//! Each row is one line of the table below. A row that fails today carries
//! `#[ignore = "issue 12: <what fails today>"]`; the fixer who makes it pass removes that line
//! (and, where the row owes `Pending(..)`, replaces it with the finding's invariant name or a
//! check). `cargo test -p mcp-chaos-tests --test e2e -- --ignored hostile --nocapture` runs
//! the rows that fail today, each printing its measurements.

mod runner;

use runner::{Outcome, Owed, Row, Server, Sigterm};

use Owed::{Check, Exit, Finding, NoFinding, NoFindings, Pending};
use Server::{Fixture, Http, HttpNetns, Stdio};

/// `Some(x)` for one argument, `None` for none.
macro_rules! optional {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

/// The table: one line per row, `name: server, wall bound in seconds, [owed]`, optionally
/// `, sigterm after "text" [+ N s]` (SIGTERM N seconds after mcp-chaos's stderr, its progress,
/// shows the text).
macro_rules! rows {
    ($(
        $(#[doc = $doc:literal])*
        $(#[ignore = $why:literal])?
        $name:ident: $server:expr, $wall:literal s, [$($owed:expr),* $(,)?]
            $(, sigterm after $text:literal $(+ $delay:literal s)?)?;
    )*) => {
        /// Every row of the table.
        pub const ROWS: &[Row] = &[$(Row {
            name: stringify!($name),
            server: $server,
            wall_s: $wall,
            owed: &[$($owed),*],
            sigterm: optional!($(Sigterm { after: $text, delay_s: 0 $(+ $delay)? })?),
        }),*];

        $(
            $(#[doc = $doc])*
            #[test]
            $(#[ignore = $why])?
            fn $name() {
                run(stringify!($name));
            }
        )*
    };
}

fn run(name: &str) {
    let row = ROWS
        .iter()
        .find(|r| r.name == name)
        .expect("the row is in the table");
    runner::check(row);
}

rows! {
    // Controls: the zoo's own correct servers, so that a finding elsewhere is the hostility's.
    /// A correct stdio server: no finding.
    control_stdio: Stdio("correct.py"), 120 s, [Exit(0), NoFindings];
    /// A correct Streamable HTTP server: no finding.
    control_http: Http("http_correct.py"), 120 s, [Exit(0), NoFindings];

    // The rows of issue 12's table. The ignore reasons give today's numbers (debug build).
    // notification_flood.py exits (0) only on EPIPE, i.e. after mcp-chaos closed its end of the
    // pipe: today's server-died finding against it is mcp-chaos's own doing.
    notification_flood: Stdio("notification_flood.py"), 120 s,
        [Finding("notification-flood"),
         NoFinding("server-died")];
    notification_flood_threaded: Stdio("notification_flood.py --threaded"), 120 s,
        [Finding("notification-flood"), NoFinding("server-died")];
    #[ignore = "issue 12: exit 2 without a report; peak RSS 285-529 MiB"]
    random_bytes: Stdio("random_bytes.py"), 120 s, [Exit(2)];
    #[ignore = "issue 12: peak RSS 1.2-1.9 GiB, 465 s"]
    random_bytes_after_init: Stdio("random_bytes.py --after-init"), 120 s,
        [Finding("stdout-not-protocol")];
    server_request_loop: Stdio("server_request_loop.py"), 120 s,
        [Finding("server-request-flood"), NoFinding("server-died")];
    #[ignore = "issue 12: peak RSS 1.5 GiB; the oversize-frame finding only sometimes (else 0 tools, exit 0)"]
    sse_500mb_event: Http("http_sse_500mb.py"), 120 s, [Finding("oversize-frame")];
    #[ignore = "issue 12: peak RSS 1.4 GiB, 320 s, a no-response finding"]
    sse_500mb_stream: Http("http_sse_500mb.py --shape many-events"), 120 s,
        [Pending("SSE stream size bound (500 events of 1 MiB)")];
    #[ignore = "issue 12: still generating after 600 s (killed), peak RSS 327 MiB, no report"]
    schema_bomb: Stdio("schema_bomb.py"), 180 s,
        [Pending("schema budgets: each pathological schema a finding or a skip")];
    schema_recursive_ref: Stdio("schema_bomb.py --only recursive-ref"), 120 s, [];
    schema_enum_100k: Stdio("schema_bomb.py --only enum"), 120 s, [];
    schema_redos: Stdio("schema_bomb.py --only redos"), 120 s, [];
    #[ignore = "issue 12: still generating after 600 s (killed), peak RSS 380 MiB, no report"]
    schema_required_1000: Stdio("schema_bomb.py --only required"), 120 s,
        [Pending("a budget on generating for 1 000 required properties: a finding or a skip")];
    #[ignore = "issue 12: 574 s"]
    schema_5000_tools: Stdio("schema_bomb.py --only many-tools"), 180 s,
        [Pending("a budget on the number of tools generated for")];
    #[ignore = "issue 12: false stdout-not-protocol and no-response, no tool tested"]
    deep_nesting: Stdio("deep_nesting.py"), 120 s,
        [NoFinding("stdout-not-protocol"), NoFinding("no-response"),
         Check("the plain tools are tested", plain_tools_tested)];
    #[ignore = "issue 12: no oversize-frame (no-response and not-alive instead)"]
    unterminated_line: Stdio("unterminated_line.py"), 120 s, [Finding("oversize-frame")];
    #[ignore = "issue 12: dropped with no finding: 0 tools, exit 0"]
    http_body_500mb: Http("http_body_500mb.py"), 120 s,
        [Finding("oversize-frame"), NoFinding("not-alive")];
    #[ignore = "issue 12: dropped with no finding: 0 tools, exit 0"]
    http_body_500mb_chunked: Http("http_body_500mb.py --chunked"), 120 s,
        [Finding("oversize-frame"), NoFinding("not-alive")];
    #[ignore = "issue 12: server-died blames the liveness ping; no tool tested after the restart"]
    exit_on_tools_list: Stdio("exit_on_tools_list.py"), 120 s,
        [Check("server-died blames tools/list", server_died_on_tools_list),
         Check("the tools are listed again after the restart, and tested", tools_tested)];
    #[ignore = "issue 12: server-died blames the liveness ping"]
    exit_on_every_tools_list: Stdio("exit_on_tools_list.py --always"), 120 s,
        [Check("server-died blames tools/list", server_died_on_tools_list)];
    #[ignore = "issue 12: 350 s (every restart, a deadline per probe)"]
    wedge_silent: Stdio("wedge.py --mode silent"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: 353 s"]
    wedge_wrong_ids: Stdio("wedge.py --mode wrong-ids"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: 353 s"]
    wedge_invalid_utf8: Stdio("wedge.py --mode invalid-utf8"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: 287 s"]
    wedge_closed_stdout: Stdio("wedge.py --mode closed-stdout"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: 205 s"]
    wedge_http_silent: Http("http_wedge.py --mode silent"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: 217 s"]
    wedge_http_endless_sse: Http("http_wedge.py --mode endless-sse"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: 206 s"]
    wedge_http_slowloris: Http("http_wedge.py --mode slowloris"), 120 s, [Pending(WEDGE)];
    #[ignore = "issue 12: follows the redirect off loopback (the canary sees the POST), exit 2 without a report"]
    redirect_307: HttpNetns("http_redirect.py"), 120 s,
        [Check("the redirect off loopback is not followed", redirect_not_followed),
         Pending("a redirect finding")];
    #[ignore = "issue 12: exit 2 without a report"]
    never_initialize: Stdio("never_initialize.py"), 120 s, [Exit(2)];
    #[ignore = "issue 12: exit 2 without a report"]
    slowloris_before_initialize: Http("http_wedge.py --mode slowloris --before-init"), 120 s,
        [Exit(2)];
    #[ignore = "issue 12: exit 2 without a report"]
    bad_session_id: Http("http_bad_session.py --id control"), 120 s, [Exit(2)];
    #[ignore = "issue 12: exit 130 without a report"]
    sigterm_mid_campaign: Fixture("--flaw=wrong-error-codes"), 120 s,
        [Finding("wrong-error-code"), Pending("the report is marked interrupted")],
        sigterm after "add: ";
    #[ignore = "issue 12: SIGTERM not acted on (killed 593 s after it), no report"]
    sigterm_during_generation: Stdio("schema_bomb.py --only required"), 120 s,
        [Check("exits within 5 s of SIGTERM", quick_after_sigterm)],
        sigterm after "probes planned" + 5 s;

    // Regression rows: handled well when issue 12 was filed.
    grandchildren: Stdio("grandchildren.py"), 120 s, [Exit(0)];
    ignores_sigterm: Stdio("ignores_sigterm.py"), 120 s, [Exit(0)];
    stderr_flood: Stdio("stderr_flood.py"), 120 s, [Exit(0)];
    #[ignore = "issue 12: exit 2 without a report"]
    closes_stdout: Stdio("closes_stdout.py"), 120 s, [Exit(2)];
    giant_line: Stdio("giant_line.py"), 120 s, [Finding("oversize-frame")];
    endless_pagination: Stdio("endless_pagination.py"), 180 s, [];
}

/// What a wedged server is owed (issue 12, "a wedged server ends the run early").
const WEDGE: &str = "wedge: one clear finding, the remaining probes skipped, the run ended \
                     within a few deadlines";

/// The generated phase ran for at least one listed tool (the unknown-tool probe alone, which
/// `summary.tool_calls` also counts, does not do).
fn tools_tested(o: &Outcome) -> Result<(), String> {
    let report = o.report.as_ref().map_err(Clone::clone)?;
    match report["summary"]["generated"].as_array() {
        Some(tools) if !tools.is_empty() => Ok(()),
        _ => Err(format!(
            "no tool had a generated phase (summary: {})",
            report["summary"]
        )),
    }
}

/// The generated phase ran for the plain tools of `deep_nesting.py`.
fn plain_tools_tested(o: &Outcome) -> Result<(), String> {
    let report = o.report.as_ref().map_err(Clone::clone)?;
    let tested: Vec<&str> = report["summary"]["generated"]
        .as_array()
        .map(|g| g.iter().filter_map(|t| t["tool"].as_str()).collect())
        .unwrap_or_default();
    if tested.iter().any(|t| t.starts_with("plain_")) {
        Ok(())
    } else {
        Err(format!("tools with a generated phase: {tested:?}"))
    }
}

/// A `server-died` finding names `tools/list` as what killed the server.
fn server_died_on_tools_list(o: &Outcome) -> Result<(), String> {
    let died: Vec<serde_json::Value> = o
        .findings()
        .into_iter()
        .filter(|f| f["invariant"] == "server-died")
        .collect();
    let on_list = died.iter().any(|f| {
        f["probe"]
            .as_str()
            .is_some_and(|p| p.contains("tools/list"))
            || f["request"]
                .as_str()
                .is_some_and(|r| r.contains(r#""method":"tools/list""#))
    });
    if on_list {
        Ok(())
    } else {
        let probes: Vec<&str> = died.iter().filter_map(|f| f["probe"].as_str()).collect();
        Err(format!("server-died findings blame {probes:?}"))
    }
}

/// Nothing connected to the canary on 198.51.100.1:80 inside the network namespace.
fn redirect_not_followed(o: &Outcome) -> Result<(), String> {
    match std::fs::read(o.state_dir().join("redirect-followed")) {
        Err(_) => Ok(()),
        Ok(bytes) => Err(format!(
            "mcp-chaos connected to 198.51.100.1:80 and sent: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        )),
    }
}

/// mcp-chaos exited within 5 s of the SIGTERM the harness sent.
fn quick_after_sigterm(o: &Outcome) -> Result<(), String> {
    match o.after_sigterm {
        None => Err("the harness never sent SIGTERM (the progress text never appeared)".into()),
        Some(d) if d > std::time::Duration::from_secs(5) => {
            Err(format!("exited {:.1} s after SIGTERM", d.as_secs_f64()))
        }
        Some(_) => Ok(()),
    }
}

/// Every script in `hostile/` has a row, and the README there names every row.
#[test]
fn every_hostile_script_has_a_row_and_a_readme_line() {
    let dir = runner::hostile_dir();
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("hostile/README.md");
    let used: Vec<&str> = ROWS.iter().filter_map(|r| r.server.script()).collect();
    for entry in std::fs::read_dir(&dir).expect("hostile/") {
        let name = entry.expect("an entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".py") && name != "mcpbase.py" {
            assert!(used.contains(&&*name), "{name} has no row");
        }
    }
    for row in ROWS {
        assert!(
            readme.contains(&format!("`{}`", row.name)),
            "hostile/README.md does not list the row `{}`",
            row.name
        );
    }
}
