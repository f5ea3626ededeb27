// Errors in #[form(...)] point at the attribute.
use ferry_form::Form;
use serde::Deserialize;

#[derive(Form, Deserialize)]
struct UnknownOption {
    #[form(placeholder = "x")]
    a: String,
}

#[derive(Form, Deserialize)]
struct UnknownFormat {
    #[form(format = "phone")]
    a: String,
}

#[derive(Form, Deserialize)]
struct Inconsistent {
    #[form(min_length = 5, max_length = 2)]
    a: String,
    #[form(minimum = 10, default = 5)]
    b: u8,
}

#[derive(Form, Deserialize)]
struct Generic<T> {
    a: T,
}

#[derive(Form, Deserialize)]
struct Tuple(String);

#[derive(Deserialize)]
struct Inner {
    b: u8,
}

#[derive(Form, Deserialize)]
struct Flattened {
    #[serde(flatten)]
    inner: Inner,
}

fn main() {}
