//! The `ferry` binary in a pseudo-terminal, answering real questions from
//! ferry-everything: forms (accept, decline, cancel with Esc and Ctrl-C, a select), URL
//! mode without a browser, progress, and the same over stdio.

#![cfg(unix)]

mod support;

use support::{
    CTRL_C, DOWN, ENTER, ESC, Everything, everything_stdio, expect, expect_regex, finish, pty, send,
};

#[test]
fn confirm_delete_accept() {
    let server = Everything::start();
    let mut t = pty(&[
        "--url",
        &server.url,
        "call",
        "confirm_delete",
        "path=notes.txt",
    ]);
    expect(
        &mut t,
        "Ferry everything server asks: Delete notes.txt from ",
    );
    expect(
        &mut t,
        "while calling tool confirm_delete, question \"confirm\"",
    );
    expect(&mut t, "Confirm * [y/n]");
    send(&mut t, "y");
    expect(&mut t, "Confirm: yes");
    expect(&mut t, "Send these answers?");
    expect(&mut t, "Decline");
    expect(&mut t, "Cancel");
    send(&mut t, ENTER);
    expect(&mut t, "Deleted notes.txt (");
    assert_eq!(finish(t), 0);
}

#[test]
fn confirm_delete_decline() {
    let server = Everything::start();
    let mut t = pty(&[
        "--url",
        &server.url,
        "call",
        "confirm_delete",
        "path=draft.md",
    ]);
    expect(&mut t, "asks: Delete draft.md from ");
    expect(&mut t, "[y/n]");
    send(&mut t, "y");
    expect(&mut t, "Send these answers?");
    // Send, Edit an answer, Decline, Cancel.
    send(&mut t, DOWN);
    send(&mut t, DOWN);
    send(&mut t, ENTER);
    expect(&mut t, "Send these answers? › Decline");
    expect(&mut t, "Kept draft.md: nothing deleted");
    assert_eq!(finish(t), 0);
}

#[test]
fn confirm_delete_cancel_with_escape_and_ctrl_c() {
    let server = Everything::start();
    for key in [ESC, CTRL_C] {
        let mut t = pty(&[
            "--url",
            &server.url,
            "call",
            "confirm_delete",
            "path=old/report.csv",
        ]);
        expect(&mut t, "asks: Delete old/report.csv from ");
        expect(&mut t, "[y/n]");
        send(&mut t, key);
        expect(&mut t, "Cancelled.");
        expect_regex(&mut t, "\nCancelled: nothing deleted\r?\n");
        assert_eq!(finish(t), 0, "key {key:?}");
    }
}

#[test]
fn an_invalid_answer_is_asked_again_and_edits_are_possible() {
    let server = Everything::start();
    let mut t = pty(&[
        "--url",
        &server.url,
        "call",
        "test_elicitation_sep1034_defaults",
    ]);
    expect(
        &mut t,
        "asks: Please review and update the form fields with defaults",
    );
    // The default is pre-filled; replace it (Ctrl-U clears the line).
    expect(&mut t, "name");
    expect(&mut t, "John Doe");
    send(&mut t, "\x15Ann\r");
    // age: not a whole number, then a good one.
    expect(&mut t, "age (whole number)");
    send(&mut t, "\x15abc\r");
    expect(&mut t, "\"abc\" is not a number");
    send(&mut t, "\x153.5\r");
    expect(&mut t, "3.5 is not a whole number");
    send(&mut t, "\x1541\r");
    // score and status keep their defaults, verified stays yes.
    expect(&mut t, "score (number)");
    send(&mut t, ENTER);
    expect(&mut t, "status");
    send(&mut t, ENTER);
    expect(&mut t, "verified [Y/n]");
    send(&mut t, ENTER);
    expect(&mut t, "Your answers:");
    expect(&mut t, "age: 41");
    expect(&mut t, "Send these answers?");
    // Edit the name once more.
    send(&mut t, DOWN);
    send(&mut t, ENTER);
    expect(&mut t, "Which answer?");
    send(&mut t, ENTER);
    expect(&mut t, "Ann");
    send(&mut t, "\x15Bea\r");
    expect(&mut t, "name: Bea");
    expect(&mut t, "Send these answers?");
    send(&mut t, ENTER);
    expect(&mut t, "action=accept");
    expect(&mut t, "\"name\":\"Bea\"");
    assert_eq!(finish(t), 0);
}

