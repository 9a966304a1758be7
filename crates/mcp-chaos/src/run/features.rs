//! The features phase: the server features beyond tools, for every capability the server
//! advertised, each request followed by the liveness check as tool calls are.
//!
//! - **Resources** (`resources`): `resources/list` and `resources/templates/list` followed
//!   through `nextCursor` (at most [`MAX_PAGES`] pages; a cursor that leads back is judged and
//!   ends the listing), an invalid cursor for each, `resources/read` of the first
//!   [`MAX_READS`] listed resources and of a URI expanded from each of the first
//!   [`MAX_TEMPLATES`] templates (RFC 6570, every variable `1`), and of an unknown URI.
//! - **Prompts** (`prompts`): `prompts/list` through its cursors, an invalid cursor, and for
//!   each of the first [`MAX_PROMPTS`] prompts a `prompts/get` with a plain value for every
//!   argument, one with hostile values, one without its first required argument; and an
//!   unknown prompt.
//! - **Completion** (`completions`, 2025-03-26 on): `completion/complete` of the first listed
//!   prompt argument and template variable, and of an unknown prompt.
//! - **Logging** (`logging`, handshake versions), first: `logging/setLevel` with each of the
//!   eight levels from `emergency` down to `debug`, then an invalid one; the server then logs
//!   everything while the other features run, and every `notifications/message` is scanned
//!   by the leak oracle.
//! - **Capability gating**: for each selected feature the server did not advertise, one request
//!   of its method (`resources/list`, `prompts/list`, `completion/complete`,
//!   `logging/setLevel`), which owes -32601.
//!
//! - **Upstream faults** (with a fake upstream): a `resources/read` or `prompts/get` whose
//!   handler made an upstream request (the fake upstream's journal gained an entry while it
//!   ran) is sent again once per fault profile (`--faults`), every upstream request failing,
//!   and judged as a tool call under a fault is: a JSON-RPC error is the right answer (these
//!   results have no `isError`), its message must say what failed and whether a retry can
//!   help, and must not leak; an empty `contents` or `messages` success is masking
//!   (`error-masked-as-success`). Per request, the reach goes into `summary.features.upstream`.
//!
//! URIs sent never leave the machine: a listed resource or an expanded template whose URI has a
//! network scheme (`http`, `https`, `ws`, `git`, ...) or `file` with a host off loopback is not
//! read ([`sendable_uri`]).

use mcp_chaos_faults::{Fault, ScopedFault};
use serde_json::{Value, json};

use mcp_chaos_model::report::REACH_KEPT;
pub use mcp_chaos_model::report::{FeatureCounts, FeatureReach};

use super::{Campaign, Event};
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, FeatureProbe, Probe};

/// Pages of one list followed at most.
pub const MAX_PAGES: usize = 50;
/// Listed resources read at most.
pub const MAX_READS: usize = 16;
/// Templates expanded and read at most.
pub const MAX_TEMPLATES: usize = 8;
/// Prompts got at most.
pub const MAX_PROMPTS: usize = 16;

/// The URI read as one the server does not have.
pub const UNKNOWN_URI: &str = "mcp-chaos-unknown:///no-such-resource";
/// The prompt name used as one the server does not have.
pub const UNKNOWN_PROMPT: &str = "mcp_chaos_no_such_prompt";
/// The cursor sent as one the server never issued.
pub const INVALID_CURSOR: &str = "mcp-chaos-invalid-cursor";
/// The level sent as one that is none of the eight.
pub const INVALID_LEVEL: &str = "mcp-chaos-verbose";
/// The eight log levels, from the protocol module's one list.
pub use crate::protocol::LOG_LEVELS;
/// The hostile value of every argument of a hostile `prompts/get`: a NUL, quotes, template and
/// markup syntax, SQL and a right-to-left override.
pub const HOSTILE_VALUE: &str =
    "mcp-chaos \u{0} '\"`; DROP TABLE prompts; -- {{name}} ${name} <script>x</script> \u{202e}";

