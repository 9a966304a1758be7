//! SIGINT and SIGTERM, answered on a thread of their own: a run's main task may be busy for
//! seconds at a time (generating values for a pathological schema), so the handler must not
//! wait for it. [`on_signal`] starts that thread; its handler writes what the run has so far
//! (see [`mcp_chaos::run::live::LiveRun`]), kills the servers' process trees
//! ([`mcp_chaos::transport::process::kill_every_group`]) and exits the process itself.

/// Runs `handler` with the signal's name (`"SIGINT"` or `"SIGTERM"`) on a dedicated thread
/// when the first of them arrives; a second one while it runs is ignored (SIGKILL still
/// stops the process). The signals are caught from the moment this returns: their default
/// action (ending the process at once, leaving the server running) no longer applies.
///
/// # Errors
/// The thread, its small runtime or the signal handlers could not be set up.
pub fn on_signal<F>(handler: F) -> std::io::Result<()>
where
    F: FnOnce(&'static str) + Send + 'static,
{
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut int, mut term) = {
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    std::thread::Builder::new()
        .name("mcp-chaos-signals".into())
        .spawn(move || {
            let name = runtime.block_on(async {
                tokio::select! {
                    _ = int.recv() => "SIGINT",
                    _ = term.recv() => "SIGTERM",
                }
            });
            handler(name);
            // The handler normally exits the process; if it returned, keep the handlers
            // installed (a second signal is ignored rather than killing the run midway).
            loop {
                std::thread::park();
            }
        })?;
    Ok(())
}
