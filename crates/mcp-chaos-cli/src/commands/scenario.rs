//! `mcp-chaos scenario`: scenario files run as a suite against a baseline, with suite reports.

use std::path::PathBuf;

use mcp_chaos::report;
use mcp_chaos_model::exit;

use crate::args::*;
use crate::commands::runtime;
use crate::error::{Failure, Outcome};

/// Runs the scenario files under `args.paths` as a suite against the baseline, writes the
/// suite's reports and, with `--update-baseline`, the baseline; the verdict is the suite's
/// ([`SuiteReport::exit_code`](mcp_chaos_model::suite::SuiteReport::exit_code)).
pub(crate) fn scenario(args: &ScenarioArgs) -> Outcome {
    use mcp_chaos::scenario::{baseline::Baseline, format, run as suite};
    if args.schema {
        match serde_json::to_string_pretty(&format::json_schema()) {
            Ok(text) => {
                println!("{text}");
                return Ok(exit::SUCCESS);
            }
            Err(e) => {
                return Err(Failure::Internal(e.to_string()));
            }
        }
    }
    let files = match format::discover(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            return Err(Failure::Usage(e.to_string()));
        }
    };
    let files = match args.shard {
        Some((i, n)) => format::shard(files, i, n),
        None => files,
    };
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for f in &files {
        match format::load(f) {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut names: Vec<(&str, &PathBuf)> = Vec::new();
    for s in &scenarios {
        if let Some((_, other)) = names.iter().find(|(n, _)| *n == s.name) {
            errors.push(format!(
                "{}: scenario name {:?} is already used by {}; names key the baseline, so they must be unique",
                s.path.display(),
                s.name,
                other.display()
            ));
        }
        names.push((&s.name, &s.path));
    }
    if !errors.is_empty() {
        return Err(Failure::Usage(errors.join("\n")));
    }
    if args.list {
        for s in &scenarios {
            println!("{}\t{}", s.name, s.path.display());
        }
        return Ok(exit::SUCCESS);
    }
    if scenarios.is_empty() {
        eprintln!("mcp-chaos: no scenario files found (an empty shard is not an error)");
        return Ok(exit::SUCCESS);
    }
    let baseline = match args.baseline.as_deref().map(Baseline::load).transpose() {
        Ok(b) => b.unwrap_or_default(),
        Err(e) => {
            return Err(Failure::Usage(e.to_string()));
        }
    };
    let self_exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-chaos"));
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let options = suite::SuiteOptions {
        jobs,
        shard: args.shard,
        baseline: baseline.clone(),
        baseline_path: args.baseline.clone(),
        replays: args.replays.clone(),
        self_exe,
    };
    let runtime = runtime()?;
    let progress = report::suite::SuiteProgress::new(scenarios.len(), args.quiet);
    let outputs = SuiteOutputs {
        report_json: args.report_json.clone(),
        junit: args.junit.clone(),
        sarif: args.sarif.clone(),
        markdown: args.markdown.clone(),
        html: args.html.clone(),
        sarif_options: report::sarif::SarifOptions {
            accepted: !args.sarif_new_only,
            ..report::sarif::SarifOptions::default()
        },
    };
    let finished = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Err(e) = write_suite_report_on_signal(
        &scenarios,
        &finished,
        &ended,
        outputs.clone(),
        options.shard,
        options.baseline_path.clone(),
    ) {
        return Err(Failure::Internal(format!(
            "cannot handle SIGINT and SIGTERM: {e}"
        )));
    }
    let on_event = |e: &suite::SuiteEvent<'_>| {
        progress.event(e);
        if let suite::SuiteEvent::Finished { report } = e
            && let Ok(mut done) = finished.lock()
        {
            done.push((*report).clone());
        }
    };
    let report = runtime.block_on(suite::run_suite(&scenarios, &options, &on_event));
    if ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // A signal came first: its handler writes the reports and exits the process.
        loop {
            std::thread::park();
        }
    }
    print!("{}", report::suite::render(&report));
    outputs.write(&report)?;
    if args.update_baseline
        && let Some(path) = &args.baseline
    {
        let updated = baseline.updated(&report);
        if let Err(e) = updated.save(path) {
            return Err(Failure::Internal(format!(
                "cannot write {}: {e}",
                path.display()
            )));
        }
        eprintln!(
            "mcp-chaos: baseline {} updated: {} entries",
            path.display(),
            updated.entries.len()
        );
        return Ok(if report.exit_code() == exit::SERVER_START {
            exit::SERVER_START
        } else {
            exit::SUCCESS
        });
    }
    Ok(report.exit_code())
}

