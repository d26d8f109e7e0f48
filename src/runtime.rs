//! The one tokio runtime: the process runner blocks on it, parallel builds join on it, and the
//! Ctrl-C handler listens on it. Its own module so that `tools` and `cancel` share it without
//! depending on each other's internals.

use std::sync::OnceLock;

use tokio::runtime::Runtime;

/// The runtime behind the runner: sync callers block on it, parallel callers join on it.
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the tokio runtime starts")
    })
}
