// An option that does not fit the field's kind is refused at the option.
use ferry_form::{Form, FormEnum};
use serde::Deserialize;

#[derive(FormEnum, Deserialize)]
enum Color {
    Red,
    Green,
}

#[derive(Form, Deserialize)]
struct Outer {
    #[form(min_length = 3)]
    count: u8,
    #[form(format = "email")]
    flag: bool,
    #[form(minimum = 1)]
    name: String,
    #[form(max_items = 2)]
    color: Color,
    #[form(default = true)]
    text: String,
    #[form(default = "yes")]
    agree: bool,
    #[form(default = ["Red"])]
    single: Color,
}

fn main() {}