/// The report files of `mcp-chaos scenario` (`--report-json`, `--junit`, `--sarif`,
/// `--markdown`, `--html`).
#[derive(Debug, Clone)]
pub(crate) struct SuiteOutputs {
    report_json: Option<PathBuf>,
    junit: Option<PathBuf>,
    sarif: Option<PathBuf>,
    markdown: Option<PathBuf>,
    html: Option<PathBuf>,
    sarif_options: report::sarif::SarifOptions,
}

impl SuiteOutputs {
    /// Writes every report asked for; a [`Failure::Internal`] naming the file when one cannot
    /// be written.
    fn write(&self, report: &mcp_chaos::scenario::outcome::SuiteReport) -> Result<(), Failure> {
        type Writer<'a> = &'a dyn Fn(&std::path::Path) -> std::io::Result<()>;
        let writers: [(&Option<PathBuf>, Writer<'_>); 5] = [
            (&self.report_json, &|path| {
                serde_json::to_vec_pretty(report)
                    .map_err(std::io::Error::other)
                    .and_then(|bytes| std::fs::write(path, bytes))
            }),
            (&self.junit, &|path| {
                report::junit::write_junit(report, path)
            }),
            (&self.sarif, &|path| {
                report::sarif::write_sarif_with(report, self.sarif_options, path)
            }),
            (&self.markdown, &|path| {
                report::markdown::write_markdown(report, path)
            }),
            (&self.html, &|path| report::html::write_html(report, path)),
        ];
        for (path, write) in writers {
            if let Some(path) = path {
                if let Some(parent) = path.parent()
                    && !parent.as_os_str().is_empty()
                    && let Err(e) = std::fs::create_dir_all(parent)
                {
                    return Err(Failure::Internal(format!(
                        "cannot create {}: {e}",
                        parent.display()
                    )));
                }
                if let Err(e) = write(path) {
                    return Err(Failure::Internal(format!(
                        "cannot write {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// On SIGINT or SIGTERM during `mcp-chaos scenario`: writes the suite's reports with the
/// scenarios finished so far (`"interrupted": true`, the others in `unfinished`; the baseline
/// is not updated), kills every server's process tree and exits with 1 (a scenario failed)
/// or 2 (the suite did not complete).
pub(crate) fn write_suite_report_on_signal(
    scenarios: &[mcp_chaos::scenario::format::Scenario],
    finished: &std::sync::Arc<std::sync::Mutex<Vec<mcp_chaos::scenario::outcome::ScenarioReport>>>,
    ended: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    outputs: SuiteOutputs,
    shard: Option<(u32, u32)>,
    baseline: Option<PathBuf>,
) -> std::io::Result<()> {
    let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let finished = std::sync::Arc::clone(finished);
    let ended = std::sync::Arc::clone(ended);
    let started = std::time::Instant::now();
    crate::interrupt::on_signal(move |signal| {
        if ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        eprintln!("\nmcp-chaos: {signal}: writing the reports of the scenarios finished so far");
        let mut done = finished
            .lock()
            .map(|d| d.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        done.sort_by_key(|r| names.iter().position(|n| *n == r.name));
        let unfinished = names
            .iter()
            .filter(|n| !done.iter().any(|r| r.name == **n))
            .cloned()
            .collect();
        let report = mcp_chaos::scenario::outcome::SuiteReport {
            mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
            shard,
            baseline,
            scenarios: done,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            interrupted: true,
            unfinished,
        };
        print!("{}", report::suite::render(&report));
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let code = match outputs.write(&report) {
            Ok(()) => report.exit_code(),
            Err(failure) => failure.exit(),
        };
        mcp_chaos::transport::process::kill_every_group();
        eprintln!("mcp-chaos: interrupted by {signal}; every server's process tree was killed");
        std::process::exit(code);
    })
}
