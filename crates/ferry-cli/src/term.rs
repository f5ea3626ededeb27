//! A small prompt layer for the terminal: a line editor, single and multiple choice lists
//! and yes/no questions, drawn on stderr.
//!
//! Every prompt can be left with Esc or Ctrl-C, which the caller turns into a `cancel`
//! answer. While a [`Terminal`] exists the terminal's input is raw (no line editing, no
//! echo, no signal keys), so Ctrl-C arrives as a key, not as a signal, and keys typed
//! between two questions are kept for the next one. It works in any terminal or
//! pseudo-terminal.
//!
//! Forms talk to the [`Prompter`] trait, which [`Terminal`] implements; tests script it.

use std::io;

use console::{Key, Term, measure_text_width, style, truncate_str};

/// The user left the prompt (Esc or Ctrl-C), or the terminal went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl From<io::Error> for Cancelled {
    fn from(e: io::Error) -> Self {
        tracing::debug!(error = %e, "terminal input failed; treating it as cancel");
        Cancelled
    }
}

/// What forms and consent questions need from a terminal.
pub trait Prompter {
    /// Shows a line of information.
    fn say(&mut self, line: &str);

    /// Shows a problem with the last answer.
    fn warn(&mut self, line: &str);

    /// Reads a line of text, starting from `initial`.
    fn text(&mut self, label: &str, initial: &str) -> Result<String, Cancelled>;

    /// Picks one of `items`, starting at `default`; returns its index.
    fn select(&mut self, label: &str, items: &[String], default: usize)
    -> Result<usize, Cancelled>;

    /// Ticks any of `items`, starting from `checked`; returns the new ticks.
    fn multi_select(
        &mut self,
        label: &str,
        items: &[String],
        checked: &[bool],
    ) -> Result<Vec<bool>, Cancelled>;

    /// A yes/no question; Enter takes `default` when there is one.
    fn confirm(&mut self, label: &str, default: Option<bool>) -> Result<bool, Cancelled>;
}

/// Makes text from the server safe to print: control characters (escape sequences that
/// could redraw the screen, carriage returns, ...) are shown escaped. Newlines are kept
/// when `multiline`.
pub fn sanitize(text: &str, multiline: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' if multiline => out.push('\n'),
            '\t' => out.push(' '),
            c if c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.extend(c.escape_default())
            }
            c => out.push(c),
        }
    }
    out
}

/// Raw terminal input for as long as it lives; the previous settings come back when it
/// is dropped.
struct RawInput {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl RawInput {
    #[cfg(unix)]
    fn enable() -> RawInput {
        use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
        let stdin = io::stdin();
        let Ok(saved) = tcgetattr(&stdin) else {
            return RawInput { saved: None };
        };
        let mut raw = saved.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        match tcsetattr(&stdin, OptionalActions::Drain, &raw) {
            Ok(()) => RawInput { saved: Some(saved) },
            Err(e) => {
                tracing::debug!(error = %e, "could not switch the terminal to raw input");
                RawInput { saved: None }
            }
        }
    }

    #[cfg(not(unix))]
    fn enable() -> RawInput {
        RawInput {}
    }
}

impl Drop for RawInput {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(
                io::stdin(),
                rustix::termios::OptionalActions::Drain,
                saved,
            );
        }
    }
}

/// The terminal on stderr (keys come from the controlling terminal).
pub struct Terminal {
    term: Term,
    _raw: RawInput,
}

impl Default for Terminal {
    fn default() -> Self {
        Terminal::new()
    }
}

impl Terminal {
    /// The terminal behind stderr, with raw input until it is dropped.
    pub fn new() -> Self {
        Terminal {
            _raw: RawInput::enable(),
            term: Term::stderr(),
        }
    }

    fn width(&self) -> usize {
        let (_, cols) = self.term.size();
        if cols < 20 { 80 } else { usize::from(cols) }
    }

    fn fit(&self, line: &str) -> String {
        truncate_str(line, self.width().saturating_sub(1), "…").into_owned()
    }

    fn question(&self, label: &str) -> String {
        format!(
            "{} {}",
            style("?").for_stderr().yellow().bold(),
            style(label).for_stderr().bold()
        )
    }

