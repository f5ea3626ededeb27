//! Answers a client's input handler gives to form questions.

use std::collections::BTreeMap;

use ferry_protocol::elicitation::{ElicitResult, ElicitValue};

/// The answer to a `confirm` question: `"accept"` accepts with `confirm: true`,
/// `"decline"` declines, anything else cancels.
pub fn confirm(action: &str) -> ElicitResult {
    match action {
        "accept" => ElicitResult::accept(BTreeMap::from([(
            "confirm".to_owned(),
            ElicitValue::Bool(true),
        )])),
        "decline" => ElicitResult::decline(),
        _ => ElicitResult::cancel(),
    }
}
