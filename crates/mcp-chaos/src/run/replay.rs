//! Replay files: a finding from a generated case, saved with everything needed to run it again
//! (the server, the protocol version, the seed, the exact frame sent), and [`replay`], which
//! re-runs it and says whether it still fails (`mcp-chaos replay FILE`).
//!
//! The file is JSON:
//! `{"mcp_chaos_version", "seed", "server": {"stdio": {...}} | {"http": {...}},
//! "protocol_version", "tool", "arguments", "violation", "frame", "expect": {"code",
//! "invariant"}, "message"}`, and for a finding of the fault properties
//! ([`super::fault_props`]) `"upstream": {"fault", "upstream_env", "proxy", "url_args",
//! "upstream_url"}`: the scoped fault the call ran under and how the server reached the fake
//! upstream. Replaying it starts a fresh fake upstream the same way, installs the fault for the
//! call, and judges the call with the upstream's journal as the run did.
//!
//! An HTTP server's `--header`s are saved by name, never by value: `"headers": [{"name",
//! "value"}]`, where `value` is the template as written when it only names environment
//! variables (`"Bearer ${MCP_TOKEN}"`, see [`crate::auth::saved_template`]), expanded again
//! from the environment of `mcp-chaos replay`, and `null` when the value was written
//! literally (the credential itself): the replay then needs `--header NAME: VALUE` again.
//!
//! A wire-phase finding's file also has `"wire": {"base64", "what"}`: the exact bytes of the
//! shrunk frame (`frame` then shows them as text, `\xNN` where not UTF-8; `tool` is empty and
//! `arguments` null), sent as they are.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{RunConfig, ServerSpec};
use crate::finding::Finding;
use crate::generate::Violation;
use crate::oracle::{self, Context, ToolTable};
use crate::protocol::ProtocolVersion;
use crate::session::{ClientConfig, Exchange, Expect, Probe, Session};
use crate::transport::{HttpConfig, StdioConfig};

/// How to start the server again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerFile {
    /// A stdio server.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
        /// Whether the environment was cleaned.
        clean_env: bool,
        /// The working directory.
        cwd: Option<PathBuf>,
    },
    /// An HTTP server.
    Http {
        /// The endpoint.
        url: String,
        /// The start command, as stdio-style settings.
        start: Option<Box<ServerFile>>,
        /// The headers sent on every request (`--header`), by name; absent in files written
        /// before headers were saved.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headers: Vec<HeaderFile>,
    },
}

/// One `--header` in a replay file: its name and, when it only names environment variables,
/// its value template (never an expanded value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderFile {
    /// The header name.
    pub name: String,
    /// The value as written, e.g. `Bearer ${MCP_TOKEN}`; `None` when it was written literally
    /// and so is not saved.
    pub value: Option<String>,
}

impl ServerFile {
    fn of(spec: &ServerSpec) -> ServerFile {
        fn stdio(c: &StdioConfig) -> ServerFile {
            ServerFile::Stdio {
                program: c.program.clone(),
                args: c.args.clone(),
                env: c.env.clone(),
                clean_env: c.clean_env,
                cwd: c.cwd.clone(),
            }
        }
        match spec {
            ServerSpec::Stdio(c) => stdio(c),
            ServerSpec::Http(c) => ServerFile::Http {
                url: c.url.clone(),
                start: c.start.as_ref().map(|s| Box::new(stdio(s))),
                headers: c
                    .headers
                    .iter()
                    .map(|(name, _)| HeaderFile {
                        name: name.clone(),
                        value: c
                            .header_templates
                            .iter()
                            .find(|(n, _)| n.eq_ignore_ascii_case(name))
                            .and_then(|(_, t)| crate::auth::saved_template(t)),
                    })
                    .collect(),
            },
        }
    }