    fn answered(&self, label: &str, answer: &str) -> io::Result<()> {
        let line = format!(
            "{} {} {} {}",
            style("✔").for_stderr().green(),
            label,
            style("›").for_stderr().dim(),
            style(answer).for_stderr().cyan()
        );
        self.term.write_line(&self.fit(&line))
    }

    fn draw_list(&self, lines: &[String]) -> io::Result<()> {
        for l in lines {
            self.term.write_line(&self.fit(l))?;
        }
        Ok(())
    }
}

struct CursorGuard<'a>(&'a Term);

impl Drop for CursorGuard<'_> {
    fn drop(&mut self) {
        let _ = self.0.show_cursor();
    }
}

impl Prompter for Terminal {
    fn say(&mut self, line: &str) {
        let _ = self.term.write_line(line);
    }

    fn warn(&mut self, line: &str) {
        let _ = self.term.write_line(&format!(
            "{} {}",
            style("✘").for_stderr().red(),
            style(line).for_stderr().red()
        ));
    }

    fn text(&mut self, label: &str, initial: &str) -> Result<String, Cancelled> {
        let prefix = format!(
            "{} {} ",
            self.question(label),
            style("›").for_stderr().dim()
        );
        let mut chars: Vec<char> = initial.chars().collect();
        let mut pos = chars.len();
        loop {
            let text: String = chars.iter().collect();
            self.term.clear_line()?;
            self.term.write_str(&prefix)?;
            self.term.write_str(&text)?;
            let back = measure_text_width(&chars[pos..].iter().collect::<String>());
            if back > 0 {
                self.term.move_cursor_left(back)?;
            }
            self.term.flush()?;
            match self.term.read_key_raw()? {
                Key::Enter => break,
                Key::Escape | Key::CtrlC => {
                    self.term.write_line("")?;
                    return Err(Cancelled);
                }
                Key::Backspace if pos > 0 => {
                    pos -= 1;
                    chars.remove(pos);
                }
                Key::Del if pos < chars.len() => {
                    chars.remove(pos);
                }
                Key::ArrowLeft if pos > 0 => pos -= 1,
                Key::ArrowRight if pos < chars.len() => pos += 1,
                Key::Home => pos = 0,
                Key::End => pos = chars.len(),
                // Ctrl-U clears the line.
                Key::Char('\u{15}') => {
                    chars.clear();
                    pos = 0;
                }
                Key::Char(c) if !c.is_control() => {
                    chars.insert(pos, c);
                    pos += 1;
                }
                _ => {}
            }
        }
        let text: String = chars.iter().collect();
        self.term.clear_line()?;
        self.answered(label, if text.is_empty() { "(empty)" } else { &text })?;
        Ok(text)
    }

