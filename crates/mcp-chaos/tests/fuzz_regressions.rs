//! Regression tests for what the fuzz targets in `fuzz/` found, each with its minimised input.
//! They use only the stable public API, so `cargo test` runs them without nightly or the
//! `arbitrary` feature.

use mcp_chaos::wire::{self, Message, RequestId, ResponseId};
use mcp_chaos_fixture::{Action, FetchOutcome, Fixture};

/// Sends `frame` to `fixture`, completes every upstream fetch with a 200 JSON record, and
/// returns the frames written, in order.
fn written(fixture: &mut Fixture, frame: &[u8]) -> Vec<Vec<u8>> {
    let mut actions = fixture.handle(frame);
    let mut out = Vec::new();
    let mut i = 0;
    while i < actions.len() {
        match actions[i].clone() {
            Action::Write(bytes) => out.push(bytes),
            Action::Fetch { call, .. } => {
                let outcome = FetchOutcome::Response {
                    status: 200,
                    content_type: Some("application/json".into()),
                    retry_after: None,
                    body: br#"{"data":{"name":"widget","value":1.5}}"#.to_vec(),
                };
                actions.extend(fixture.complete(call, &outcome));
            }
            other => panic!("unexpected {other:?}"),
        }
        i += 1;
    }
    out
}

/// Found by `mcp_request` (crash-197afcd6): a batch holding a call of an upstream tool got
/// the answers of its other elements in an array, and the tool's answer later in a frame of
/// its own. JSON-RPC 2.0 §6 puts every response of a batch in one array.
#[test]
fn a_batch_with_an_upstream_tool_call_is_answered_in_one_array() {
    let mut fixture = Fixture::new(&[]).with_upstream("http://127.0.0.1:9/upstream");
    let frame = br#"[{"jsonrpc":"2.0","id":715,"method":"tools/call","params":{"name":"get_record","arguments":{"id":17}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let out = written(&mut fixture, frame);
    let text: Vec<_> = out.iter().map(|f| String::from_utf8_lossy(f)).collect();
    assert_eq!(out.len(), 1, "one frame, not {text:?}");
    let Ok(Message::Batch(batch)) = wire::parse(&out[0]) else {
        panic!("not a batch answer: {}", String::from_utf8_lossy(&out[0]));
    };
    let mut ids: Vec<ResponseId> = batch
        .items()
        .iter()
        .filter_map(|item| match item {
            wire::BatchItem::Valid(Message::Response(r)) => Some(r.id().clone()),
            _ => None,
        })
        .collect();
    ids.sort_by_key(ToString::to_string);
    assert_eq!(
        ids,
        vec![
            ResponseId::Id(RequestId::from(2)),
            ResponseId::Id(RequestId::from(715))
        ]
    );
    // The minimised input: the batch of that one call alone.
    let alone = br#"[{"jsonrpc":"2.0","id":715,"method":"tools/call","params":{"name":"get_record","arguments":{"id":17}}}]"#;
    let out = written(&mut fixture, alone);
    assert!(
        matches!(wire::parse(&out[0]), Ok(Message::Batch(_))) && out.len() == 1,
        "{out:?}"
    );
}