    /// The server spec to start, with its headers: each saved template expanded with `env`
    /// (e.g. `|n| std::env::var(n).ok()`), each of `given` (`--header` of `mcp-chaos replay`,
    /// expanded) replacing the saved one of its name (case-insensitive) or added. Errors: an
    /// unset variable (named), a header saved without its value and not given again (named,
    /// with what to pass), a header given for a stdio server.
    pub fn spec_with(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        given: &[(String, String)],
    ) -> Result<ServerSpec, String> {
        let mut spec = self.spec();
        let ServerFile::Http { headers, .. } = self else {
            if let Some((name, _)) = given.first() {
                return Err(format!(
                    "--header {name}: the replay file's server is a stdio server (headers go with HTTP)"
                ));
            }
            return Ok(spec);
        };
        let ServerSpec::Http(c) = &mut spec else {
            return Ok(spec);
        };
        for h in headers {
            if given.iter().any(|(n, _)| n.eq_ignore_ascii_case(&h.name)) {
                continue;
            }
            let Some(template) = &h.value else {
                return Err(format!(
                    "the server needs the header {0}, whose value was given literally and so is \
                     not in the replay file; pass it again, e.g. --header \"{0}: ${{MCP_TOKEN}}\" \
                     with MCP_TOKEN set",
                    h.name
                ));
            };
            let header = crate::auth::HeaderArg {
                name: h.name.clone(),
                template: template.clone(),
            };
            c.headers.push(header.resolve(env)?);
            c.header_templates.push((h.name.clone(), template.clone()));
        }
        c.headers.extend(given.iter().cloned());
        Ok(spec)
    }

    /// The server spec to start, without any header (see [`ServerFile::spec_with`]).
    pub fn spec(&self) -> ServerSpec {
        fn stdio(f: &ServerFile) -> Option<StdioConfig> {
            match f {
                ServerFile::Stdio {
                    program,
                    args,
                    env,
                    clean_env,
                    cwd,
                } => {
                    let mut c = StdioConfig::new(program.clone(), args.clone());
                    c.env.clone_from(env);
                    c.clean_env = *clean_env;
                    c.cwd.clone_from(cwd);
                    Some(c)
                }
                ServerFile::Http { .. } => None,
            }
        }
        match self {
            ServerFile::Http { url, start, .. } => {
                let mut c = HttpConfig::new(url.clone());
                c.start = start.as_deref().and_then(stdio);
                ServerSpec::Http(c)
            }
            other => {
                ServerSpec::Stdio(stdio(other).unwrap_or_else(|| StdioConfig::new("", vec![])))
            }
        }
    }
}

/// What a replay expects to see again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Expectation {
    /// The finding's code.
    pub code: String,
    /// The finding's invariant.
    pub invariant: String,
}

/// A replay file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayFile {
    /// The mcp-chaos version that wrote it.
    pub mcp_chaos_version: String,
    /// The run's seed.
    pub seed: u64,
    /// The server.
    pub server: ServerFile,
    /// The protocol version the finding was judged under.
    pub protocol_version: String,
    /// The tool called.
    pub tool: String,
    /// The (shrunk) arguments.
    pub arguments: Value,
    /// The constraint the arguments break, for invalid cases.
    pub violation: Option<Violation>,
    /// The exact frame that was sent.
    pub frame: String,
    /// The finding to reproduce.
    pub expect: Expectation,
    /// The finding's message, for people.
    pub message: String,
    /// For a finding of the fault properties: the upstream fault of the call, and how the
    /// server reached the fake upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamReplay>,
    /// For a wire-phase finding: the frame's exact bytes, sent as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<WireFrame>,
}

/// A wire-phase frame in a replay file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireFrame {
    /// The frame's bytes, base64 (standard alphabet, padded), without a line terminator.
    pub base64: String,
    /// What the frame is, e.g. `tools/call with invalid UTF-8`.
    pub what: String,
}

/// The fake upstream of a replayed call: what it served, and how the server found it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UpstreamReplay {
    /// The scoped fault installed for the call (`{"fault", "path", "only", "nth",
    /// "probability", "seed"}`, as in scenario files).
    pub fault: mcp_chaos_faults::ScopedFault,
    /// Environment variables that receive the fake upstream's base URL (`--upstream-env`).
    pub upstream_env: Vec<String>,
    /// Whether a fault-injecting forward proxy was in the proxy variables (`--proxy`).
    pub proxy: bool,
    /// Whether URL-typed arguments pointed at the fake upstream (`--url-args`).
    pub url_args: bool,
    /// The fake upstream's base URL in the run: replaced in the frame by the new one's.
    pub upstream_url: String,
}

