//! Command-line options: `SUBCOMMAND [--name value]... [-- CMD ARGS...]`.

use std::collections::HashMap;
use std::time::Duration;

use crate::Error;
use crate::client::Target;

/// Parsed command line.
pub struct Opts {
    /// The subcommand.
    pub command: String,
    values: HashMap<String, String>,
    child: Vec<String>,
}

impl Opts {
    /// Parses the arguments after the program name.
    pub fn from_args(args: impl Iterator<Item = String>) -> Result<Self, Error> {
        let mut args = args.peekable();
        let command = args.next().ok_or("no subcommand")?;
        let mut values = HashMap::new();
        let mut child = Vec::new();
        while let Some(arg) = args.next() {
            if arg == "--" {
                child.extend(args.by_ref());
                break;
            }
            let name = arg
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {arg:?}"))?;
            let value = args
                .next()
                .ok_or_else(|| format!("--{name} needs a value"))?;
            values.insert(name.to_owned(), value);
        }
        Ok(Self {
            command,
            values,
            child,
        })
    }

    /// The raw value of `--name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// `--name` as a whole number.
    pub fn int(&self, name: &str, default: usize) -> Result<usize, Error> {
        self.get(name).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| format!("--{name}: not a number: {v:?}").into())
        })
    }

    /// `--name` as calls a second (fractions allowed); 0 when absent.
    pub fn rate(&self, name: &str) -> Result<f64, Error> {
        let rate = self.get(name).map_or(Ok(0.0), |v| {
            v.parse::<f64>()
                .map_err(|_| format!("--{name}: not a rate: {v:?}"))
        })?;
        if !(0.0..=1e7).contains(&rate) {
            return Err(format!("--{name}: {rate} calls/s is out of range").into());
        }
        Ok(rate)
    }

    /// `--name` as seconds (fractions allowed).
    pub fn secs(&self, name: &str, default: f64) -> Result<Duration, Error> {
        let secs = self.get(name).map_or(Ok(default), |v| {
            v.parse::<f64>()
                .map_err(|_| format!("--{name}: not seconds: {v:?}"))
        })?;
        if !(0.0..=3600.0).contains(&secs) {
            return Err(format!("--{name}: {secs} s is out of range").into());
        }
        Ok(Duration::from_secs_f64(secs))
    }

    /// `--url`, checked to be a loopback `http://` address.
    pub fn target(&self) -> Result<Target, Error> {
        Target::parse(self.get("url").ok_or("--url is required")?)
    }

    /// The command after `--`.
    pub fn child(&self) -> Result<&[String], Error> {
        if self.child.is_empty() {
            Err("give the server command after --".into())
        } else {
            Ok(&self.child)
        }
    }
}