/// Which features the phase exercises (`--features`, `--skip-resources`, `--skip-prompts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSelection {
    /// Resources, resource templates, their lists.
    pub resources: bool,
    /// Prompts and their list.
    pub prompts: bool,
    /// `completion/complete`.
    pub completions: bool,
    /// `logging/setLevel`.
    pub logging: bool,
}

impl FeatureSelection {
    /// Every feature.
    pub const ALL: FeatureSelection = FeatureSelection {
        resources: true,
        prompts: true,
        completions: true,
        logging: true,
    };
    /// None: the phase does nothing.
    pub const NONE: FeatureSelection = FeatureSelection {
        resources: false,
        prompts: false,
        completions: false,
        logging: false,
    };

    /// Whether any feature is selected.
    pub fn any(self) -> bool {
        self.resources || self.prompts || self.completions || self.logging
    }

    /// Parses a `--features` list: comma-separated `resources`, `prompts`, `completions`,
    /// `logging`, or `all` / `none`.
    ///
    /// # Errors
    /// The unknown name, in a sentence listing the known ones.
    pub fn parse(list: &str) -> Result<FeatureSelection, String> {
        let mut out = FeatureSelection::NONE;
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "all" => out = FeatureSelection::ALL,
                "none" => {}
                "resources" => out.resources = true,
                "prompts" => out.prompts = true,
                "completions" | "completion" => out.completions = true,
                "logging" => out.logging = true,
                other => {
                    return Err(format!(
                        "unknown feature {other:?}; known: resources, prompts, completions, logging, all, none"
                    ));
                }
            }
        }
        Ok(out)
    }
}

impl Default for FeatureSelection {
    fn default() -> FeatureSelection {
        FeatureSelection::ALL
    }
}

/// The probe and params that send a [`FeatureReach`]'s request again (the plain prompt
/// arguments).
trait Resend {
    /// The probe and its `params`.
    fn request(&self) -> (FeatureProbe, Value);
}

impl Resend for FeatureReach {
    fn request(&self) -> (FeatureProbe, Value) {
        if self.method == "prompts/get" {
            let arguments = self.arguments.clone().unwrap_or_else(|| json!({}));
            (
                FeatureProbe::GetPrompt {
                    name: self.target.clone(),
                    arguments: arguments.clone(),
                    hostile: false,
                },
                json!({"name": self.target, "arguments": arguments}),
            )
        } else {
            (
                FeatureProbe::Read {
                    uri: self.target.clone(),
                    template: self.template.clone(),
                },
                json!({"uri": self.target}),
            )
        }
    }
}

/// What the features phase notes in its counts ([`FeatureCounts`], a report type of
/// `mcp-chaos-model`): a request sent, and whether a read or prompt reached the upstream.
trait Counting {
    /// Notes a request of `probe` (a `resources/read` or `prompts/get`; others are ignored)
    /// that made upstream requests to `paths` (none: it did not reach the upstream).
    fn note_reach(&mut self, probe: &FeatureProbe, paths: &[&str], faulted: bool);
    /// Counts a request of `probe` under its feature.
    fn count(&mut self, probe: &FeatureProbe);
}

impl Counting for FeatureCounts {
    fn note_reach(&mut self, probe: &FeatureProbe, paths: &[&str], faulted: bool) {
        let (method, target, template, arguments) = match probe {
            FeatureProbe::Read { uri, template } => ("resources/read", uri, template.clone(), None),
            FeatureProbe::GetPrompt {
                name,
                arguments,
                hostile: false,
            } => ("prompts/get", name, None, Some(arguments)),
            _ => return,
        };
        let i = match self
            .upstream
            .iter()
            .position(|r| r.method == method && &r.target == target)
        {
            Some(i) => i,
            None => {
                self.upstream.push(FeatureReach {
                    method,
                    target: target.clone(),
                    template,
                    arguments: None,
                    reached: false,
                    requests_tried: 0,
                    requests_reached: 0,
                    faults: 0,
                    paths: Vec::new(),
                });
                self.upstream.len() - 1
            }
        };
        let r = &mut self.upstream[i];
        r.requests_tried += 1;
        r.faults += u64::from(faulted);
        if paths.is_empty() {
            return;
        }
        r.reached = true;
        r.requests_reached += 1;
        if r.arguments.is_none() {
            r.arguments = arguments.cloned();
        }
        for path in paths {
            if r.paths.len() < REACH_KEPT && !r.paths.iter().any(|p| p == path) {
                r.paths.push((*path).to_owned());
            }
        }
    }

