//! `mcp-chaos run` and `mcp-chaos demo`: a campaign against a server (or the bundled fixture
//! with flaws planted), its reports, and the report written on SIGINT/SIGTERM.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use mcp_chaos::report;
use mcp_chaos::run::{self, RunConfig, ServerSpec};
use mcp_chaos::transport::StdioConfig;
use mcp_chaos_fixture::Flaw;
use mcp_chaos_model::exit;

use crate::args::*;

/// The numeric knobs read from the environment: (argument id, flag).
pub(crate) const ENV_KNOBS: &[(&str, &str)] = &[
    ("cases", "--cases"),
    ("wire_cases", "--wire-cases"),
    ("timeout_ms", "--timeout-ms"),
    ("tool_budget_ms", "--tool-budget-ms"),
    ("max_restarts", "--max-restarts"),
    ("max_frame_bytes", "--max-frame-bytes"),
];

/// The command line that reruns this `run` exactly: the arguments as given, without any
/// `--seed`, plus the `knobs` (argument id, flag; ids of `matches`' command) that came from
/// the environment as flags, plus `--seed SEED`;
/// quoted for a POSIX shell, with every string of `secrets` redacted.
pub(crate) fn rerun_command(
    matches: &clap::ArgMatches,
    knobs: &[(&str, &str)],
    seed: u64,
    secrets: &[String],
) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut args = std::env::args();
    words.extend(args.next());
    let mut skip_next = false;
    for arg in args {
        if skip_next {
            skip_next = false;
        } else if arg == "--seed" {
            skip_next = true;
        } else if !arg.starts_with("--seed=") {
            words.push(arg);
        }
    }
    for (id, flag) in knobs {
        if matches.value_source(id) == Some(clap::parser::ValueSource::EnvVariable)
            && let Some(value) = matches.get_raw(id).and_then(|mut v| v.next())
        {
            words.push((*flag).to_owned());
            words.push(value.to_string_lossy().into_owned());
        }
    }
    words.push("--seed".into());
    words.push(seed.to_string());
    mcp_chaos::oracle::leaks::redact(&shell_words::join(&words), secrets)
}

/// The flaws `mcp-chaos demo` plants.
pub(crate) const DEMO_FLAWS: &[Flaw] = &[
    Flaw::StdoutNoise,
    Flaw::WrongErrorCodes,
    Flaw::UnknownToolResult,
    Flaw::ReplyToNotification,
    Flaw::CrashOnMalformed,
    Flaw::EchoUpstreamBody,
    Flaw::EmptySuccessOn5xx,
    Flaw::GenericError,
];

pub(crate) fn server_spec(args: &RunArgs) -> Result<ServerSpec, Box<dyn std::error::Error>> {
    let common = &args.common;
    let options = mcp_chaos::run::ProcessOptions {
        no_egress: common.no_egress,
        env: common.env.clone(),
        clean_env: common.clean_env,
        cwd: common.cwd.clone(),
        max_frame_bytes: common.max_frame_bytes,
    };
    let process = |line: &str| -> Result<StdioConfig, mcp_chaos::transport::StartError> {
        Ok(options.apply(StdioConfig::from_command_line(line)?))
    };
    match (&args.stdio, &args.http) {
        (Some(line), _) => Ok(ServerSpec::Stdio(process(line)?)),
        (None, Some(url)) => {
            mcp_chaos::transport::http::loopback_url(url, args.allow_remote).map_err(|reason| {
                mcp_chaos::transport::StartError::BadUrl {
                    url: url.clone(),
                    reason,
                }
            })?;
            let mut c = mcp_chaos::transport::HttpConfig::new(url.clone());
            c.start = args.start.as_deref().map(process).transpose()?;
            c.start_timeout = Duration::from_millis(args.start_timeout_ms);
            c.max_frame_bytes = common.max_frame_bytes;
            c.allow_remote = args.allow_remote;
            c.headers = args
                .headers
                .iter()
                .map(|h| h.resolve(&|name| std::env::var(name).ok()))
                .collect::<Result<_, String>>()?;
            c.header_templates = args
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.template.clone()))
                .collect();
            Ok(ServerSpec::Http(c))
        }
        (None, None) => Err(Box::new(mcp_chaos::transport::StartError::BadCommand {
            command: String::new(),
            reason: "give --stdio COMMAND or --http URL".into(),
        })),
    }
}

