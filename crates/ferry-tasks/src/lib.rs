//! Durable task stores for Ferry MCP servers.
#![forbid(unsafe_code)]
