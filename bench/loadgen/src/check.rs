//! `check` and `check-stdio`: does the server answer the benchmark's calls correctly?

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::{Instant, timeout};

use crate::client::{self, Target};
use crate::{Error, bodies, http_load, listen, stdio};

/// Checks echo, a two-round MRTR call and a listen stream over HTTP. With `wait`, first
/// retries the echo call until the server is up, for at most that long.
pub async fn http(target: &Target, wait: Duration) -> Result<(), Error> {
    let deadline = Instant::now() + wait;
    loop {
        match http_load::echo_once(target).await {
            Ok(()) => break,
            Err(e) if Instant::now() >= deadline => return Err(format!("echo: {e}").into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    println!("ok echo");
    http_load::mrtr_once(target)
        .await
        .map_err(|e| format!("two-round confirm_delete: {e}"))?;
    println!("ok mrtr");
    listen::open_once(target)
        .await
        .map_err(|e| format!("subscriptions/listen: {e}"))?;
    println!("ok listen");
    Ok(())
}

/// Checks one echo call over stdio.
pub async fn stdio(command: &[String], log: Option<&str>) -> Result<(), Error> {
    let (child, mut stdin, stdout) = stdio::spawn(command, log)?;
    let mut line = bodies::echo(1, bodies::ECHO_TEXT);
    line.push('\n');
    stdin.write_all(line.as_bytes()).await?;
    stdin.flush().await?;
    let mut reader = BufReader::new(stdout);
    let mut reply = String::new();
    // Skip notifications; the reply has the id.
    let answer = timeout(Duration::from_secs(20), async {
        loop {
            reply.clear();
            if reader.read_line(&mut reply).await? == 0 {
                return Err::<(), Error>("the server closed stdout".into());
            }
            if reply.contains("\"id\"") {
                return client::expect_echo(
                    hyper::StatusCode::OK,
                    reply.as_bytes(),
                    bodies::ECHO_TEXT,
                );
            }
        }
    })
    .await
    .map_err(|_| "no reply within 20 s")?;
    drop(stdin);
    drop(child);
    answer?;
    println!("ok stdio echo");
    Ok(())
}
