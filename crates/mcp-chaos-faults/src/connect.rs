//! `CONNECT` requests (the forward proxy's tunnels, `https://` through `HTTPS_PROXY`): the
//! fault decided for the request is served before any byte is tunnelled (a refusal status, a
//! delay, a hang, a reset or a close of the client's connection), else a tunnel is opened to
//! the target, which must be loopback (any other target gets 502 Bad Gateway: mcp-chaos never
//! reaches outside the machine). Handed to the server as its [`ConnectHandler`], so that the
//! server does not depend on this module.

use std::net::SocketAddr;
use std::time::Duration;

use http::{Response, StatusCode, Uri};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::body::{ConnAction, FaultBody};
use crate::fault::Fault;
use crate::journal::JournalEntry;
use crate::net::loopback_target;
use crate::server::{ConnectHandler, Ctx, Decision, abort_connection, error_response, hang};

const TUNNEL_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The [`ConnectHandler`] the fake upstream and the forward proxy start their server with:
/// [`serve_connect`], boxed.
pub(crate) const HANDLER: ConnectHandler = |ctx, entry, uri, decision, on_upgrade| {
    Box::pin(serve_connect(ctx, entry, uri, decision, on_upgrade))
};

/// What a `CONNECT` gets.
enum ConnectPlan {
    /// Open the tunnel if the target is loopback; refuse with 502 otherwise.
    Tunnel,
    /// Answer with this (status) fault instead of `200`.
    Refuse(Fault, Option<String>),
    Reset,
    Close,
    Hang,
    Delay(u64),
}

fn connect_plan(fault: &Fault) -> ConnectPlan {
    match fault {
        Fault::Ok { .. } | Fault::PassThrough | Fault::SlowBody { .. } => ConnectPlan::Tunnel,
        Fault::Delay { ms } => ConnectPlan::Delay(*ms),
        Fault::NotFound
        | Fault::Gone
        | Fault::Unauthorized
        | Fault::Forbidden
        | Fault::RateLimited { .. }
        | Fault::ServerError
        | Fault::BadGateway
        | Fault::Unavailable
        | Fault::GatewayTimeout => ConnectPlan::Refuse(fault.clone(), None),
        Fault::Reset | Fault::ResetMidBody { .. } => ConnectPlan::Reset,
        Fault::CloseBeforeHeaders => ConnectPlan::Close,
        Fault::Hang => ConnectPlan::Hang,
        Fault::TruncatedBody { .. }
        | Fault::MalformedJson
        | Fault::WrongContentType
        | Fault::HugeBody { .. } => ConnectPlan::Refuse(
            Fault::BadGateway,
            Some(format!(
                "the {} fault cannot be applied to a CONNECT tunnel; refused with 502",
                fault.name()
            )),
        ),
    }
}

fn connect_target(uri: &Uri) -> Option<(String, u16)> {
    let authority = uri.authority()?;
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    Some((host, authority.port_u16().unwrap_or(443)))
}

async fn open_tunnel(target: Option<&(String, u16)>) -> Result<(TcpStream, SocketAddr), String> {
    let Some((host, port)) = target else {
        return Err("tunnel refused: CONNECT without a host:port authority".to_owned());
    };
    let Some(ip) = loopback_target(host) else {
        return Err(format!(
            "tunnel refused: target {host:?} is not a loopback address"
        ));
    };
    let addr = SocketAddr::new(ip, *port);
    match tokio::time::timeout(TUNNEL_CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Ok(stream)) => Ok((stream, addr)),
        Ok(Err(e)) => Err(format!("tunnel to {addr} failed: {e}")),
        Err(_) => Err(format!("tunnel to {addr} failed: connect timed out")),
    }
}