    fn select(
        &mut self,
        label: &str,
        items: &[String],
        default: usize,
    ) -> Result<usize, Cancelled> {
        if items.is_empty() {
            return Err(Cancelled);
        }
        let mut at = default.min(items.len() - 1);
        self.term.write_line(&format!(
            "{} {}",
            self.question(label),
            style("(↑/↓, Enter; Esc cancels)").for_stderr().dim()
        ))?;
        self.term.hide_cursor()?;
        let _cursor = CursorGuard(&self.term);
        let render = |at: usize| -> Vec<String> {
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    if i == at {
                        format!(
                            "{} {}",
                            style("❯").for_stderr().cyan(),
                            style(item).for_stderr().cyan()
                        )
                    } else {
                        format!("  {item}")
                    }
                })
                .collect()
        };
        self.draw_list(&render(at))?;
        loop {
            let key = self.term.read_key_raw()?;
            match key {
                Key::ArrowUp | Key::Char('k') | Key::BackTab => {
                    at = if at == 0 { items.len() - 1 } else { at - 1 };
                }
                Key::ArrowDown | Key::Char('j') | Key::Tab => at = (at + 1) % items.len(),
                Key::Home => at = 0,
                Key::End => at = items.len() - 1,
                Key::Char(c @ '1'..='9') if (c as usize - '1' as usize) < items.len() => {
                    at = c as usize - '1' as usize;
                }
                Key::Enter => {
                    self.term.clear_last_lines(items.len() + 1)?;
                    self.answered(label, &items[at])?;
                    return Ok(at);
                }
                Key::Escape | Key::CtrlC => {
                    self.term.clear_last_lines(items.len() + 1)?;
                    self.answered(label, "cancelled")?;
                    return Err(Cancelled);
                }
                _ => continue,
            }
            self.term.clear_last_lines(items.len())?;
            self.draw_list(&render(at))?;
        }
    }

    fn multi_select(
        &mut self,
        label: &str,
        items: &[String],
        checked: &[bool],
    ) -> Result<Vec<bool>, Cancelled> {
        let mut ticks: Vec<bool> = (0..items.len())
            .map(|i| checked.get(i).copied().unwrap_or(false))
            .collect();
        let mut at = 0usize;
        self.term.write_line(&format!(
            "{} {}",
            self.question(label),
            style("(↑/↓, Space ticks, Enter confirms; Esc cancels)")
                .for_stderr()
                .dim()
        ))?;
        self.term.hide_cursor()?;
        let _cursor = CursorGuard(&self.term);
        let render = |at: usize, ticks: &[bool]| -> Vec<String> {
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let mark = if ticks[i] { "[x]" } else { "[ ]" };
                    if i == at {
                        format!(
                            "{} {} {}",
                            style("❯").for_stderr().cyan(),
                            mark,
                            style(item).for_stderr().cyan()
                        )
                    } else {
                        format!("  {mark} {item}")
                    }
                })
                .collect()
        };
        self.draw_list(&render(at, &ticks))?;
        loop {
            match self.term.read_key_raw()? {
                Key::ArrowUp | Key::Char('k') if !items.is_empty() => {
                    at = if at == 0 { items.len() - 1 } else { at - 1 };
                }
                Key::ArrowDown | Key::Char('j') if !items.is_empty() => at = (at + 1) % items.len(),
                Key::Char(' ') if !items.is_empty() => ticks[at] = !ticks[at],
                Key::Char('a') => {
                    let all = ticks.iter().all(|t| *t);
                    ticks.iter_mut().for_each(|t| *t = !all);
                }
                Key::Enter => {
                    self.term.clear_last_lines(items.len() + 1)?;
                    let chosen: Vec<&str> = items
                        .iter()
                        .zip(&ticks)
                        .filter(|(_, t)| **t)
                        .map(|(i, _)| i.as_str())
                        .collect();
                    let shown = if chosen.is_empty() {
                        "(none)".to_owned()
                    } else {
                        chosen.join(", ")
                    };
                    self.answered(label, &shown)?;
                    return Ok(ticks);
                }
                Key::Escape | Key::CtrlC => {
                    self.term.clear_last_lines(items.len() + 1)?;
                    self.answered(label, "cancelled")?;
                    return Err(Cancelled);
                }
                _ => continue,
            }
            self.term.clear_last_lines(items.len())?;
            self.draw_list(&render(at, &ticks))?;
        }
    }

    fn confirm(&mut self, label: &str, default: Option<bool>) -> Result<bool, Cancelled> {
        let hint = match default {
            Some(true) => "[Y/n]",
            Some(false) => "[y/N]",
            None => "[y/n]",
        };
        self.term.write_str(&format!(
            "{} {} ",
            self.question(label),
            style(hint).for_stderr().dim()
        ))?;
        self.term.flush()?;
        let answer = loop {
            match self.term.read_key_raw()? {
                Key::Char('y' | 'Y') => break true,
                Key::Char('n' | 'N') => break false,
                Key::Enter => {
                    if let Some(d) = default {
                        break d;
                    }
                }
                Key::Escape | Key::CtrlC => {
                    self.term.clear_line()?;
                    self.answered(label, "cancelled")?;
                    return Err(Cancelled);
                }
                _ => {}
            }
        };
        self.term.clear_line()?;
        self.answered(label, if answer { "yes" } else { "no" })?;
        Ok(answer)
    }
}

