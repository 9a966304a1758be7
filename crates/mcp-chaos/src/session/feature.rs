//! The requests of the features phase (resources, prompts, completion, logging, pagination,
//! capability gating): what each asks and what the server owes it, for the oracle.

use serde_json::Value;

/// A request of the features phase ([`crate::run`]'s `features` module), and what the server
/// owes it.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureProbe {
    /// One page of a list: `resources/list`, `resources/templates/list` or `prompts/list`.
    ListPage {
        /// The list method: `resources/list`, `resources/templates/list` or `prompts/list`.
        method: &'static str,
        /// The page's number, from 1.
        page: usize,
        /// The cursor sent (`None` for the first page).
        cursor: Option<String>,
        /// The cursors of the earlier pages of this listing, in order (a `nextCursor` equal to
        /// one of them, or to `cursor`, leads back: a cursor loop).
        earlier: Vec<String>,
    },
    /// A list request with a cursor the server never issued (SHOULD get -32602).
    InvalidCursor {
        /// The list method the cursor was sent to.
        method: &'static str,
        /// The made-up cursor sent in `params.cursor`.
        cursor: String,
        /// Whether the server paginated this list (gave a `nextCursor`): one that never does
        /// may ignore a cursor.
        paginated: bool,
    },
    /// `resources/read` of a listed resource, or of a URI expanded from a listed template.
    Read {
        /// The URI read: a listed resource's `uri`, or one expanded from a template.
        uri: String,
        /// The template it was expanded from, if any.
        template: Option<String>,
    },
    /// `resources/read` of a URI the server did not list and no template of it matches.
    ReadUnknown {
        /// The made-up URI read (`server/resources` §Error Handling: owed an error).
        uri: String,
    },
    /// `prompts/get` of a listed prompt with generated arguments.
    GetPrompt {
        /// The listed prompt's `name`.
        name: String,
        /// The arguments sent (a string per argument).
        arguments: Value,
        /// Whether the values are hostile strings (only survival and leaks are judged).
        hostile: bool,
    },
    /// `prompts/get` of a listed prompt without one of its required arguments (SHOULD get
    /// -32602).
    PromptMissingArgument {
        /// The listed prompt's `name`.
        name: String,
        /// The required argument left out.
        argument: String,
        /// The arguments sent (an object, a string per argument, without `argument`).
        arguments: Value,
    },
    /// `prompts/get` of a prompt the server did not list (SHOULD get -32602).
    UnknownPrompt {
        /// The made-up prompt name sent in `params.name`.
        name: String,
    },
    /// `completion/complete` of a listed prompt's argument or a listed template's variable.
    Complete {
        /// The `ref` sent (`ref/prompt` or `ref/resource`).
        reference: Value,
        /// The name of the argument (or template variable) completed, sent as
        /// `argument.name`.
        argument: String,
    },
    /// `completion/complete` whose `ref/prompt` names no listed prompt (SHOULD get -32602).
    CompleteUnknownPrompt {
        /// The made-up prompt name sent as `ref.name`.
        name: String,
    },
    /// `logging/setLevel` with one of the eight levels (a server with `logging` accepts it).
    SetLevel {
        /// The level sent, one of the RFC 5424 eight (`debug` … `emergency`).
        level: &'static str,
    },
    /// `logging/setLevel` with a level that is none of the eight (SHOULD get -32602).
    InvalidLevel {
        /// The made-up level string sent.
        level: &'static str,
    },
    /// `resources/subscribe` (or `resources/unsubscribe`) of a URI, where the server advertises
    /// `resources.subscribe` (up to 2025-11-25): a listed resource owes a result, an unknown
    /// URI an error.
    Subscribe {
        /// The URI sent in `params.uri`.
        uri: String,
        /// `resources/unsubscribe` rather than `resources/subscribe`.
        unsubscribe: bool,
        /// Whether the server listed it (false: a URI it did not list and no template of it
        /// matches).
        listed: bool,
    },
    /// A request of a method behind a capability the server did not advertise (owes -32601).
    Gated {
        /// The method sent, e.g. `prompts/list` to a server without `prompts`.
        method: &'static str,
        /// The capability (a key of `ServerCapabilities`) it needs.
        capability: &'static str,
    },
}

