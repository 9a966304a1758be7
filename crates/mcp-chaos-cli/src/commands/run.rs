//! `mcp-chaos run` and `mcp-chaos demo`: a campaign against a server (or the bundled fixture
//! with flaws planted), its reports, and the report written on SIGINT/SIGTERM.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::report;
use mcp_chaos::run::{self, RunConfig, ServerSpec, VersionChoice};
use mcp_chaos::transport::StdioConfig;
use mcp_chaos_fixture::Flaw;
use mcp_chaos_model::exit;

use crate::args::*;
use crate::error::{Failure, Outcome};

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

/// Runs `config`'s campaign with the terminal progress, the journal and recording asked for
/// in `output`, and writes every report; the verdict is 0, 1, or 2 for a run that did not
/// complete (its report written too).
pub(crate) fn block_on_run(config: &RunConfig, output: &OutputArgs) -> Outcome {
    let report_json = output.report_json.as_deref();
    let quiet = output.quiet;
    let mut recorder = match output.record.as_deref().map(report::record::Recorder::new) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            return Err(Failure::Internal(format!(
                "cannot record into the --record folder: {e}"
            )));
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
            return Err(Failure::Internal(format!(
                "cannot create the findings journal {}: {e}",
                journal_path
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display()
            )));
        }
    };
    let live = run::live::LiveRun::new(config);
    if let Err(e) = write_report_on_signal(&live, output) {
        return Err(Failure::Internal(format!(
            "cannot handle SIGINT and SIGTERM: {e}"
        )));
    }
    let runtime = run_runtime(config)?;
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
            return Err(Failure::Internal(format!("recording failed: {e}")));
        }
        if let Some(j) = journal.take()
            && let Err(e) = j.finish()
        {
            return Err(Failure::Internal(format!(
                "writing the findings journal failed: {e}"
            )));
        }
        let (report, code) = match outcome {
            Err(e) => {
                eprintln!("mcp-chaos: {e}");
                (live.not_started(&e), exit::SERVER_START)
            }
            Ok(report) if report.has_violations() => (report, exit::VIOLATIONS),
            Ok(report) => (report, exit::SUCCESS),
        };
        let code = finish_report(&report, report_json, quiet, code)?;
        // Whatever happened (exit 2 included), as --report-json.
        write_file_reports(&report, output).map_err(Failure::Internal)?;
        Ok(code)
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
/// `code`, or a [`Failure::Internal`] when the report cannot be written.
pub(crate) fn finish_report(
    report: &run::Report,
    report_json: Option<&std::path::Path>,
    quiet: bool,
    code: i32,
) -> Outcome {
    print!(
        "{}",
        report::terminal::render(report, std::io::stdout().is_terminal())
    );
    let _ = std::io::Write::flush(&mut std::io::stdout());
    if let Some(path) = report_json {
        if let Err(e) = report::json::write(report, path) {
            return Err(Failure::Internal(format!(
                "cannot write {}: {e}",
                path.display()
            )));
        }
        if !quiet {
            eprintln!("mcp-chaos: report written to {}", path.display());
        }
    }
    Ok(code)
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
        let mut code = match finish_report(
            &report,
            output.report_json.as_deref(),
            output.quiet,
            live.interrupted_exit_code(),
        ) {
            Ok(code) => code,
            Err(failure) => failure.exit(),
        };
        if let Err(e) = write_file_reports(&report, &output) {
            code = Failure::Internal(e).exit();
        }
        mcp_chaos::transport::process::kill_every_group();
        eprintln!("mcp-chaos: interrupted by {signal}; the server's process tree was killed");
        std::process::exit(code);
    })
}

/// The async runtime of a command: two worker threads (the campaign is I/O-bound; its
/// transport readers and writers are tasks).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(format!("cannot start the async runtime: {e}")))
}

/// The async runtime of a run without fault injectors: one thread, which the campaign shares
/// with its transport's reader and writer tasks, so that handing a frame between them costs
/// no thread wake-up (a fast tool's generated phase spends about a quarter less CPU per call,
/// and answers come in without the hop from a worker). A run with a fake upstream or proxy
/// keeps [`runtime`]: the injectors' servers then answer the server under test on threads of
/// their own, whatever the campaign is busy with.
pub(crate) fn run_runtime(config: &RunConfig) -> Result<tokio::runtime::Runtime, Failure> {
    if config.faults.is_active() {
        return runtime();
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(format!("cannot start the async runtime: {e}")))
}

/// `mcp-chaos run`: a campaign against the server `args` names (exit 0, 1, or 2 when the run
/// did not complete); `matches` gives the command line back for the report's rerun line.
pub(crate) fn run_command(args: &RunArgs, matches: &clap::ArgMatches) -> Outcome {
    let server = server_spec(args).map_err(|e| Failure::Usage(e.to_string()))?;
    let output = &args.common.output;
    let mut config = run_config(server, &args.common);
    if let Some(run) = matches.subcommand_matches("run") {
        let mut secrets = config.server.redactions();
        secrets.extend(config.secrets.iter().map(|(_, v)| v.clone()));
        config.rerun = Some(rerun_command(run, ENV_KNOBS, config.seed, &secrets));
    }
    block_on_run(&config, output)
}

/// `mcp-chaos demo`: a campaign against the bundled fixture with [`DEMO_FLAWS`] planted and a
/// fake upstream answering 404, 429, 503, hanging and sending malformed JSON.
pub(crate) fn demo(args: &DemoArgs, matches: &clap::ArgMatches) -> Outcome {
    let exe = std::env::current_exe().map_err(|e| {
        Failure::Internal(format!(
            "cannot locate the mcp-chaos binary for the demo: {e}"
        ))
    })?;
    let mut words = vec!["fixture".to_owned()];
    for flaw in DEMO_FLAWS {
        words.push("--flaw".into());
        words.push(flaw.name().into());
    }
    let mut server = StdioConfig::new(exe.to_string_lossy(), words);
    server
        .env
        .push(("FIXTURE_UPSTREAM_TIMEOUT_MS".into(), "1000".into()));
    if !args.output.quiet {
        eprintln!(
            "mcp-chaos demo: running the bundled fixture server with the flaws {}",
            DEMO_FLAWS
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut config = RunConfig::new(
        ServerSpec::Stdio(server),
        VersionChoice::Exactly(ProtocolVersion::LATEST_WITH_INITIALIZE),
    );
    config.timeout = Duration::from_millis(5_000);
    config.faults.upstream_env = vec!["UPSTREAM_URL".into()];
    config.faults.faults = [
        "not-found",
        "rate-limited",
        "unavailable",
        "hang",
        "malformed-json",
    ]
    .iter()
    .filter_map(|f| f.parse().ok())
    .collect();
    config.seed = args.seed.unwrap_or_else(random_seed);
    if let Some(demo) = matches.subcommand_matches("demo") {
        config.rerun = Some(rerun_command(demo, &[], config.seed, &[]));
    }
    block_on_run(&config, &args.output)
}
