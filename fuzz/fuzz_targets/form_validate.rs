//! Form validation (ferry-form): an arbitrary `requestedSchema` and answer, and a derived
//! form's answers, as an elicitation result brings them back from a client.
//!
//! Input: a JSON array `[schema, answer]`. Checks: a schema that parses re-parses from
//! its own JSON to the same schema; `validate_content` agrees with `content_errors`,
//! which names each property at most once; a valid answer stays valid once normalised,
//! normalising is idempotent and keeps only the form's properties, never a `null`; and
//! the answer read into a derived form is accepted only when it keeps the form's bounds.
#![no_main]

use ferry_form::{Form, FormEnum, FormSchema};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[derive(FormEnum, serde::Deserialize, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Seat {
    Window,
    Aisle,
}

#[derive(Form, serde::Deserialize, Debug)]
struct Booking {
    /// Who travels
    #[form(min_length = 1, max_length = 40)]
    name: String,
    /// Contact address
    #[form(format = "email")]
    email: Option<String>,
    /// How many seats
    #[form(minimum = 1, maximum = 9)]
    seats: u8,
    /// Where
    seat: Option<Seat>,
    /// Travel insurance
    insured: Option<bool>,
}

fn check_schema(schema: &FormSchema, answer: &serde_json::Map<String, Value>) {
    let again = FormSchema::from_value(schema.as_value().clone()).expect("a schema re-parses");
    assert_eq!(&again, schema);

    let errors = schema.content_errors(answer);
    assert_eq!(schema.validate_content(answer).is_ok(), errors.is_empty());
    assert!(errors.len() <= schema.properties().len());

    let normalized = schema.normalize_content(answer);
    let names: Vec<&str> = schema.property_names().collect();
    for (key, value) in &normalized {
        assert!(
            names.contains(&key.as_str()),
            "normalised answer kept {key}"
        );
        assert!(!value.is_null());
    }
    assert_eq!(
        schema.normalize_content(&normalized),
        normalized,
        "normalising twice"
    );
    if errors.is_empty() {
        assert!(
            schema.validate_content(&normalized).is_ok(),
            "a valid answer became invalid once normalised: {normalized:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok((schema, answer)) = serde_json::from_slice::<(Value, Value)>(data) else {
        return;
    };
    let Value::Object(answer) = answer else {
        return;
    };
    if let Ok(schema) = FormSchema::from_value(schema.clone()) {
        check_schema(&schema, &answer);
    }
    if let Ok(schema) = FormSchema::from_value_lenient(schema) {
        let answer = schema.normalize_content(&answer);
        let _ = schema.content_errors(&answer);
    }

    if let Ok(booking) = ferry_form::parse_content::<Booking>(&answer) {
        let chars = booking.name.chars().count();
        assert!(
            (1..=40).contains(&chars),
            "name of {chars} characters accepted"
        );
        assert!(
            (1..=9).contains(&booking.seats),
            "{} seats accepted",
            booking.seats
        );
        // The enum and the boolean were read from JSON of their own type, or left out.
        let seat = answer.get("seat").filter(|v| !v.is_null());
        assert_eq!(booking.seat.is_some(), seat.is_some());
        if let Some(seat) = booking.seat {
            let name = if seat == Seat::Window {
                "window"
            } else {
                "aisle"
            };
            assert_eq!(answer.get("seat").and_then(Value::as_str), Some(name));
        }
        let insured = answer.get("insured").and_then(Value::as_bool);
        assert_eq!(booking.insured, insured);
        if let Some(email) = &booking.email {
            assert!(
                email.contains('@'),
                "{email:?} accepted as an email address"
            );
        }
    }
});
