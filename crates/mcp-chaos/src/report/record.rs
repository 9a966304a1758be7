//! `--record DIR`: every frame of a run, one file each, for fuzzing corpora and for reading
//! a transcript by hand. Frames sent go to `DIR/sent/NNNNNN.json`, frames received to
//! `DIR/received/NNNNNN.json` (numbered in order across the run; the bytes exactly as on the
//! wire, without the newline), and `DIR/transcript.jsonl` lists them in order as
//! `{"n", "direction", "probe", "file"}`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::run::Event;
use crate::session::ReceivedItem;

/// Writes the frames of a run into a folder.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    n: u64,
    transcript: std::fs::File,
    error: Option<std::io::Error>,
}

impl Recorder {
    /// Creates `dir/sent`, `dir/received` and `dir/transcript.jsonl`.
    pub fn new(dir: &Path) -> std::io::Result<Recorder> {
        std::fs::create_dir_all(dir.join("sent"))?;
        std::fs::create_dir_all(dir.join("received"))?;
        let transcript = std::fs::File::create(dir.join("transcript.jsonl"))?;
        Ok(Recorder {
            dir: dir.to_owned(),
            n: 0,
            transcript,
            error: None,
        })
    }

    /// Records the frames of an exchange event; other events are ignored. The first I/O error
    /// is kept and returned by [`Recorder::finish`].
    pub fn event(&mut self, event: &Event<'_>) {
        let Event::Exchange { exchange } = event else {
            return;
        };
        let probe = exchange.probe.label();
        let sent = exchange.sent.strip_suffix(b"\n").unwrap_or(&exchange.sent);
        self.write("sent", sent, &probe);
        for item in &exchange.received[exchange.preceding..] {
            if let ReceivedItem::Frame(frame) = &item.item {
                self.write("received", &frame.raw, &probe);
            }
        }
    }

    fn write(&mut self, direction: &str, bytes: &[u8], probe: &str) {
        if self.error.is_some() {
            return;
        }
        self.n += 1;
        let file = format!("{direction}/{:06}.json", self.n);
        let line = json!({"n": self.n, "direction": direction, "probe": probe, "file": file});
        let result = std::fs::write(self.dir.join(&file), bytes)
            .and_then(|()| writeln!(self.transcript, "{line}"));
        if let Err(e) = result {
            self.error = Some(e);
        }
    }

    /// The first error met while recording, if any.
    pub fn finish(self) -> std::io::Result<u64> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.n),
        }
    }
}