#[test]
fn generate_image_choose_a_ratio_and_confirm() {
    let server = Everything::start();
    let mut t = pty(&[
        "--url",
        &server.url,
        "call",
        "generate_image",
        "prompt=a cat",
    ]);
    expect(&mut t, "asks: Which aspect ratio for \"a cat\"?");
    expect(&mut t, "Aspect ratio *");
    expect(&mut t, "Landscape (16:9)");
    expect(&mut t, "Square (1:1)");
    expect(&mut t, "Portrait (9:16)");
    send(&mut t, DOWN);
    send(&mut t, ENTER);
    expect(&mut t, "Aspect ratio * › Square (1:1)");
    expect(&mut t, "Send these answers?");
    send(&mut t, ENTER);
    expect(
        &mut t,
        "asks: Generating an image spends one generation. Go ahead?",
    );
    expect(&mut t, "Generate * [y/n]");
    send(&mut t, "y");
    expect(&mut t, "Send these answers?");
    send(&mut t, ENTER);
    expect(&mut t, "[image: image/png,");
    expect(&mut t, "Generated a 1:1 image for \"a cat\"");
    assert_eq!(finish(t), 0);
}

#[test]
fn url_mode_without_a_browser_prints_the_url_and_the_user_declines() {
    let server = Everything::start();
    let mut t = pty(&[
        "--url",
        &server.url,
        "call",
        "connect_account",
        "service=github",
    ]);
    expect(
        &mut t,
        "asks you to open a web page: Open this page to connect your github account.",
    );
    expect(&mut t, &format!("http://{}/connect?t=", server.addr));
    expect(&mut t, "host: 127.0.0.1");
    expect(&mut t, "Open this page?");
    expect(&mut t, "I'll open it myself (no browser found here)");
    send(&mut t, DOWN);
    send(&mut t, ENTER);
    expect(&mut t, "Open this page? › Decline");
    expect(&mut t, "Did not connect github");
    assert_eq!(finish(t), 0);
}

#[test]
fn url_mode_accept_then_finish_the_page_then_go_on() {
    let server = Everything::start();
    let mut t = pty(&[
        "--url",
        &server.url,
        "call",
        "connect_account",
        "service=github",
    ]);
    expect(&mut t, "I'll open it myself (no browser found here)");
    send(&mut t, ENTER);
    expect(&mut t, "Open this URL in your browser:");
    let token = expect_regex(&mut t, r"/connect\?t=([A-Za-z0-9_-]+)\r?\n");
    expect(&mut t, "Press Enter when you are done on the page");
    let page = server.finish_connect_page(&token);
    assert!(
        page.contains("Connected. You can close this page"),
        "{page}"
    );
    send(&mut t, ENTER);
    expect(&mut t, "Connected github");
    assert_eq!(finish(t), 0);
}

#[test]
fn progress_is_drawn_as_a_bar() {
    let server = Everything::start();
    let mut t = pty(&["--url", &server.url, "call", "test_tool_with_progress"]);
    expect(&mut t, "/100");
    expect(&mut t, "Progress test completed");
    assert_eq!(finish(t), 0);
}

#[test]
fn a_form_over_stdio() {
    let command = everything_stdio();
    let mut t = pty(&[
        "--stdio",
        &command,
        "call",
        "confirm_delete",
        "path=notes.txt",
    ]);
    expect(&mut t, "asks: Delete notes.txt from ");
    expect(&mut t, "[y/n]");
    send(&mut t, "y");
    expect(&mut t, "Send these answers?");
    send(&mut t, ENTER);
    expect(&mut t, "Deleted notes.txt (");
    assert_eq!(finish(t), 0);
}
