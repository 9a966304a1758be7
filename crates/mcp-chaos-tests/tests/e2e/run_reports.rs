//! `run` and `demo` write `--junit`, `--sarif`, `--markdown` and `--html` with the writers of
//! `mcp-chaos scenario`: against the demo fixture, the JUnit file is read back by junit-parser
//! (a test case per tool and one for the server; the failures are exactly the test cases with
//! violations), the SARIF validates against the OASIS SARIF 2.1.0 schema with one result per
//! finding, the Markdown names the outcome and every finding's code, and the HTML page, loaded
//! in headless Chromium (see `browser.rs`), has the tool × fault matrix and every finding in
//! its DOM after load, paints (its screenshot is far from an empty page's) and makes zero
//! network requests. A clean run writes a passing JUnit, an empty SARIF result list
//! and a PASSED summary; a run whose server cannot start (exit 2) writes all four, as an
//! error.

use std::path::PathBuf;
use std::process::Command;

use mcp_chaos_tests::{fixture_command, mcp_chaos};
use serde_json::Value;

fn repo() -> PathBuf {
    mcp_chaos_tests::repo_root()
}

struct Written {
    code: i32,
    report: Value,
    junit: junit_parser::TestSuites,
    sarif: Value,
    markdown: String,
    html: String,
    html_path: PathBuf,
    dir: tempfile::TempDir,
}

fn write_reports(args: &[&str]) -> Written {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = |name: &str| dir.path().join(name);
    let out = Command::new(mcp_chaos())
        .args(args)
        .arg("--quiet")
        .arg("--report-json")
        .arg(path("report.json"))
        .arg("--junit")
        .arg(path("out/junit.xml"))
        .arg("--sarif")
        .arg(path("out/results.sarif"))
        .arg("--markdown")
        .arg(path("summary.md"))
        .arg("--html")
        .arg(path("out/report.html"))
        .output()
        .expect("mcp-chaos runs");
    let read = |name: &str| {
        std::fs::read_to_string(path(name))
            .unwrap_or_else(|_| panic!("no {name}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    let xml = read("out/junit.xml");
    Written {
        code: out.status.code().unwrap_or(-1),
        report: serde_json::from_str(&read("report.json")).expect("JSON"),
        junit: junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes()))
            .expect("junit-parser reads it"),
        sarif: serde_json::from_str(&read("out/results.sarif")).expect("SARIF is JSON"),
        markdown: read("summary.md"),
        html: read("out/report.html"),
        html_path: path("out/report.html"),
        dir,
    }
}

fn assert_valid_sarif(sarif: &Value) {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo().join("crates/mcp-chaos-tests/data/sarif/sarif-schema-2.1.0.json"),
        )
        .expect("the SARIF schema"),
    )
    .expect("JSON");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("urn:sarif", schema)
        .expect("a resource");
    let index = compiler
        .compile("urn:sarif", &mut schemas)
        .expect("compiles");
    if let Err(e) = schemas.validate(sarif, index) {
        panic!("the SARIF does not validate: {e:#}\n{sarif:#}");
    }
}

