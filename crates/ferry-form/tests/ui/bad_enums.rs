// A FormEnum is a unit-only enum that serde reads from a plain string.
use ferry_form::FormEnum;
use serde::Deserialize;

#[derive(FormEnum, Deserialize)]
enum WithData {
    Plain,
    Data(u8),
}

#[derive(FormEnum, Deserialize)]
#[serde(untagged)]
enum Untagged {
    A,
}

#[derive(FormEnum)]
struct NotAnEnum {
    a: u8,
}

fn main() {}