impl FeatureProbe {
    /// The method the probe sends.
    pub fn method(&self) -> &'static str {
        match self {
            FeatureProbe::ListPage { method, .. }
            | FeatureProbe::InvalidCursor { method, .. }
            | FeatureProbe::Gated { method, .. } => method,
            FeatureProbe::Read { .. } | FeatureProbe::ReadUnknown { .. } => "resources/read",
            FeatureProbe::Subscribe {
                unsubscribe: false, ..
            } => "resources/subscribe",
            FeatureProbe::Subscribe {
                unsubscribe: true, ..
            } => "resources/unsubscribe",
            FeatureProbe::GetPrompt { .. }
            | FeatureProbe::PromptMissingArgument { .. }
            | FeatureProbe::UnknownPrompt { .. } => "prompts/get",
            FeatureProbe::Complete { .. } | FeatureProbe::CompleteUnknownPrompt { .. } => {
                "completion/complete"
            }
            FeatureProbe::SetLevel { .. } | FeatureProbe::InvalidLevel { .. } => "logging/setLevel",
        }
    }

    /// The feature it exercises, for the summary: `resources`, `prompts`, `completions`,
    /// `logging` or `gating`.
    pub fn feature(&self) -> &'static str {
        match self {
            FeatureProbe::Gated { .. } => "gating",
            other => match other.method() {
                "prompts/list" | "prompts/get" => "prompts",
                "completion/complete" => "completions",
                "logging/setLevel" => "logging",
                _ => "resources",
            },
        }
    }

    /// A short human label, e.g. `resources/read mcp-chaos://fixture/readme`.
    pub fn label(&self) -> String {
        let short = |s: &str| crate::wire::excerpt(s.as_bytes(), 80);
        match self {
            FeatureProbe::ListPage { method, page, .. } => format!("{method} page {page}"),
            FeatureProbe::InvalidCursor { method, .. } => {
                format!("{method} with an invalid cursor")
            }
            FeatureProbe::Read { uri, .. } => format!("resources/read {}", short(uri)),
            FeatureProbe::Subscribe {
                uri,
                unsubscribe: _,
                listed,
            } => format!(
                "{} {}{}",
                self.method(),
                if *listed { "" } else { "of unknown URI " },
                short(uri)
            ),
            FeatureProbe::ReadUnknown { uri } => {
                format!("resources/read of unknown URI {}", short(uri))
            }
            FeatureProbe::GetPrompt {
                name,
                hostile: false,
                ..
            } => format!("prompts/get {}", short(name)),
            FeatureProbe::GetPrompt {
                name,
                hostile: true,
                ..
            } => format!("prompts/get {} with hostile arguments", short(name)),
            FeatureProbe::PromptMissingArgument { name, argument, .. } => format!(
                "prompts/get {} without its required argument {}",
                short(name),
                short(argument)
            ),
            FeatureProbe::UnknownPrompt { name } => {
                format!("prompts/get of unknown prompt {:?}", short(name))
            }
            FeatureProbe::Complete {
                reference,
                argument,
            } => {
                let what = reference
                    .get("name")
                    .or_else(|| reference.get("uri"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                format!("completion/complete {} {}", short(what), short(argument))
            }
            FeatureProbe::CompleteUnknownPrompt { name } => {
                format!("completion/complete of unknown prompt {:?}", short(name))
            }
            FeatureProbe::SetLevel { level } => format!("logging/setLevel {level}"),
            FeatureProbe::InvalidLevel { level } => {
                format!("logging/setLevel with invalid level {level:?}")
            }
            FeatureProbe::Gated { method, capability } => {
                format!("{method} without the {capability} capability")
            }
        }
    }
}