/// Serves a `CONNECT` request whose body has been read and whose fault has been decided.
/// Records the journal entry (with the fault actually served).
pub(crate) async fn serve_connect(
    ctx: &Ctx,
    entry: JournalEntry,
    uri: &Uri,
    decision: Decision,
    on_upgrade: OnUpgrade,
) -> Response<FaultBody> {
    let target = connect_target(uri);
    let mut plan = connect_plan(&decision.fault);
    if let ConnectPlan::Delay(ms) = plan {
        ctx.shared.journal.record(entry);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        plan = match connect_plan(&decision.healthy) {
            ConnectPlan::Delay(_) => ConnectPlan::Tunnel,
            other => other,
        };
        return execute(ctx, plan, target.as_ref(), on_upgrade, None).await;
    }
    // Resolve the tunnel first so that the journal records what was really served.
    match plan {
        ConnectPlan::Tunnel => match open_tunnel(target.as_ref()).await {
            Ok((stream, addr)) => {
                let entry = served(entry, Fault::PassThrough, Some(format!("tunnel to {addr}")));
                tunnel(ctx, stream, on_upgrade, entry)
            }
            Err(note) => {
                let entry = served(entry, Fault::BadGateway, Some(note));
                execute(
                    ctx,
                    ConnectPlan::Refuse(Fault::BadGateway, None),
                    target.as_ref(),
                    on_upgrade,
                    entry,
                )
                .await
            }
        },
        ConnectPlan::Refuse(fault, note) => {
            let entry = served(entry, fault.clone(), note);
            execute(
                ctx,
                ConnectPlan::Refuse(fault, None),
                target.as_ref(),
                on_upgrade,
                entry,
            )
            .await
        }
        other => {
            let entry = Some(entry);
            execute(ctx, other, target.as_ref(), on_upgrade, entry).await
        }
    }
}

/// Sets what was served on a journal entry.
fn served(mut entry: JournalEntry, fault: Fault, note: Option<String>) -> Option<JournalEntry> {
    entry.failure = fault.is_failure();
    entry.fault = fault;
    entry.note = note;
    Some(entry)
}

/// Carries out a plan, first recording `entry` if given.
async fn execute(
    ctx: &Ctx,
    plan: ConnectPlan,
    target: Option<&(String, u16)>,
    on_upgrade: OnUpgrade,
    entry: Option<JournalEntry>,
) -> Response<FaultBody> {
    if let ConnectPlan::Tunnel = plan {
        return match open_tunnel(target).await {
            Ok((stream, _)) => tunnel(ctx, stream, on_upgrade, entry),
            Err(note) => {
                if let Some(e) = entry {
                    ctx.shared.journal.record(e);
                }
                error_response(&Fault::BadGateway, &ctx.shared.canaries, Some(&note))
            }
        };
    }
    if let Some(e) = entry {
        ctx.shared.journal.record(e);
    }
    match plan {
        ConnectPlan::Refuse(fault, note) => {
            error_response(&fault, &ctx.shared.canaries, note.as_deref())
        }
        ConnectPlan::Reset => abort_connection(ctx, ConnAction::Reset).await,
        ConnectPlan::Close => abort_connection(ctx, ConnAction::Close).await,
        ConnectPlan::Hang => hang(ctx).await,
        // Handled by the caller / above.
        ConnectPlan::Delay(_) | ConnectPlan::Tunnel => {
            error_response(&Fault::BadGateway, &ctx.shared.canaries, None)
        }
    }
}

/// Answers `200` and hands the connection driver the job of relaying bytes between the
/// upgraded client connection and `origin` once the response has been written.
fn tunnel(
    ctx: &Ctx,
    mut origin: TcpStream,
    on_upgrade: OnUpgrade,
    entry: Option<JournalEntry>,
) -> Response<FaultBody> {
    if let Some(e) = entry {
        ctx.shared.journal.record(e);
    }
    let job = async move {
        if let Ok(upgraded) = on_upgrade.await {
            let mut client = TokioIo::new(upgraded);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut origin).await;
        }
    };
    let _ = ctx.control.send(ConnAction::Then(Box::pin(job)));
    let mut response = Response::new(FaultBody::empty());
    *response.status_mut() = StatusCode::OK;
    response
}
