// A multi-select cannot ask for more choices than its enum has options.
use ferry_form::{Form, FormEnum};
use serde::Deserialize;

#[derive(FormEnum, Deserialize)]
enum Color {
    Red,
    Green,
}

#[derive(Form, Deserialize)]
struct Palette {
    #[form(min_items = 3)]
    colors: Vec<Color>,
    #[form(min_items = 2)]
    fine: Vec<Color>,
}

fn main() {}