    fn count(&mut self, probe: &FeatureProbe) {
        match probe.feature() {
            "prompts" => self.prompts += 1,
            "completions" => self.completions += 1,
            "logging" => self.logging += 1,
            "gating" => self.gating += 1,
            _ => self.resources += 1,
        }
    }
}

/// Whether `capabilities` (a `ServerCapabilities` object) advertises `capability`: its key is
/// present and neither `null` nor `false` (the oracle's rule,
/// [`crate::oracle::error_codes::advertised`]).
pub fn advertised(capabilities: &Value, capability: &str) -> bool {
    crate::oracle::error_codes::advertised(Some(capabilities), capability)
}

/// `template` (RFC 6570) with every variable set to `value`: simple (`{x}`), reserved
/// (`{+x}`), fragment (`{#x}`), label (`{.x}`), path (`{/x}`), path-parameter (`{;x}`), query
/// (`{?x,y}`) and continuation (`{&x}`) expressions; prefix (`:n`) and explode (`*`) modifiers
/// are dropped. `None` for an unterminated expression.
pub fn expand_template(template: &str, value: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}')? + start;
        let expr = &rest[start + 1..end];
        let (op, vars) = match expr.chars().next() {
            Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &expr[1..]),
            _ => (None, expr),
        };
        let names: Vec<&str> = vars
            .split(',')
            .map(|v| v.split(':').next().unwrap_or(v).trim_end_matches('*'))
            .filter(|v| !v.is_empty())
            .collect();
        let named = |sep: &str, first: &str| {
            let parts: Vec<String> = names.iter().map(|n| format!("{n}={value}")).collect();
            format!("{first}{}", parts.join(sep))
        };
        let plain = |sep: &str| vec![value; names.len()].join(sep);
        let expanded = match op {
            None | Some('+') => plain(","),
            Some('#') => format!("#{}", plain(",")),
            Some('.') => format!(".{}", plain(".")),
            Some('/') => format!("/{}", plain("/")),
            Some(';') => named(";", ";"),
            Some('?') => named("&", "?"),
            _ => named("&", "&"),
        };
        out += &expanded;
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// The variable names of an RFC 6570 template, in order.
pub fn template_variables(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let expr =
            rest[start + 1..start + len].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for v in expr.split(',') {
            let name = v.split(':').next().unwrap_or(v).trim_end_matches('*');
            if !name.is_empty() {
                out.push(name.to_owned());
            }
        }
        rest = &rest[start + len + 1..];
    }
    out
}

/// Schemes whose authority is a network host.
const NETWORK_SCHEMES: &[&str] = &[
    "http", "https", "ws", "wss", "ftp", "ftps", "sftp", "ssh", "git", "smb", "ldap", "ldaps",
    "telnet", "rtsp", "nntp", "gopher", "s3", "gs",
];

/// Whether reading `uri` keeps mcp-chaos's requests on this machine: a network scheme
/// (`NETWORK_SCHEMES`) or `file` only with a loopback (or empty) host
/// ([`crate::generate::is_safe_str`]); any other scheme (`mcp-chaos://`, `demo://`, ...) names a
/// server's own resources, whose authority is no host.
pub fn sendable_uri(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return true;
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme == "file" || NETWORK_SCHEMES.contains(&scheme.as_str()) {
        crate::generate::is_safe_str(uri)
    } else {
        // The rest of the URI may still carry a URL (`x://a?next=https://...`).
        let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
        crate::generate::is_safe_str(rest.split_once('/').map_or("", |(_, p)| p))
    }
}

/// The text of a template before its first expression (what every URI it matches starts with).
fn literal_prefix(template: &str) -> &str {
    template.split('{').next().unwrap_or_default()
}

/// A listed prompt: its name and arguments (`name`, `required`).
struct Prompt {
    name: String,
    arguments: Vec<(String, bool)>,
}