/// Writes the replay file of `finding` (from `exchange`) into `dir`; returns its path.
pub fn write(
    dir: &Path,
    config: &RunConfig,
    version: ProtocolVersion,
    exchange: &Exchange,
    finding: &Finding,
) -> std::io::Result<PathBuf> {
    let Probe::Generated {
        tool,
        arguments,
        violation,
        ..
    } = &exchange.probe
    else {
        return Err(std::io::Error::other(
            "only generated cases have replay files",
        ));
    };
    std::fs::create_dir_all(dir)?;
    let file = ReplayFile {
        mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
        seed: config.seed,
        server: ServerFile::of(&config.server),
        protocol_version: version.as_str().to_owned(),
        tool: tool.clone(),
        arguments: arguments.clone(),
        violation: violation.clone(),
        frame: String::from_utf8_lossy(&exchange.sent)
            .trim_end()
            .to_owned(),
        expect: Expectation {
            code: finding.code.clone(),
            invariant: finding.invariant.clone(),
        },
        message: finding.message.clone(),
        upstream: None,
        wire: None,
    };
    save(dir, tool, finding, &file)
}

/// Writes the replay file of a wire-phase `finding` whose shrunk frame is `frame` (the
/// exchange that first showed it gives the description) into `dir`; returns its path.
pub fn write_wire(
    dir: &Path,
    config: &RunConfig,
    version: ProtocolVersion,
    frame: &[u8],
    exchange: &Exchange,
    finding: &Finding,
) -> std::io::Result<PathBuf> {
    let what = match &exchange.probe {
        Probe::Wire { what, .. } => what.clone(),
        _ => return Err(std::io::Error::other("not a wire-phase exchange")),
    };
    std::fs::create_dir_all(dir)?;
    let file = ReplayFile {
        mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
        seed: config.seed,
        server: ServerFile::of(&config.server),
        protocol_version: version.as_str().to_owned(),
        tool: String::new(),
        arguments: Value::Null,
        violation: None,
        frame: crate::oracle::wire_answer::escaped(frame, usize::MAX),
        expect: Expectation {
            code: finding.code.clone(),
            invariant: finding.invariant.clone(),
        },
        message: finding.message.clone(),
        upstream: None,
        wire: Some(WireFrame {
            base64: to_base64(frame),
            what,
        }),
    };
    save(dir, "wire", finding, &file)
}

/// Writes the replay file of `finding`, from the fault property case `exchange` (a
/// `tools/call` under `scoped`, with the fake upstream at `upstream_url`), into `dir`; returns
/// its path.
pub fn write_fault(
    dir: &Path,
    config: &RunConfig,
    version: ProtocolVersion,
    exchange: &Exchange,
    finding: &Finding,
    scoped: &mcp_chaos_faults::ScopedFault,
    upstream_url: &str,
) -> std::io::Result<PathBuf> {
    let Probe::ToolCall { tool, arguments } = &exchange.probe else {
        return Err(std::io::Error::other("not a tools/call"));
    };
    std::fs::create_dir_all(dir)?;
    let file = ReplayFile {
        mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
        seed: config.seed,
        server: ServerFile::of(&config.server),
        protocol_version: version.as_str().to_owned(),
        tool: tool.clone(),
        arguments: arguments.clone(),
        violation: None,
        frame: String::from_utf8_lossy(&exchange.sent)
            .trim_end()
            .to_owned(),
        expect: Expectation {
            code: finding.code.clone(),
            invariant: finding.invariant.clone(),
        },
        message: finding.message.clone(),
        upstream: Some(UpstreamReplay {
            fault: scoped.clone(),
            upstream_env: config.faults.upstream_env.clone(),
            proxy: config.faults.proxy,
            url_args: config.faults.url_args,
            upstream_url: upstream_url.to_owned(),
        }),
        wire: None,
    };
    save(dir, tool, finding, &file)
}

/// Saves `file` as `dir/CODE-TOOL-N.json` (the first free N); returns its path.
fn save(dir: &Path, tool: &str, finding: &Finding, file: &ReplayFile) -> std::io::Result<PathBuf> {
    let safe: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut n = 1;
    let path = loop {
        let path = dir.join(format!("{}-{safe}-{n}.json", finding.code));
        if !path.exists() {
            break path;
        }
        n += 1;
    };
    let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
    std::fs::write(&path, text + "\n")?;
    Ok(path)
}

