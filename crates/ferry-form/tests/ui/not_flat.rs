// Lists of free text, maps, tuples and optional structs are not form fields either.
use std::collections::HashMap;

use ferry_form::Form;
use serde::Deserialize;

#[derive(Deserialize)]
struct Inner {
    a: u8,
}

#[derive(Form, Deserialize)]
struct Outer {
    tags: Vec<String>,
    map: HashMap<String, String>,
    pair: (u8, u8),
    maybe: Option<Inner>,
}

fn main() {}
