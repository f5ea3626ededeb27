//! Notes: `set_note {name, text}` stores a note and tells listeners that
//! `note://NAME` changed; the template `note://{name}` reads it back. Notes live in
//! Redis when the server runs with `--redis` (so every instance reads the same ones),
//! in memory otherwise.

use std::collections::HashMap;
use std::sync::Arc;

use ferry_protocol::ErrorObject;
use ferry_protocol::resources::TextResourceContents;
use ferry_redis::Redis;
use ferry_server::{
    Context, Error, ResourceRequest, ServerBuilder, fail, not_found, resource_template, tool,
};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

/// The longest note name, in bytes.
pub const MAX_NAME: usize = 64;
/// The longest note text, in bytes.
pub const MAX_TEXT: usize = 16 * 1024;
/// The most notes kept in memory.
pub const MAX_NOTES: usize = 1000;
/// How long a note is kept in Redis: a day.
const REDIS_TTL_SECS: u64 = 24 * 3600;

/// Where notes are kept.
pub enum Notes {
    /// In this process, at most [`MAX_NOTES`].
    Memory(Mutex<HashMap<String, String>>),
    /// In Redis (`<prefix>note:NAME`, kept for a day), shared by every instance.
    Redis(Redis),
}

impl Default for Notes {
    fn default() -> Self {
        Notes::Memory(Mutex::new(HashMap::new()))
    }
}

impl Notes {
    async fn set(&self, name: &str, text: &str) -> Result<(), String> {
        match self {
            Notes::Memory(notes) => {
                let mut notes = notes.lock();
                if notes.len() >= MAX_NOTES && !notes.contains_key(name) {
                    return Err(format!("at most {MAX_NOTES} notes are kept"));
                }
                notes.insert(name.to_owned(), text.to_owned());
                Ok(())
            }
            Notes::Redis(redis) => {
                let mut cmd = ferry_redis::redis::cmd("SET");
                cmd.arg(redis.key(&format!("note:{name}")))
                    .arg(text)
                    .arg("EX")
                    .arg(REDIS_TTL_SECS);
                redis
                    .query::<()>(&cmd)
                    .await
                    .map_err(|e| format!("the note store is unavailable ({e})"))
            }
        }
    }

    async fn get(&self, name: &str) -> Result<Option<String>, String> {
        match self {
            Notes::Memory(notes) => Ok(notes.lock().get(name).cloned()),
            Notes::Redis(redis) => {
                let mut cmd = ferry_redis::redis::cmd("GET");
                cmd.arg(redis.key(&format!("note:{name}")));
                redis
                    .query::<Option<String>>(&cmd)
                    .await
                    .map_err(|e| format!("the note store is unavailable ({e})"))
            }
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoteArgs {
    /// The note's name: letters, digits, `.`, `_` or `-`, at most 64.
    name: String,
    /// Its text (at most 16 KiB).
    text: String,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Registers `set_note` and the `note://{name}` template.
pub fn register(b: ServerBuilder, notes: Arc<Notes>) -> ServerBuilder {
    let read = notes.clone();
    b.tool(
        tool("set_note")
            .description("Stores a note, readable as the resource note://NAME; listeners subscribed to it are told")
            .handler(move |ctx: Context, args: NoteArgs| {
                let notes = notes.clone();
                async move {
                    if !valid_name(&args.name) {
                        return Err(fail(
                            "name must be 1 to 64 letters, digits, '.', '_' or '-'",
                        ));
                    }
                    if args.text.len() > MAX_TEXT {
                        return Err(fail(format!("text is longer than {MAX_TEXT} bytes")));
                    }
                    notes.set(&args.name, &args.text).await.map_err(fail)?;
                    let uri = format!("note://{}", args.name);
                    ctx.server().notify_resource_updated(&uri);
                    Ok(format!("Saved {uri}"))
                }
            }),
    )
    .resource_template(
        resource_template("note://{name}", "note")
            .description("A note stored with set_note")
            .mime_type("text/plain")
            .handler(move |_: Context, req: ResourceRequest| {
                let notes = read.clone();
                async move {
                    let name = req.param("name").unwrap_or_default().to_owned();
                    if !valid_name(&name) {
                        return Err(not_found(&req.uri));
                    }
                    match notes.get(&name).await {
                        Ok(Some(text)) => {
                            Ok(TextResourceContents::new(req.uri, text).with_mime_type("text/plain"))
                        }
                        Ok(None) => Err(not_found(&req.uri)),
                        Err(e) => Err(Error::protocol(ErrorObject::internal(e))),
                    }
                }
            }),
    )
}