/// Reads a replay file. Errors name the file and what is wrong.
pub fn read(path: &Path) -> Result<ReplayFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not a replay file: {e}", path.display()))
}

/// The result of a replay.
#[derive(Debug)]
pub struct ReplayOutcome {
    /// Whether the expected finding came back.
    pub reproduced: bool,
    /// Every finding of the replayed exchange and the liveness check after it.
    pub findings: Vec<Finding>,
}

/// Starts the server (`server` overrides the one in the file), negotiates the file's protocol
/// version, sends the saved frame, and judges it as the run did; a file with an `upstream`
/// first starts a fake upstream on 127.0.0.1 the way the run did and serves its scoped fault
/// for the call. Errors when the fake upstream or the server cannot be started or initialized.
pub async fn replay(
    file: &ReplayFile,
    server: Option<ServerSpec>,
    timeout: Duration,
) -> Result<ReplayOutcome, String> {
    let mut spec = server.unwrap_or_else(|| file.server.spec());
    let injectors = match &file.upstream {
        Some(up) => {
            let plan = super::faults::FaultPlan {
                upstream_env: up.upstream_env.clone(),
                proxy: up.proxy,
                url_args: up.url_args,
                faults: Vec::new(),
            };
            let inj = super::faults::Injectors::start(&plan, file.seed)
                .await
                .map_err(|e| e.to_string())?;
            if let Some(env) = spec.env_mut() {
                env.extend(inj.env(&plan));
            }
            Some(inj)
        }
        None => None,
    };
    let result = replay_on(file, &spec, injectors.as_ref(), timeout).await;
    if let Some(inj) = injectors {
        inj.shutdown().await;
    }
    result
}

async fn replay_on(
    file: &ReplayFile,
    spec: &ServerSpec,
    injectors: Option<&super::faults::Injectors>,
    timeout: Duration,
) -> Result<ReplayOutcome, String> {
    let version: ProtocolVersion = file
        .protocol_version
        .parse()
        .map_err(|e: crate::protocol::UnknownVersion| e.to_string())?;
    let transport = spec.start().await.map_err(|e| e.to_string())?;
    let mut session = Session::new(transport, ClientConfig::new(version, timeout));
    let (_, negotiated) = session.initialize().await.map_err(|e| e.to_string())?;
    let (_, tools) = session.list_tools().await;
    let table = ToolTable::new(&tools, negotiated.version);
    if let Some(wire) = &file.wire {
        let bytes = from_base64(&wire.base64)?;
        let expected = crate::wire::answer::Expected::of_candidate(&bytes, negotiated.version);
        let expect = match &expected {
            crate::wire::answer::Expected::Response(id) => Expect::Response {
                id: id.clone(),
                or_null: true,
                fence: true,
            },
            _ => Expect::Fenced,
        };
        let probe = Probe::Wire {
            case: 0,
            what: wire.what.clone(),
            expected,
            phase: "replay",
        };
        let mut frame = bytes;
        if session.transport_mut().http().is_none() {
            frame.push(b'\n');
        }
        let ex = session.send(probe, frame, expect).await;
        return Ok(judge_replay(file, session, &table, &negotiated, &ex, &[]).await);
    }
    let id = session.next_id();
    // The saved frame, with a fresh id so that it never collides with the session's own.
    // A URL argument that named the run's fake upstream names this one.
    let text = match (&file.upstream, injectors) {
        (Some(up), Some(inj)) if !up.upstream_url.is_empty() => {
            file.frame.replace(&up.upstream_url, &inj.upstream.url())
        }
        _ => file.frame.clone(),
    };
    let mut frame: Value =
        serde_json::from_str(&text).map_err(|e| format!("the saved frame is not JSON: {e}"))?;
    frame["id"] = id.to_value();
    let probe = match &file.upstream {
        Some(_) => Probe::ToolCall {
            tool: file.tool.clone(),
            arguments: frame["params"]["arguments"].clone(),
        },
        None => Probe::Generated {
            tool: file.tool.clone(),
            arguments: file.arguments.clone(),
            violation: file.violation.clone(),
            phase: "replay",
        },
    };
    let installed = match (&file.upstream, injectors) {
        (Some(up), Some(inj)) => {
            inj.install(&up.fault);
            Some((inj, inj.mark(), &up.fault))
        }
        _ => None,
    };
    let expect = Expect::Response {
        id,
        or_null: false,
        fence: false,
    };
    let mut ex = session
        .send(probe, crate::wire::to_line(&frame), expect)
        .await;
    let mut exact = Vec::new();
    if let Some((inj, marks, fault)) = installed {
        ex.fault = Some(super::faults::context(fault, &inj.since(&marks)));
        inj.heal();
        exact.extend(
            inj.canaries()
                .into_iter()
                .map(|c| (crate::oracle::LeakKind::Canary, c)),
        );
    }
    Ok(judge_replay(file, session, &table, &negotiated, &ex, &exact).await)
}