fn prompt_of(value: &Value) -> Option<Prompt> {
    let name = value.get("name")?.as_str()?.to_owned();
    let arguments = value
        .get("arguments")
        .and_then(Value::as_array)
        .map(|args| {
            args.iter()
                .filter_map(|a| {
                    let name = a.get("name")?.as_str()?.to_owned();
                    let required = a.get("required").and_then(Value::as_bool) == Some(true);
                    Some((name, required))
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Prompt { name, arguments })
}

impl Campaign<'_> {
    /// The features phase (see the module docs) for the features in `selection`.
    pub(super) async fn features_phase(&mut self, selection: FeatureSelection) {
        let capabilities = self
            .negotiated
            .as_ref()
            .map_or(Value::Null, |n| n.capabilities.clone());
        let version = self.context().version;
        // First, so that the server logs at `debug` (the last level set) while the other
        // features run: its log notifications are scanned for leaks. logging/setLevel does
        // not exist in 2026-07-28.
        if selection.logging && version.rules().set_level {
            if advertised(&capabilities, "logging") {
                for level in LOG_LEVELS.into_iter().rev() {
                    if self.gave_up {
                        return;
                    }
                    self.feature(
                        FeatureProbe::SetLevel { level },
                        Some(json!({"level": level})),
                    )
                    .await;
                }
                self.feature(
                    FeatureProbe::InvalidLevel {
                        level: INVALID_LEVEL,
                    },
                    Some(json!({"level": INVALID_LEVEL})),
                )
                .await;
            } else {
                self.gated(
                    "logging/setLevel",
                    "logging",
                    Some(json!({"level": "info"})),
                )
                .await;
            }
        }
        let mut templates = None;
        if selection.resources {
            if advertised(&capabilities, "resources") {
                templates = Some(self.resources_probes().await);
            } else {
                self.gated("resources/list", "resources", None).await;
            }
        }
        let mut prompts = Vec::new();
        if selection.prompts {
            if advertised(&capabilities, "prompts") {
                prompts = self.prompt_probes().await;
            } else {
                self.gated("prompts/list", "prompts", None).await;
            }
        }
        // 2024-11-05 has no completions capability: whether the server completes is unknown.
        if selection.completions && version >= ProtocolVersion::V2025_03_26 {
            if advertised(&capabilities, "completions") {
                self.completion_probes(&prompts, templates).await;
            } else {
                let params = json!({
                    "ref": {"type": "ref/prompt", "name": UNKNOWN_PROMPT},
                    "argument": {"name": "a", "value": ""}
                });
                self.gated("completion/complete", "completions", Some(params))
                    .await;
            }
        }
        let profiles = self.config.faults.faults.clone();
        self.feature_fault_phase(&profiles).await;
    }

    /// Sends each `resources/read` and `prompts/get` whose handler reached the fake upstream
    /// once more under each of `profiles`, every upstream request failing (with a fake
    /// upstream only).
    async fn feature_fault_phase(&mut self, profiles: &[Fault]) {
        if self.injectors.is_none() || profiles.is_empty() {
            return;
        }
        let reached: Vec<FeatureReach> = self
            .summary
            .features
            .upstream
            .iter()
            .filter(|r| r.reached)
            .cloned()
            .collect();
        for target in reached {
            for fault in profiles {
                if self.gave_up {
                    return;
                }
                let (probe, params) = target.request();
                let scoped = ScopedFault::every(fault.clone());
                self.feature_under(probe, Some(params), Some(&scoped)).await;
            }
        }
    }

    /// Sends one feature request, judges it and checks liveness after it (as
    /// [`Campaign::step`] does for the other probes).
    pub(super) async fn feature(
        &mut self,
        probe: FeatureProbe,
        params: Option<Value>,
    ) -> Option<Exchange> {
        self.feature_under(probe, params, None).await
    }

    /// [`Campaign::feature`] with the fake upstream serving `fault` for the request (healthy
    /// when `None`); a `resources/read` or `prompts/get` notes its upstream reach, and under a
    /// fault the exchange records it for the oracle.
    async fn feature_under(
        &mut self,
        probe: FeatureProbe,
        params: Option<Value>,
        fault: Option<&ScopedFault>,
    ) -> Option<Exchange> {
        if self.gave_up {
            return None;
        }
        // The run's budget (`--budget-ms`): no request starts once it is spent.
        let sent = self.summary.features.sent();
        if self.cut_by_budget("features phase", 0, usize::from(sent == 0)) {
            return None;
        }
        let label = match fault {
            Some(f) => format!("{} under {}", probe.label(), f.fault().name()),
            None => probe.label(),
        };
        self.shared.emit(&Event::Step { label: &label });
        self.wedge.started += 1;
        if self.session.is_none() && !self.restart("no server running").await {
            return None;
        }
        self.summary.features.count(&probe);
        let method = probe.method();
        if let (Some(inj), Some(fault)) = (&self.injectors, fault) {
            inj.install(fault);
        }
        let marks = self.injectors.as_ref().map(super::faults::Injectors::mark);
        let session = self.session.as_mut()?;
        let mut ex = session
            .request(Probe::Feature(probe.clone()), method, params)
            .await;
        if let (Some(inj), Some(marks)) = (&self.injectors, &marks) {
            let entries = inj.since(marks);
            if fault.is_some() {
                inj.heal();
            }
            if let Some(fault) = fault {
                ex.fault = Some(super::faults::context(fault, &entries));
            }
            let paths: Vec<&str> = entries
                .iter()
                .map(mcp_chaos_faults::JournalEntry::path)
                .collect();
            self.summary
                .features
                .note_reach(&probe, &paths, fault.is_some());
        }
        self.record(&ex);
        self.check_liveness(&ex).await;
        Some(ex)
    }

    async fn gated(
        &mut self,
        method: &'static str,
        capability: &'static str,
        params: Option<Value>,
    ) {
        self.feature(FeatureProbe::Gated { method, capability }, params)
            .await;
    }

    /// Every item of a list (`key` in each page's result), following `nextCursor` for at most
    /// [`MAX_PAGES`] pages and stopping at a cursor that leads back; then an invalid cursor.
    async fn list_all(&mut self, method: &'static str, key: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut earlier: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut paginated = false;
        for page in 1..=MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let probe = FeatureProbe::ListPage {
                method,
                page,
                cursor: cursor.clone(),
                earlier: earlier.clone(),
            };
            let Some(ex) = self.feature(probe, params).await else {
                break;
            };
            let Some(result) = ex.response().and_then(|r| r.result()) else {
                break;
            };
            if let Some(page_items) = result.get(key).and_then(Value::as_array) {
                items.extend(page_items.iter().cloned());
            }
            // An empty string is a cursor too (2026-07-28 says so outright).
            let Some(next) = result.get("nextCursor").and_then(Value::as_str) else {
                break;
            };
            paginated = true;
            let next = next.to_owned();
            if let Some(c) = cursor.take() {
                earlier.push(c);
            }
            if earlier.contains(&next) {
                // A loop: judged on this exchange; following it would never end.
                break;
            }
            cursor = Some(next);
        }
        self.feature(
            FeatureProbe::InvalidCursor {
                method,
                cursor: INVALID_CURSOR.into(),
                paginated,
            },
            Some(json!({"cursor": INVALID_CURSOR})),
        )
        .await;
        items
    }

    /// The resource probes; returns the listed templates' `uriTemplate`s (for completion).
    async fn resources_probes(&mut self) -> Vec<String> {
        let resources = self.list_all("resources/list", "resources").await;
        let templates = self
            .list_all("resources/templates/list", "resourceTemplates")
            .await;
        self.summary.features.resources_listed = resources.len() as u64;
        self.summary.features.templates_listed = templates.len() as u64;
        let uris: Vec<String> = resources
            .iter()
            .filter_map(|r| r.get("uri").and_then(Value::as_str))
            .filter(|u| sendable_uri(u))
            .take(MAX_READS)
            .map(str::to_owned)
            .collect();
        for uri in uris {
            self.feature(
                FeatureProbe::Read {
                    uri: uri.clone(),
                    template: None,
                },
                Some(json!({"uri": uri})),
            )
            .await;
        }
        let templates: Vec<String> = templates
            .iter()
            .filter_map(|t| t.get("uriTemplate").and_then(Value::as_str))
            .map(str::to_owned)
            .collect();
        for template in templates.iter().take(MAX_TEMPLATES) {
            let Some(uri) = expand_template(template, "1") else {
                continue;
            };
            if !sendable_uri(&uri) {
                continue;
            }
            self.feature(
                FeatureProbe::Read {
                    uri: uri.clone(),
                    template: Some(template.clone()),
                },
                Some(json!({"uri": uri})),
            )
            .await;
        }
        // A template that could match the unknown URI (a bare `{+uri}`) makes "unknown"
        // unknowable.
        let listed = resources
            .iter()
            .any(|r| r.get("uri").and_then(Value::as_str) == Some(UNKNOWN_URI));
        let unknown = !listed
            && !templates
                .iter()
                .any(|t| UNKNOWN_URI.starts_with(literal_prefix(t)));
        let capabilities = self
            .negotiated
            .as_ref()
            .map_or(Value::Null, |n| n.capabilities.clone());
        let subscribes = self.context().version.rules().resource_subscribe
            && capabilities.pointer("/resources/subscribe") == Some(&Value::Bool(true));
        if subscribes {
            let first = resources
                .iter()
                .filter_map(|r| r.get("uri").and_then(Value::as_str))
                .find(|u| sendable_uri(u))
                .map(str::to_owned);
            if let Some(uri) = first {
                for unsubscribe in [false, true] {
                    self.feature(
                        FeatureProbe::Subscribe {
                            uri: uri.clone(),
                            unsubscribe,
                            listed: true,
                        },
                        Some(json!({"uri": uri})),
                    )
                    .await;
                }
            }
            if unknown {
                self.feature(
                    FeatureProbe::Subscribe {
                        uri: UNKNOWN_URI.into(),
                        unsubscribe: false,
                        listed: false,
                    },
                    Some(json!({"uri": UNKNOWN_URI})),
                )
                .await;
            }
        }
        if unknown {
            self.feature(
                FeatureProbe::ReadUnknown {
                    uri: UNKNOWN_URI.into(),
                },
                Some(json!({"uri": UNKNOWN_URI})),
            )
            .await;
        }
        templates
    }

    /// The prompt probes; returns the listed prompts (for completion).
    async fn prompt_probes(&mut self) -> Vec<Value> {
        let listed = self.list_all("prompts/list", "prompts").await;
        self.summary.features.prompts_listed = listed.len() as u64;
        let prompts: Vec<Prompt> = listed.iter().filter_map(prompt_of).collect();
        for prompt in prompts.iter().take(MAX_PROMPTS) {
            let with = |value: &str| -> Value {
                Value::Object(
                    prompt
                        .arguments
                        .iter()
                        .map(|(n, _)| (n.clone(), json!(value)))
                        .collect(),
                )
            };
            let plain = with("mcp-chaos");
            self.feature(
                FeatureProbe::GetPrompt {
                    name: prompt.name.clone(),
                    arguments: plain.clone(),
                    hostile: false,
                },
                Some(json!({"name": prompt.name, "arguments": plain})),
            )
            .await;
            if !prompt.arguments.is_empty() {
                let hostile = with(HOSTILE_VALUE);
                self.feature(
                    FeatureProbe::GetPrompt {
                        name: prompt.name.clone(),
                        arguments: hostile.clone(),
                        hostile: true,
                    },
                    Some(json!({"name": prompt.name, "arguments": hostile})),
                )
                .await;
            }
            if let Some((missing, _)) = prompt.arguments.iter().find(|(_, required)| *required) {
                let mut arguments = plain.clone();
                if let Some(map) = arguments.as_object_mut() {
                    map.remove(missing);
                }
                self.feature(
                    FeatureProbe::PromptMissingArgument {
                        name: prompt.name.clone(),
                        argument: missing.clone(),
                        arguments: arguments.clone(),
                    },
                    Some(json!({"name": prompt.name, "arguments": arguments})),
                )
                .await;
            }
        }
        if !prompts.iter().any(|p| p.name == UNKNOWN_PROMPT) {
            self.feature(
                FeatureProbe::UnknownPrompt {
                    name: UNKNOWN_PROMPT.into(),
                },
                Some(json!({"name": UNKNOWN_PROMPT, "arguments": {}})),
            )
            .await;
        }
        listed
    }

    /// The completion probes: the first argument of the first of `prompts` that has one, the
    /// first variable of the first of `templates` that has one (`None` when the resource probes
    /// did not run), and an unknown prompt.
    async fn completion_probes(&mut self, prompts: &[Value], templates: Option<Vec<String>>) {
        let prompt = prompts
            .iter()
            .filter_map(prompt_of)
            .find(|p| !p.arguments.is_empty());
        if let Some(p) = prompt
            && let Some((argument, _)) = p.arguments.first()
        {
            let reference = json!({"type": "ref/prompt", "name": p.name});
            self.complete(reference, argument.clone()).await;
        }
        let template = match templates {
            Some(templates) => templates.iter().find_map(|t| {
                template_variables(t)
                    .into_iter()
                    .next()
                    .map(|v| (t.clone(), v))
            }),
            None => None,
        };
        if let Some((template, variable)) = template {
            let reference = json!({"type": "ref/resource", "uri": template});
            self.complete(reference, variable).await;
        }
        if !prompts
            .iter()
            .any(|p| p.get("name").and_then(Value::as_str) == Some(UNKNOWN_PROMPT))
        {
            self.feature(
                FeatureProbe::CompleteUnknownPrompt {
                    name: UNKNOWN_PROMPT.into(),
                },
                Some(json!({
                    "ref": {"type": "ref/prompt", "name": UNKNOWN_PROMPT},
                    "argument": {"name": "a", "value": ""}
                })),
            )
            .await;
        }
    }

    async fn complete(&mut self, reference: Value, argument: String) {
        let params = json!({"ref": reference, "argument": {"name": argument, "value": ""}});
        self.feature(
            FeatureProbe::Complete {
                reference,
                argument,
            },
            Some(params),
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_every_operator() {
        assert_eq!(
            expand_template("mcp-chaos://fixture/records/{id}", "1").as_deref(),
            Some("mcp-chaos://fixture/records/1")
        );
        assert_eq!(
            expand_template("x://a{/p,q}{?r,s}{&t}{#f}{.e}{;m}", "1").as_deref(),
            Some("x://a/1/1?r=1&s=1&t=1#1.1;m=1")
        );
        assert_eq!(
            expand_template("x://{a:3}/{b*}", "1").as_deref(),
            Some("x://1/1")
        );
        assert_eq!(expand_template("x://{open", "1"), None);
        assert_eq!(
            template_variables("x://{+a}/{b,c:2}{?d*}"),
            ["a", "b", "c", "d"]
        );
        assert_eq!(literal_prefix("file:///{path}"), "file:///");
    }

    #[test]
    fn feature_lists_parse() {
        assert_eq!(FeatureSelection::parse("all"), Ok(FeatureSelection::ALL));
        let only = FeatureSelection::parse("resources, logging").unwrap_or(FeatureSelection::NONE);
        assert!(only.resources && only.logging && !only.prompts && !only.completions);
        assert!(
            !FeatureSelection::parse("none")
                .unwrap_or(FeatureSelection::ALL)
                .any()
        );
        assert!(FeatureSelection::parse("tools").is_err());
    }

    #[test]
    fn hostile_value_is_loopback_safe() {
        assert!(crate::generate::is_safe_str(HOSTILE_VALUE));
        assert!(crate::generate::is_safe_str(UNKNOWN_URI));
        assert!(!crate::generate::is_safe_str("https://example.com/{id}"));
        assert!(sendable_uri("mcp-chaos://fixture/readme"));
        assert!(sendable_uri("demo://resource/static/document/a.md"));
        assert!(sendable_uri("file:///tmp/x") && sendable_uri("http://127.0.0.1:3/x"));
        assert!(!sendable_uri("https://example.com/1"));
        assert!(!sendable_uri("file://fileserver/share/1"));
        assert!(!sendable_uri("x://a/go?next=https://example.com/"));
    }
}