pub(crate) fn run_config(server: ServerSpec, args: &CommonArgs) -> RunConfig {
    let mut config = RunConfig::new(server, args.protocol_version);
    config.timeout = Duration::from_millis(args.timeout_ms.max(1));
    config.protocol_probes = !args.skip_probes;
    config.tool_calls = !args.skip_tool_calls;
    config.version_probe = !args.skip_version_probe;
    config.features = args.features;
    config.features.resources &= !args.skip_resources;
    config.features.prompts &= !args.skip_prompts;
    config.transport_chaos = !args.skip_chaos;
    config.generated = !args.skip_generated;
    config.cases = args.cases;
    config.wire_cases = args.wire_cases;
    config.fault_cases = args.fault_cases;
    config.tool_budget = Duration::from_millis(args.tool_budget_ms);
    config.generated_budget = Duration::from_millis(args.generated_budget_ms);
    config.budget = args.budget_ms.map(Duration::from_millis);
    config.in_flight = args.in_flight.max(1);
    config.replays.clone_from(&args.replays);
    config.max_restarts = args.max_restarts;
    config.faults.upstream_env.clone_from(&args.upstream_env);
    config.faults.proxy = args.proxy;
    config.faults.url_args = args.url_args;
    if let Some(FaultList(faults)) = &args.faults {
        config.faults.faults.clone_from(faults);
    }
    config.secrets.clone_from(&args.secret_env);
    config.selection = run::select::ToolSelection {
        tools: args.tools.iter().flat_map(|g| g.0.clone()).collect(),
        skip: args.skip_tools.iter().flat_map(|g| g.0.clone()).collect(),
        read_only: args.read_only,
    };
    config.seed = args.seed.unwrap_or_else(random_seed);
    config
}

pub(crate) fn block_on_run(config: &RunConfig, output: &OutputArgs) -> i32 {
    let report_json = output.report_json.as_deref();
    let quiet = output.quiet;
    let mut recorder = match output.record.as_deref().map(report::record::Recorder::new) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            eprintln!("mcp-chaos: cannot record into the --record folder: {e}");
            return exit::INTERNAL;
        }
    };
    let journal_path = report_json.map(report::journal::path_for);
    let mut journal = match journal_path
        .as_deref()
        .map(report::journal::Journal::create)
    {
        None => None,
        Some(Ok(j)) => Some(j),
        Some(Err(e)) => {
            eprintln!(
                "mcp-chaos: cannot create the findings journal {}: {e}",
                journal_path
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display()
            );
            return exit::INTERNAL;
        }
    };
    let live = run::live::LiveRun::new(config);
    if let Err(e) = write_report_on_signal(&live, output) {
        eprintln!("mcp-chaos: cannot handle SIGINT and SIGTERM: {e}");
        return exit::INTERNAL;
    }
    let Some(runtime) = run_runtime(config) else {
        return exit::INTERNAL;
    };
    runtime.block_on(async {
        let mut progress = report::terminal::Progress::new(quiet);
        let mut on_event = |e: &run::Event<'_>| {
            if live.ended() {
                // The signal handler has the report: what follows is the run's own end.
                return;
            }
            live.observe(e);
            if let Some(j) = journal.as_mut() {
                j.event(e);
            }
            progress.event(e);
            if let Some(r) = recorder.as_mut() {
                r.event(e);
            }
        };
        let outcome = run::run(config, &mut on_event).await;
        progress.finish();
        if !live.claim_end() {
            // A signal came first: its handler writes the report and exits the process.
            std::future::pending::<()>().await;
        }
        if let Some(r) = recorder.take()
            && let Err(e) = r.finish()
        {
            eprintln!("mcp-chaos: recording failed: {e}");
            return exit::INTERNAL;
        }
        if let Some(j) = journal.take()
            && let Err(e) = j.finish()
        {
            eprintln!("mcp-chaos: writing the findings journal failed: {e}");
            return exit::INTERNAL;
        }
        let (report, code) = match outcome {
            Err(e) => {
                eprintln!("mcp-chaos: {e}");
                (live.not_started(&e), exit::SERVER_START)
            }
            Ok(report) if report.has_violations() => (report, exit::VIOLATIONS),
            Ok(report) => (report, exit::SUCCESS),
        };
        let code = finish_report(&report, report_json, quiet, code);
        // Whatever happened (exit 2 included), as --report-json.
        if code != exit::INTERNAL
            && let Err(e) = write_file_reports(&report, output)
        {
            eprintln!("mcp-chaos: {e}");
            return exit::INTERNAL;
        }
        code
    })
}