/// Pings after the replayed exchange `ex`, judges both as the run did (`exact`: the values
/// a response must not echo, e.g. the fake upstream's canaries), and shuts down.
async fn judge_replay(
    file: &ReplayFile,
    mut session: Session,
    table: &ToolTable,
    negotiated: &crate::session::Negotiated,
    ex: &Exchange,
    exact: &[(crate::oracle::LeakKind, String)],
) -> ReplayOutcome {
    let ping = session.liveness().await;
    let stderr = session.stderr_tail();
    let ctx = Context {
        version: negotiated.version,
        tools: table,
        exact,
        capabilities: Some(&negotiated.capabilities),
    };
    let mut findings = oracle::judge(&ctx, ex);
    findings.extend(oracle::liveness::check(&ctx, ex, &ping, &stderr));
    session.shutdown().await;
    ReplayOutcome {
        reproduced: findings.iter().any(|f| f.code == file.expect.code),
        findings,
    }
}

/// The exact bytes of a frame for a replay file (standard base64).
pub fn to_base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The bytes of a replay file's base64 frame.
pub fn from_base64(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("the saved frame is not base64: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http_file() -> ServerFile {
        let mut c = HttpConfig::new("http://127.0.0.1:1/mcp");
        c.headers = vec![
            ("Authorization".into(), "Bearer s3cr3t-value".into()),
            ("X-Api-Key".into(), "k3y-literal".into()),
        ];
        c.header_templates = vec![
            ("Authorization".into(), "Bearer ${TOK}".into()),
            ("X-Api-Key".into(), "k3y-literal".into()),
        ];
        ServerFile::of(&ServerSpec::Http(c))
    }

    /// Header names and `${NAME}` templates are saved; no value ever is.
    #[test]
    fn headers_are_saved_by_name_and_template_never_by_value() {
        let text = serde_json::to_string(&http_file()).expect("JSON");
        assert!(text.contains(r#"{"name":"Authorization","value":"Bearer ${TOK}"}"#));
        assert!(text.contains(r#"{"name":"X-Api-Key","value":null}"#));
        assert!(
            !text.contains("s3cr3t") && !text.contains("k3y-literal"),
            "{text}"
        );
        // Files from before headers were saved still read.
        let old: ServerFile =
            serde_json::from_str(r#"{"http":{"url":"http://127.0.0.1:1/mcp","start":null}}"#)
                .expect("an old file");
        assert!(matches!(old, ServerFile::Http { headers, .. } if headers.is_empty()));
    }

    /// The replay expands the templates from its environment and needs the literal ones again.
    #[test]
    fn replay_headers_come_from_the_environment_and_the_command_line() {
        let file = http_file();
        let env = |n: &str| (n == "TOK").then(|| "fresh".to_owned());
        let err = file.spec_with(&env, &[]).expect_err("X-Api-Key is missing");
        assert!(err.contains("X-Api-Key") && !err.contains("k3y"), "{err}");
        let given = [("x-api-key".to_owned(), "again".to_owned())];
        let ServerSpec::Http(c) = file.spec_with(&env, &given).expect("a spec") else {
            panic!("an HTTP spec");
        };
        assert_eq!(
            c.headers,
            [
                ("Authorization".to_owned(), "Bearer fresh".to_owned()),
                ("x-api-key".to_owned(), "again".to_owned())
            ]
        );
        let unset = |_: &str| None;
        let err = file.spec_with(&unset, &given).expect_err("TOK unset");
        assert!(err.contains("TOK"), "{err}");
    }
}
