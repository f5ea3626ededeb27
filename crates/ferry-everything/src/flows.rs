//! The multi-round flows users ask for: a confirmed delete, an image generation that
//! asks two things in one round, and a third-party account connection in URL mode.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Arc;

use ferry_protocol::content::ContentBlock;
use ferry_server::{
    Context, Elicitation, Error, Form, FormEnum, Result, ServerBuilder, TaskMode, UrlConsent, tool,
};
use parking_lot::Mutex;
use schemars::JsonSchema;

use crate::sandbox::Sandbox;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [{"required": ["path"]}, {"required": ["filename"]}]))]
struct DeleteArgs {
    /// The file to delete, relative to the server's sandbox folder (e.g. `notes.txt`).
    #[serde(default)]
    path: Option<String>,
    /// The file to delete (the same as `path`).
    #[serde(default)]
    filename: Option<String>,
}

/// The confirmation `confirm_delete` asks for.
#[derive(Deserialize, Form)]
pub struct Confirm {
    /// Delete it?
    #[form(title = "Confirm")]
    pub confirm: bool,
}

/// The aspect ratios `generate_image` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, FormEnum)]
pub enum AspectRatio {
    /// Landscape.
    #[serde(rename = "16:9")]
    #[form(title = "Landscape (16:9)")]
    Landscape,
    /// Square.
    #[serde(rename = "1:1")]
    #[form(title = "Square (1:1)")]
    Square,
    /// Portrait.
    #[serde(rename = "9:16")]
    #[form(title = "Portrait (9:16)")]
    Portrait,
}

#[derive(Deserialize, Form)]
struct Ratio {
    /// The shape of the image.
    #[form(title = "Aspect ratio")]
    aspect_ratio: AspectRatio,
}

#[derive(Deserialize, Form)]
struct GoAhead {
    /// Spend one generation on this prompt?
    #[form(title = "Generate")]
    go_ahead: bool,
}

#[derive(Deserialize, JsonSchema)]
struct ImageArgs {
    /// What to draw.
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct ConnectArgs {
    /// The third-party service to connect (e.g. "github").
    service: String,
}

/// Pending and finished account connections, shared by the tool and the web page.
#[derive(Default)]
pub struct Connections {
    flows: Mutex<HashMap<String, Flow>>,
    changed: tokio::sync::Notify,
}

/// One account connection started by a user.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Who started it (the principal's id; empty when anonymous).
    pub principal: String,
    /// The service being connected.
    pub service: String,
    /// Whether the user finished the page.
    pub completed: bool,
}

impl Connections {
    /// Looks up a flow.
    pub fn get(&self, id: &str) -> Option<Flow> {
        self.flows.lock().get(id).cloned()
    }

    /// Marks a flow finished.
    pub fn complete(&self, id: &str) -> bool {
        let done = match self.flows.lock().get_mut(id) {
            Some(f) => {
                f.completed = true;
                true
            }
            None => false,
        };
        self.changed.notify_waiters();
        done
    }

    /// Waits up to `limit` for a flow to finish. Returns whether it did.
    pub async fn wait_completed(&self, id: &str, limit: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            if self.get(id).is_some_and(|f| f.completed) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.get(id).is_some_and(|f| f.completed);
            }
        }
    }

    fn start(&self, principal: &str, service: &str) -> String {
        let id = random_id();
        let mut flows = self.flows.lock();
        // Bounded: forget the oldest when a flood of unfinished flows piles up.
        if flows.len() >= 10_000
            && let Some(k) = flows.keys().next().cloned()
        {
            flows.remove(&k);
        }
        flows.insert(
            id.clone(),
            Flow {
                principal: principal.to_owned(),
                service: service.to_owned(),
                completed: false,
            },
        );
        id
    }
}

fn random_id() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What `connect_account` keeps between rounds (sealed in `requestState`).
#[derive(Serialize, Deserialize)]
struct ConnectProgress {
    flow: String,
    attempt: u32,
    /// The page's link, made once: a link is sealed with a fresh nonce each time, and an
    /// ask whose question changed would be asked again instead of taking its answer.
    url: String,
}

/// Builds links to the connect page.
pub trait LinkSigner: Send + Sync + 'static {
    /// The URL of the page for `flow`, bound to `principal`.
    fn link(&self, flow: &str, principal: &str) -> String;
}

/// Registers the flows. With `require_scopes`, `confirm_delete` needs
/// [`DELETE_SCOPE`](crate::app::DELETE_SCOPE).
pub fn register(
    builder: ServerBuilder,
    connections: Arc<Connections>,
    links: Arc<dyn LinkSigner>,
    sandbox: Arc<Sandbox>,
    require_scopes: bool,
) -> ServerBuilder {
    let delete_scopes = if require_scopes {
        vec![crate::app::DELETE_SCOPE]
    } else {
        Vec::new()
    };
    builder
        .tool(
            tool("confirm_delete")
                .description("Deletes a file in this server's sandbox folder after the user confirms (asks once; the confirmation can be used only once). Paths are relative to the sandbox; absolute paths, `..` and links leading outside are refused. A task when the client supports tasks: the question waits in the task")
                .scopes(delete_scopes)
                .single_use()
                .task(TaskMode::Optional)
                .handler(move |ctx: Context, args: DeleteArgs| {
                    let sandbox = sandbox.clone();
                    async move { confirm_delete(ctx, args, &sandbox).await }
                }),
        )
        .tool(
            tool("generate_image")
                .description("Generates a small PNG for a prompt, after asking the aspect ratio and a go-ahead in one round")
                .handler(|ctx: Context, args: ImageArgs| async move {
                    let (ratio, go) = ctx
                        .ask_all((
                            ctx.elicit::<Ratio>(format!("Which aspect ratio for \"{}\"?", args.prompt))
                                .key("aspect_ratio"),
                            ctx.elicit::<GoAhead>("Generating an image spends one generation. Go ahead?")
                                .key("go_ahead"),
                        ))
                        .await?;
                    let (Elicitation::Accept(ratio), Elicitation::Accept(GoAhead { go_ahead: true })) = (ratio, go)
                    else {
                        return Ok(vec![ContentBlock::text("No image generated")]);
                    };
                    let png = render(&args.prompt, ratio.aspect_ratio).map_err(|e| Error::execution(e.to_string()))?;
                    use base64::Engine;
                    let data = base64::engine::general_purpose::STANDARD.encode(png);
                    Ok(vec![
                        ContentBlock::image(data, "image/png"),
                        ContentBlock::text(format!("Generated a {} image for \"{}\"", ratio_name(ratio.aspect_ratio), args.prompt)),
                    ])
                }),
        )
        .tool(
            tool("connect_account")
                .description("Connects a third-party account: the user finishes on a web page this server serves (URL mode)")
                .handler(move |ctx: Context, args: ConnectArgs| {
                    let connections = connections.clone();
                    let links = links.clone();
                    async move { connect(ctx, args, &connections, links.as_ref()).await }
                }),
        )
}