/// Writes `--junit`, `--sarif`, `--markdown` and `--html` (each when asked) with the writers of
/// `mcp-chaos scenario`, over the run's suite model ([`report::of_run`]). Errors name the file.
pub(crate) fn write_file_reports(report: &run::Report, output: &OutputArgs) -> Result<(), String> {
    type Writer =
        fn(&mcp_chaos::scenario::outcome::SuiteReport, &std::path::Path) -> std::io::Result<()>;
    let writers: [(&Option<PathBuf>, Writer); 4] = [
        (&output.junit, report::junit::write_junit),
        (&output.sarif, report::sarif::write_sarif),
        (&output.markdown, report::markdown::write_markdown),
        (&output.html, report::html::write_html),
    ];
    if writers.iter().all(|(path, _)| path.is_none()) {
        return Ok(());
    }
    let suite = report::of_run::suite(report);
    for (path, write) in writers {
        if let Some(path) = path {
            write(&suite, path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            if !output.quiet {
                eprintln!("mcp-chaos: report written to {}", path.display());
            }
        }
    }
    Ok(())
}

/// Prints the terminal summary of `report` and writes it to `report_json`, if given; returns
/// `code`, or [`exit::INTERNAL`] when the report cannot be written.
pub(crate) fn finish_report(
    report: &run::Report,
    report_json: Option<&std::path::Path>,
    quiet: bool,
    code: i32,
) -> i32 {
    print!(
        "{}",
        report::terminal::render(report, std::io::stdout().is_terminal())
    );
    let _ = std::io::Write::flush(&mut std::io::stdout());
    if let Some(path) = report_json {
        if let Err(e) = report::json::write(report, path) {
            eprintln!("mcp-chaos: cannot write {}: {e}", path.display());
            return exit::INTERNAL;
        }
        if !quiet {
            eprintln!("mcp-chaos: report written to {}", path.display());
        }
    }
    code
}

/// On SIGINT or SIGTERM, at any point of the run and whatever its task is doing: writes the
/// partial report (the findings so far, `"interrupted": true`) as JSON and as every file report
/// asked for (`--junit`, `--sarif`, `--markdown`, `--html`), kills every server's process
/// tree, and exits with 1 (a violation was found) or 2 (the run did not complete).
pub(crate) fn write_report_on_signal(
    live: &run::live::LiveRun,
    output: &OutputArgs,
) -> std::io::Result<()> {
    let live = live.clone();
    let output = output.clone();
    crate::interrupt::on_signal(move |signal| {
        if !live.claim_end() {
            // The run had ended: its own report is being written.
            return;
        }
        eprintln!("\nmcp-chaos: {signal}: writing the report of the run so far");
        let report = live.interrupted(signal);
        let mut code = finish_report(
            &report,
            output.report_json.as_deref(),
            output.quiet,
            live.interrupted_exit_code(),
        );
        if let Err(e) = write_file_reports(&report, &output) {
            eprintln!("mcp-chaos: {e}");
            code = exit::INTERNAL;
        }
        mcp_chaos::transport::process::kill_every_group();
        eprintln!("mcp-chaos: interrupted by {signal}; the server's process tree was killed");
        std::process::exit(code);
    })
}

/// The async runtime of a command: two worker threads (the campaign is I/O-bound; its
/// transport readers and writers are tasks). `None`, with the reason on stderr, when it
/// cannot start.
pub(crate) fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("mcp-chaos: cannot start the async runtime: {e}");
            None
        }
    }
}

/// The async runtime of a run without fault injectors: one thread, which the campaign shares
/// with its transport's reader and writer tasks, so that handing a frame between them costs
/// no thread wake-up (a fast tool's generated phase spends about a quarter less CPU per call,
/// and answers come in without the hop from a worker). A run with a fake upstream or proxy
/// keeps [`runtime`]: the injectors' servers then answer the server under test on threads of
/// their own, whatever the campaign is busy with. `None`, with the reason on stderr, when it
/// cannot start.
pub(crate) fn run_runtime(config: &RunConfig) -> Option<tokio::runtime::Runtime> {
    if config.faults.is_active() {
        return runtime();
    }
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("mcp-chaos: cannot start the async runtime: {e}");
            None
        }
    }
}