/// A scripted [`Prompter`] for tests: answers come from a list, and everything shown is
/// recorded.
#[cfg(test)]
pub mod script {
    use super::*;
    use std::collections::VecDeque;

    /// One scripted answer.
    #[derive(Debug, Clone)]
    pub enum Step {
        /// Type this text (replacing the initial text).
        Text(&'static str),
        /// Keep the initial text.
        Keep,
        /// Pick the item with this label.
        Pick(&'static str),
        /// Tick exactly these labels.
        Tick(&'static [&'static str]),
        /// Answer yes or no.
        Yes(bool),
        /// Press Enter on a yes/no question (take the default).
        Enter,
        /// Press Esc.
        Esc,
    }

    /// The script and what was shown.
    #[derive(Default)]
    pub struct Script {
        /// Answers still to give.
        pub steps: VecDeque<Step>,
        /// Lines shown, warnings prefixed with `!`, prompts with `?`.
        pub shown: Vec<String>,
    }

    impl Script {
        /// A script with these answers.
        pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
            Script {
                steps: steps.into_iter().collect(),
                shown: Vec::new(),
            }
        }

        fn next(&mut self, label: &str) -> Step {
            self.shown.push(format!("? {label}"));
            self.steps
                .pop_front()
                .unwrap_or_else(|| panic!("the script ran out of answers at {label:?}"))
        }
    }

    impl Prompter for Script {
        fn say(&mut self, line: &str) {
            self.shown.push(line.to_owned());
        }

        fn warn(&mut self, line: &str) {
            self.shown.push(format!("! {line}"));
        }

        fn text(&mut self, label: &str, initial: &str) -> Result<String, Cancelled> {
            self.shown.push(format!("  initial: {initial:?}"));
            match self.next(label) {
                Step::Text(t) => Ok(t.to_owned()),
                Step::Keep => Ok(initial.to_owned()),
                Step::Esc => Err(Cancelled),
                other => panic!("{label:?} is a text field, not {other:?}"),
            }
        }

        fn select(
            &mut self,
            label: &str,
            items: &[String],
            default: usize,
        ) -> Result<usize, Cancelled> {
            self.shown
                .push(format!("  items: {items:?} default {default}"));
            match self.next(label) {
                Step::Pick(p) => Ok(items
                    .iter()
                    .position(|i| i == p || i.starts_with(p))
                    .unwrap_or_else(|| panic!("no item {p:?} in {items:?}"))),
                Step::Enter => Ok(default),
                Step::Esc => Err(Cancelled),
                other => panic!("{label:?} is a select, not {other:?}"),
            }
        }

        fn multi_select(
            &mut self,
            label: &str,
            items: &[String],
            checked: &[bool],
        ) -> Result<Vec<bool>, Cancelled> {
            self.shown
                .push(format!("  items: {items:?} checked {checked:?}"));
            match self.next(label) {
                Step::Tick(t) => Ok(items.iter().map(|i| t.contains(&i.as_str())).collect()),
                Step::Enter => Ok(checked.to_vec()),
                Step::Esc => Err(Cancelled),
                other => panic!("{label:?} is a multi-select, not {other:?}"),
            }
        }

        fn confirm(&mut self, label: &str, default: Option<bool>) -> Result<bool, Cancelled> {
            self.shown.push(format!("  default: {default:?}"));
            match self.next(label) {
                Step::Yes(b) => Ok(b),
                Step::Enter => default.ok_or(Cancelled),
                Step::Esc => Err(Cancelled),
                other => panic!("{label:?} is a yes/no question, not {other:?}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_escapes_control_characters() {
        assert_eq!(sanitize("plain text", false), "plain text");
        assert_eq!(sanitize("a\u{1b}[2Jb", false), "a\\u{1b}[2Jb");
        assert_eq!(sanitize("line\nnext", true), "line\nnext");
        assert_eq!(sanitize("line\nnext", false), "line\\nnext");
        assert_eq!(sanitize("back\rspace\ttab", false), "back\\rspace tab");
        assert_eq!(sanitize("rtl\u{202e}txt", false), "rtl\\u{202e}txt");
    }
}