/// Checks the path (refusing escapes before asking), asks, and deletes what the check
/// found: every round looks again, so the answer says what is really there.
async fn confirm_delete(ctx: Context, args: DeleteArgs, sandbox: &Sandbox) -> Result<String> {
    let path = args
        .path
        .or(args.filename)
        .ok_or_else(|| Error::execution("give the path to delete"))?;
    let target = sandbox
        .inspect(&path)
        .map_err(|refusal| Error::execution(refusal.to_string()))?;
    let answer = ctx
        .elicit::<Confirm>(format!(
            "Delete {} from {}?",
            target.path(),
            sandbox.shown_root()
        ))
        .key("confirm")
        .await?;
    match answer {
        Elicitation::Accept(Confirm { confirm: true }) => {
            let deletion = sandbox.delete(target);
            if deletion.failed() {
                return Err(Error::execution(deletion.to_string()));
            }
            if deletion.deleted() {
                tracing::info!(outcome = %deletion, "confirm_delete");
            }
            Ok(deletion.to_string())
        }
        Elicitation::Accept(_) | Elicitation::Decline => {
            Ok(format!("Kept {}: nothing deleted", target.path()))
        }
        Elicitation::Cancel => Ok("Cancelled: nothing deleted".to_owned()),
    }
}

async fn connect(
    ctx: Context,
    args: ConnectArgs,
    connections: &Connections,
    links: &dyn LinkSigner,
) -> Result<String> {
    let principal = ctx
        .principal()
        .map(|p| p.id().to_owned())
        .unwrap_or_default();
    let mut progress = match ctx.carried::<ConnectProgress>() {
        Some(p)
            if connections
                .get(&p.flow)
                .is_some_and(|f| f.principal == principal) =>
        {
            p
        }
        _ => {
            let flow = connections.start(&principal, &args.service);
            ConnectProgress {
                url: links.link(&flow, &principal),
                flow,
                attempt: 1,
            }
        }
    };
    let url = progress.url.clone();
    loop {
        if connections.get(&progress.flow).is_some_and(|f| f.completed) {
            return Ok(format!("Connected {}", args.service));
        }
        if progress.attempt > 20 {
            return Ok(format!(
                "Gave up connecting {}: the page was not finished",
                args.service
            ));
        }
        ctx.carry(&progress)?;
        let consent = ctx
            .elicit_url(
                format!("Open this page to connect your {} account.", args.service),
                url.clone(),
            )
            .key(format!("connect-{}", progress.attempt))
            .await?;
        match consent {
            // Accept means the user opened the page, not that they finished it. A
            // 2025-11-25 session can wait for the page here; a 2026-07-28 request checks
            // and asks again while the page's form has not been submitted.
            UrlConsent::Accept => {
                let wait = if ctx.protocol_version().is_legacy() {
                    std::time::Duration::from_secs(300)
                } else {
                    std::time::Duration::from_millis(500)
                };
                if connections.wait_completed(&progress.flow, wait).await {
                    ctx.complete_url_elicitation(&format!("connect-{}", progress.attempt))
                        .await;
                    return Ok(format!("Connected {}", args.service));
                }
                progress.attempt += 1;
            }
            UrlConsent::Decline => return Ok(format!("Did not connect {}", args.service)),
            UrlConsent::Cancel => return Ok("Cancelled".to_owned()),
        }
    }
}

fn ratio_name(r: AspectRatio) -> &'static str {
    match r {
        AspectRatio::Landscape => "16:9",
        AspectRatio::Square => "1:1",
        AspectRatio::Portrait => "9:16",
    }
}

/// Draws a small gradient whose colours come from the prompt.
pub fn render(
    prompt: &str,
    ratio: AspectRatio,
) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let (w, h) = match ratio {
        AspectRatio::Landscape => (64u32, 36u32),
        AspectRatio::Square => (48, 48),
        AspectRatio::Portrait => (36, 64),
    };
    let seed = prompt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let base = [
        (seed & 0xff) as u8,
        ((seed >> 8) & 0xff) as u8,
        ((seed >> 16) & 0xff) as u8,
    ];
    let mut pixels = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            pixels.push(base[0].wrapping_add((x * 255 / w) as u8));
            pixels.push(base[1].wrapping_add((y * 255 / h) as u8));
            pixels.push(base[2]);
        }
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(Cursor::new(&mut out), w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(&pixels)?;
    }
    Ok(out)
}
