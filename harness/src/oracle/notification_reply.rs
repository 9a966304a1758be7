//! `reply-to-notification` (MC106): a notification, known or unknown, gets no reply
//! (`basic/index` §Notifications: the receiver MUST NOT send a response).

use super::{Context, finding};
use crate::finding::{Finding, REPLY_TO_NOTIFICATION, Severity};
use crate::session::{Exchange, Probe};
use crate::wire::Message;

fn sent_method(ex: &Exchange) -> String {
    super::response_shape::sent_method(&ex.sent).unwrap_or_else(|| ex.probe.label())
}

/// Judges notification probes: any response received after the notification (other than the
/// fence's own) is a reply to it.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if !matches!(ex.probe, Probe::Notification { .. } | Probe::Initialized) {
        return Vec::new();
    }
    let reply = ex
        .frames()
        .find(|(_, f)| matches!(&f.message, Ok(Message::Response(_)) | Ok(Message::Batch(_))));
    match reply {
        Some((_, frame)) => {
            let mut f = finding(
                &REPLY_TO_NOTIFICATION,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "the server replied to the notification {}; notifications MUST NOT get a response",
                    sent_method(ex)
                ),
            );
            f.response = Some(super::safe_excerpt(&frame.raw));
            vec![f]
        }
        None => Vec::new(),
    }
}
