//! `coalprof mcp`: a Model Context Protocol server on stdio (the official SDK, `rmcp`) whose
//! tools are coalprof's commands, for agents that write kernels.
//!
//! Each tool call runs this same executable as a child process (`tools/coalprof.rs`, over the
//! one process runner): the child's stdout is its result, never the protocol's stream; a crash
//! or a runaway costs only that call; a cancelled call stops the child. The result is the
//! child's JSON as structured content (and as text, as the protocol recommends), bounded; a
//! failure is a tool error (`isError`) carrying the child's `error:` and `hint:` lines and its
//! exit code, never a protocol error for a user's mistake. While a call runs, a client that sent
//! a progress token gets a notification every second.

mod outcome;
mod tools;

use std::path::PathBuf;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{Error, Result};
use crate::tools::coalprof::Coalprof;

pub(crate) use tools::Server;

/// `coalprof mcp`, typed: the executable each tool call runs, and the global flags the server
/// was given that every call passes on (`--metrics`, `--reader`, `--trust-input`, `--ncu`,
/// `--nvcc`).
#[derive(Debug, Clone)]
pub(crate) struct McpSettings {
    pub exe: PathBuf,
    pub global: Vec<std::ffi::OsString>,
}

/// Serve MCP on `input`/`output` (stdin and stdout) until the client closes the connection or
/// Ctrl-C, on the one runtime.
pub(crate) fn serve<R, W>(settings: &McpSettings, input: R, output: W) -> Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    crate::runtime::runtime().block_on(serving(settings, input, output))
}

async fn serving<R, W>(settings: &McpSettings, input: R, output: W) -> Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let coalprof = Coalprof { exe: settings.exe.clone(), global: settings.global.clone() };
    let running = match Server::new(coalprof).serve((input, output)).await {
        Ok(running) => running,
        // A client that leaves before initializing has asked nothing.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(Error::input("<stdin>", format!("not an MCP client: {e}"))),
    };
    tokio::select! {
        quit = running.waiting() => {
            quit.map_err(|e| Error::Internal(format!("the MCP service stopped: {e}")))?;
            Ok(())
        }
        _ = crate::cancel::wait() => Err(Error::Interrupted),
    }
}
