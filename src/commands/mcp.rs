//! `coalprof mcp`: the Model Context Protocol server on stdin and stdout (`src/mcp/`). stdout
//! is the protocol's alone: nothing else of this process writes there.

use crate::error::Result;
use crate::exit::Exit;
use crate::mcp::McpSettings;

pub(crate) fn run(settings: &McpSettings) -> Result<Exit> {
    let (input, output) = (tokio::io::stdin(), super::stdout_async());
    crate::mcp::serve(settings, input, output)?;
    Ok(Exit::Ok)
}
