//! A server over stdio with application state, a tool without input, a tool with typed
//! input, and a tool that asks the user before it acts.
//!
//! ```sh
//! cargo build -p ferry --example stdio_server
//! ferry --stdio target/debug/examples/stdio_server call delete_note name=groceries
//! ```

use std::collections::BTreeMap;

use ferry::Form;
use ferry::server::{Context, Elicitation, Server, State, tool};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

/// The application's state, shared by every handler.
struct Notes {
    by_name: Mutex<BTreeMap<String, String>>,
}

#[derive(Deserialize, JsonSchema)]
struct AddNote {
    /// The note's name.
    name: String,
    /// What it says.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct NoteName {
    /// The note's name.
    name: String,
}

#[derive(Deserialize, Form)]
struct Confirm {
    /// Yes, delete it.
    confirm: bool,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let notes = Notes {
        by_name: Mutex::new(BTreeMap::from([(
            "groceries".to_owned(),
            "eggs, flour".to_owned(),
        )])),
    };
    let server = Server::builder("notes", "1.0.0")
        .state(notes)
        .tool(
            tool("list_notes")
                .description("Lists the notes' names")
                .handler(|notes: State<Notes>| async move {
                    let names: Vec<String> = notes.by_name.lock().keys().cloned().collect();
                    Ok(names.join("\n"))
                }),
        )
        .tool(tool("add_note").description("Adds a note").handler(
            |notes: State<Notes>, args: AddNote| async move {
                notes.by_name.lock().insert(args.name.clone(), args.text);
                Ok(format!("Added {}", args.name))
            },
        ))
        .tool(
            tool("delete_note")
                .description("Deletes a note after the user confirms")
                .single_use()
                .handler(
                    |ctx: Context, notes: State<Notes>, args: NoteName| async move {
                        // On 2026-07-28 this handler runs again from the top once the
                        // answer arrives; nothing above the ask has side effects.
                        let answer = ctx
                            .elicit::<Confirm>(format!("Delete the note {:?}?", args.name))
                            .await?;
                        Ok(match answer {
                            Elicitation::Accept(Confirm { confirm: true }) => {
                                match notes.by_name.lock().remove(&args.name) {
                                    Some(_) => format!("Deleted {}", args.name),
                                    None => format!("No note named {}", args.name),
                                }
                            }
                            Elicitation::Accept(_) | Elicitation::Decline => {
                                format!("Kept {}", args.name)
                            }
                            Elicitation::Cancel => "Cancelled".to_owned(),
                        })
                    },
                ),
        )
        .build()
        .expect("valid definitions");
    ferry::stdio::serve_stdio(server).await
}
