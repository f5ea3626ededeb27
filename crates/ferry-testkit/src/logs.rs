//! Log output kept in memory, so a test can read what was logged.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Everything written to it or to any of its clones, kept in memory. Give
/// `move || captured.clone()` to `tracing_subscriber::fmt().with_writer(..)`, then read
/// [`text`](Self::text).
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// What was written so far, which must be UTF-8.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("the log buffer").clone()).expect("UTF-8 logs")
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .expect("the log buffer")
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
