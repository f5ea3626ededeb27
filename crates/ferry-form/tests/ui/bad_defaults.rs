// Defaults and bounds are checked against the field's type while compiling.
use ferry_form::{Form, FormEnum};
use serde::Deserialize;

#[derive(FormEnum, Deserialize)]
enum Color {
    Red,
    Green,
}

#[derive(Form, Deserialize)]
struct Outer {
    #[form(default = "Blue")]
    color: Color,
    #[form(default = ["Red", "Purple"])]
    colors: Vec<Color>,
    #[form(minimum = 2.5)]
    whole: u32,
    #[form(maximum = 300)]
    small: u8,
    #[form(default = -1)]
    unsigned: Option<u64>,
    #[form(format = "email", default = "not an email")]
    email: String,
    #[form(format = "date", default = "2026-02-30")]
    day: String,
}

fn main() {}
