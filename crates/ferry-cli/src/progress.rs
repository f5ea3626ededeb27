//! Progress notifications as a progress bar on stderr (drawn only when stderr is a
//! terminal). The bar steps aside while a question is asked.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ferry_client::Progress;
use ferry_client::ferry_protocol::tasks::Task;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Default)]
struct State {
    bar: Option<ProgressBar>,
    paused: bool,
    last: Option<Progress>,
}

/// The progress bar of the running request.
#[derive(Clone, Default)]
pub struct ProgressUi(Arc<Mutex<State>>);

/// Keeps the bar hidden while a question is on screen; shows it again when dropped.
pub struct Paused(ProgressUi);

impl Drop for Paused {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.paused = false;
        if let Some(p) = s.last.clone() {
            show(&mut s, &p);
        }
    }
}

/// The text next to the bar: "50/100: message".
pub fn describe(p: &Progress) -> String {
    let n = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{}", x as i64)
        } else {
            format!("{x:.2}")
        }
    };
    let amount = match p.total {
        Some(t) => format!("{}/{}", n(p.progress), n(t)),
        None => n(p.progress),
    };
    match &p.message {
        Some(m) => format!("{amount}: {}", crate::term::sanitize(m, false)),
        None => amount,
    }
}

/// "task ID: working: message".
pub fn status_line(task: &Task) -> String {
    let mut line = format!(
        "task {}: {}",
        crate::term::sanitize(&task.task_id, false),
        task.status.as_str()
    );
    if let Some(m) = &task.status_message {
        line.push_str(": ");
        line.push_str(&crate::term::sanitize(m, false));
    }
    line
}

fn show(s: &mut State, p: &Progress) {
    let bar = s.bar.get_or_insert_with(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    match p.fraction() {
        Some(f) => {
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{bar:30.cyan/blue}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_length(1000);
            bar.set_position((f * 1000.0).round() as u64);
        }
        None => {
            bar.set_style(
                ProgressStyle::with_template("{spinner} progress {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
        }
    }
    bar.set_message(describe(p));
}

impl ProgressUi {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Shows one progress report.
    pub fn report(&self, p: Progress) {
        tracing::info!(progress = p.progress, total = ?p.total, message = ?p.message, "progress");
        let mut s = self.lock();
        s.last = Some(p.clone());
        if !s.paused {
            show(&mut s, &p);
        }
    }

    /// Shows a followed task's state as a status line: a spinner with its id, status and
    /// message, unless its message carries progress, which the bar shows instead.
    pub fn task_status(&self, task: &Task) {
        tracing::info!(task = %task.task_id, status = task.status.as_str(), message = ?task.status_message, "task");
        let mut s = self.lock();
        if s.paused || task.status.is_terminal() {
            return;
        }
        if s.last.as_ref().is_some_and(|p| p.fraction().is_some()) {
            return;
        }
        let bar = s.bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(status_line(task));
    }

    /// Hides the bar until the returned guard is dropped.
    pub fn pause(&self) -> Paused {
        let mut s = self.lock();
        s.paused = true;
        if let Some(bar) = s.bar.take() {
            bar.finish_and_clear();
        }
        Paused(self.clone())
    }

    /// Removes the bar for good (the request is over).
    pub fn finish(&self) {
        let mut s = self.lock();
        s.last = None;
        if let Some(bar) = s.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_progress() {
        let p = |progress, total, message: Option<&str>| Progress {
            progress,
            total,
            message: message.map(str::to_owned),
        };
        assert_eq!(describe(&p(50.0, Some(100.0), None)), "50/100");
        assert_eq!(describe(&p(0.5, Some(1.0), Some("half"))), "0.50/1: half");
        assert_eq!(describe(&p(3.0, None, Some("files"))), "3: files");
    }

    #[test]
    fn task_status_lines() {
        let task = Task::new(
            "t-1",
            ferry_client::ferry_protocol::tasks::TaskStatus::Working,
            "2026-01-01T00:00:00Z",
        )
        .with_status_message("copying\u{1b}[31m");
        assert_eq!(
            status_line(&task),
            "task t-1: working: copying\\u{1b}[31m",
            "control characters are shown escaped"
        );
    }

    #[test]
    fn pausing_hides_and_resumes() {
        let ui = ProgressUi::default();
        ui.report(Progress {
            progress: 1.0,
            total: Some(2.0),
            message: None,
        });
        {
            let _p = ui.pause();
            assert!(ui.lock().bar.is_none());
            ui.report(Progress {
                progress: 2.0,
                total: Some(2.0),
                message: None,
            });
            assert!(ui.lock().bar.is_none());
        }
        assert!(ui.lock().bar.is_some());
        ui.finish();
        assert!(ui.lock().bar.is_none());
    }
}