#[test]
fn demo_writes_junit_sarif_markdown_and_html_from_one_model() {
    let w = write_reports(&["demo", "--seed", "3"]);
    assert_eq!(w.code, 1);
    let findings = w.report["findings"].as_array().expect("findings").clone();
    assert!(findings.len() > 5, "{}", w.report);

    // JUnit: one suite, a case for the server and one per tool that has a generated phase or
    // a finding; failed cases are exactly those with a violation.
    assert_eq!(w.junit.suites.len(), 1);
    let suite = &w.junit.suites[0];
    assert_eq!(suite.name, "mcp-chaos run");
    let cases: Vec<&str> = suite
        .cases
        .iter()
        .map(|c| c.original_name.as_str())
        .collect();
    assert_eq!(cases[0], "server");
    for g in w.report["summary"]["generated"]
        .as_array()
        .expect("generated")
    {
        let name = format!("tool {}", g["tool"].as_str().expect("a tool"));
        assert!(cases.contains(&name.as_str()), "{cases:?}");
    }
    let violating = |case: &str| {
        findings.iter().any(|f| {
            f["severity"] == "violation"
                && match f["tool"].as_str() {
                    Some(t) => case == format!("tool {t}"),
                    None => case == "server",
                }
        })
    };
    for case in &suite.cases {
        assert_eq!(
            case.status.is_failure(),
            violating(&case.original_name),
            "{}",
            case.original_name
        );
    }
    assert!(suite.failures > 0);
    assert_eq!(
        w.junit.failures,
        suite.cases.iter().filter(|c| c.status.is_failure()).count() as u64
    );

    // SARIF 2.1.0: valid, one result per finding, rule ids are the codes.
    assert_valid_sarif(&w.sarif);
    let results = w.sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), findings.len());
    assert_eq!(
        w.sarif["runs"][0]["automationDetails"]["id"],
        "mcp-chaos/run/"
    );
    let mut codes: Vec<&str> = findings.iter().filter_map(|f| f["code"].as_str()).collect();
    let mut rules: Vec<&str> = results
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    codes.sort_unstable();
    rules.sort_unstable();
    assert_eq!(codes, rules);
    assert!(
        results[0]["message"]["text"]
            .as_str()
            .is_some_and(|m| m.contains("--seed 3")),
        "the replay is the rerun command: {:#}",
        results[0]
    );

    // Markdown: the outcome and every code.
    assert!(w.markdown.contains("FAILED"), "{}", w.markdown);
    for code in &codes {
        assert!(w.markdown.contains(code), "{code} missing:\n{}", w.markdown);
    }

    // HTML: self-contained, with the matrices; then as headless Chromium renders it.
    assert_self_contained_with_the_matrices(&w.html, &w.report);
    assert!(w.html.contains("--seed 3"), "the rerun command");
    if let Some(page) = crate::browser::render("demo --html", &w.html_path) {
        assert_eq!(page.page_requests, Vec::<String>::new(), "network requests");
        assert_self_contained_with_the_matrices(&page.dom, &w.report);
        // Hover: each cell of a finding has the findings in its title; click: its links
        // lead to an element of the page.
        let matrix = table(&page.dom, "tool-fault-matrix");
        assert!(matrix.contains(" title=\""), "{matrix}");
        for href in matrix.split("href=\"#").skip(1) {
            let id = href.split('"').next().unwrap_or_default();
            assert!(
                page.dom.contains(&format!(" id=\"{id}\"")),
                "#{id} leads nowhere"
            );
        }
    }
    // Painted: the page's screenshot holds far more than an empty page's (about 9 KB of PNG
    // against 150 KB for the demo's).
    let blank = w.dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").expect("a page");
    if let (Some(report), Some(empty)) = (
        crate::browser::screenshot("demo --html", &w.html_path),
        crate::browser::screenshot("demo --html", &blank),
    ) {
        assert!(
            report.len() > 4 * empty.len(),
            "a screenshot of {} bytes, an empty page's {}",
            report.len(),
            empty.len()
        );
    }
}

#[test]
fn a_clean_run_writes_passing_reports() {
    let w = write_reports(&[
        "run",
        "--stdio",
        &fixture_command(&[]),
        "--protocol-version",
        "2025-11-25",
        "--cases",
        "4",
        "--skip-chaos",
    ]);
    assert_eq!(w.code, 0);
    assert_eq!(w.junit.failures, 0);
    assert!(w.junit.tests >= 4, "{}", w.junit.tests);
    assert_valid_sarif(&w.sarif);
    assert_eq!(w.sarif["runs"][0]["results"], serde_json::json!([]));
    assert!(w.markdown.contains("PASSED"), "{}", w.markdown);
}

/// Everything in `html` that a browser would fetch by itself: `src`, `<link>`, `<script>`,
/// CSS `url(` and `@import`, `<object>`, `<embed>`, `<iframe>`, `srcset`, `<meta refresh>`.
fn fetching(html: &str) -> Vec<&'static str> {
    let lower = html.to_ascii_lowercase();
    [
        " src=",
        "<link",
        "<script",
        "url(",
        "@import",
        "<object",
        "<embed",
        "<iframe",
        "srcset",
        "http-equiv=\"refresh\"",
    ]
    .into_iter()
    .filter(|needle| lower.contains(needle))
    .collect()
}

