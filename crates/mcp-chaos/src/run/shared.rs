//! What the campaigns of one run share. The tool calls of a stdio server can run on a second
//! server process, concurrently with the rest of the campaign (see
//! [`Campaign::side_for_tool_calls`](super::Campaign)); both campaigns then report to the same
//! listener and record into the same findings, so that a finding is deduplicated, journaled and
//! counted once whichever server showed it. Both run on one task (joined, never spawned), so
//! the cells are never borrowed across an `.await`.

use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;

use super::Event;
use crate::finding::Finding;

/// The listener and the findings of a run's campaigns.
pub(super) struct Shared<'a> {
    on_event: RefCell<&'a mut dyn FnMut(&Event<'_>)>,
    store: RefCell<Store>,
    /// Whether a stdio server of this run kept running after its stdin closed
    /// (`stdin-eof-ignored`): later sessions are then killed at once (see `retire`).
    eof_ignored: Cell<bool>,
}

/// The findings recorded so far.
#[derive(Default)]
struct Store {
    /// Distinct findings, in the order first found.
    findings: Vec<Finding>,
    /// Index into `findings` by [`Finding::dedupe_key`].
    seen: HashMap<String, usize>,
    /// Every finding recorded, as an index into `findings`, repeats included (scenario steps
    /// read the findings they produced from it).
    hits: Vec<usize>,
    /// Values to redact from everything reported: secrets, and credentials findings uncovered.
    redact: Vec<String>,
}

impl<'a> Shared<'a> {
    /// A run's shared state: `on_event` hears every event, `redact` are the values known to be
    /// secret at the start.
    pub(super) fn new(on_event: &'a mut dyn FnMut(&Event<'_>), redact: Vec<String>) -> Self {
        Shared {
            on_event: RefCell::new(on_event),
            store: RefCell::new(Store {
                redact,
                ..Store::default()
            }),
            eof_ignored: Cell::new(false),
        }
    }

    /// Tells the listener.
    pub(super) fn emit(&self, event: &Event<'_>) {
        (self.on_event.borrow_mut())(event);
    }

    /// Records `findings`: a new one is kept and told to the listener (redacted with what is
    /// known now, its `redact` holding every value to redact so far), a repeat counted.
    pub(super) fn add(&self, findings: Vec<Finding>) {
        for mut f in findings {
            let shown = {
                let mut store = self.store.borrow_mut();
                let store = &mut *store;
                store.redact.append(&mut f.redact);
                let key = f.dedupe_key();
                if let Some(&at) = store.seen.get(&key) {
                    store.findings[at].occurrences += 1;
                    store.hits.push(at);
                    continue;
                }
                let at = store.findings.len();
                store.seen.insert(key, at);
                store.hits.push(at);
                let mut shown = super::redacted(&f, &store.redact);
                shown.redact.clone_from(&store.redact);
                store.findings.push(f);
                shown
            };
            // Told outside the borrow: a listener may ask for the findings.
            self.emit(&Event::Finding { finding: &shown });
        }
    }

    /// Every distinct finding so far, in the order found (not yet redacted).
    pub(super) fn findings(&self) -> Ref<'_, [Finding]> {
        Ref::map(self.store.borrow(), |s| s.findings.as_slice())
    }

    /// Whether a finding with this invariant code was recorded.
    pub(super) fn has_code(&self, code: &str) -> bool {
        self.store.borrow().findings.iter().any(|f| f.code == code)
    }

    /// How many findings were recorded, repeats included.
    pub(super) fn hits_len(&self) -> usize {
        self.store.borrow().hits.len()
    }

    /// The distinct findings recorded since `from` (a [`Shared::hits_len`]), as indices into
    /// [`Shared::findings`], in the order first recorded.
    pub(super) fn hits_since(&self, from: usize) -> Vec<usize> {
        let store = self.store.borrow();
        let mut out: Vec<usize> = Vec::new();
        for &i in &store.hits[from.min(store.hits.len())..] {
            if !out.contains(&i) {
                out.push(i);
            }
        }
        out
    }

    /// The findings, redacted with every secret the run learned, for the report.
    pub(super) fn take_redacted(&self) -> Vec<Finding> {
        let mut store = self.store.borrow_mut();
        let secrets = std::mem::take(&mut store.redact);
        std::mem::take(&mut store.findings)
            .iter()
            .map(|f| super::redacted(f, &secrets))
            .collect()
    }

    /// Whether a stdio server of the run ignored its stdin closing.
    pub(super) fn eof_ignored(&self) -> bool {
        self.eof_ignored.get()
    }

    /// Remembers that a stdio server of the run ignored its stdin closing; returns whether
    /// this is the first time (two sessions that end at once, the main one and the one running
    /// the tool calls beside it, may both have waited on a server ignoring EOF: only the first
    /// reports it).
    pub(super) fn set_eof_ignored(&self) -> bool {
        !self.eof_ignored.replace(true)
    }
}
