// Forms are flat: a list of structs and a nested struct are refused, and the errors name
// the fields (`__ferry_form_field_items`, `__ferry_form_field_inner`).
use ferry_form::Form;
use serde::Deserialize;

#[derive(Deserialize)]
struct Inner {
    a: u8,
}

#[derive(Form, Deserialize)]
struct Outer {
    name: String,
    items: Vec<Inner>,
    inner: Inner,
}

fn main() {}