/// The table `id` of `html` (from its opening tag to its `</table>`).
fn table<'a>(html: &'a str, id: &str) -> &'a str {
    html.split(&format!("<table id=\"{id}\">"))
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no table {id}"))
}

/// `html` (the demo's `--html`, as written or as Chromium's DOM after load) is one
/// self-contained page with the tool × fault matrix (a row per tool, a column per fault the
/// findings name, the cell of each finding coloured by its severity), the tool × invariant
/// matrix and every finding of `report`; nothing a browser would fetch, and a
/// Content-Security-Policy that forbids fetching anyway.
fn assert_self_contained_with_the_matrices(html: &str, report: &Value) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(fetching(html), Vec::<&str>::new());
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    // Every link is an anchor in the page or a spec page (links are never fetched).
    for href in html.split("href=\"").skip(1) {
        assert!(
            href.starts_with('#') || href.starts_with("https://modelcontextprotocol.io/"),
            "{}",
            &href[..href.len().min(80)]
        );
    }
    let matrix = table(html, "tool-fault-matrix");
    let findings = report["findings"].as_array().expect("findings");
    for f in findings {
        let tool = f["tool"].as_str().unwrap_or("(server)");
        assert!(matrix.contains(&format!("<tr><th>{tool}</th>")), "{tool}");
        if let Some(fault) = f["fault"]["name"].as_str() {
            assert!(matrix.contains(&format!("<th>{fault}</th>")), "{fault}");
        }
        let anchor_target = format!("{}</a>", f["code"].as_str().expect("a code"));
        assert!(matrix.contains(&anchor_target));
    }
    let violations = findings
        .iter()
        .filter(|f| f["severity"] == "violation")
        .count();
    assert!(violations > 0 && matrix.contains("<td class=\"violation\""));
    assert!(html.contains("<table id=\"tool-invariant-matrix\">"));
    assert_eq!(
        html.matches("<div class=\"finding ").count(),
        findings.len()
    );
}

/// `scenario --html`: one page for the suite, a section per scenario.
#[test]
fn scenario_html_has_a_section_per_scenario() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let html_path = dir.path().join("suite.html");
    let out = Command::new(mcp_chaos())
        .arg("scenario")
        .arg(repo().join("scenarios/fixture/correct.toml"))
        .arg(repo().join("scenarios/fixture/flaws/protocol-error-on-404.toml"))
        .args(["-q", "--html"])
        .arg(&html_path)
        .current_dir(repo())
        .output()
        .expect("mcp-chaos runs");
    let html = std::fs::read_to_string(&html_path)
        .unwrap_or_else(|_| panic!("no HTML: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(html.matches("<section>").count(), 2);
    assert_eq!(html.matches("<table id=\"tool-fault-matrix\">").count(), 2);
    assert_eq!(fetching(&html), Vec::<&str>::new());
    if let Some(page) = crate::browser::render("scenario --html", &html_path) {
        assert_eq!(page.page_requests, Vec::<String>::new(), "network requests");
        assert_eq!(page.dom.matches("<section>").count(), 2);
        assert_eq!(
            page.dom.matches("<table id=\"tool-fault-matrix\">").count(),
            2
        );
    }
}

/// A run whose server cannot start (exit 2) still writes every file report, as an error: a
/// JUnit error test case with the reason, a valid SARIF whose invocation failed, an ERROR
/// Markdown summary and an ERROR page.
#[test]
fn a_run_that_cannot_start_writes_every_report_as_an_error() {
    let w = write_reports(&[
        "run",
        "--stdio",
        "sh -c 'echo not-a-server-ci17; exit 3'",
        "--timeout-ms",
        "1500",
    ]);
    assert_eq!(w.code, 2);
    assert_eq!(w.report["outcome"], "not-started", "{:#}", w.report);
    assert_eq!(w.junit.errors, 1, "{:?}", w.junit);
    assert_eq!(w.junit.failures, 0, "{:?}", w.junit);
    assert_valid_sarif(&w.sarif);
    assert_eq!(
        w.sarif["runs"][0]["invocations"][0]["executionSuccessful"], false,
        "{:#}",
        w.sarif
    );
    assert!(w.markdown.contains("ERROR"), "{}", w.markdown);
    assert!(w.html.contains("mcp-chaos: ERROR"), "{}", w.html);
}
