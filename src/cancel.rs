//! Ctrl-C: one handler, installed at start-up, sets a flag that every step of a command sees.
//!
//! Without it, SIGINT's default kills coalprof between two steps and loses what was not saved;
//! and a handler installed only while a child runs (tokio's `ctrl_c()` in the runner) replaces
//! the default for the rest of the process, so a Ctrl-C during parsing, the model or plotting
//! went unseen. Now the process runner races the flag against each child (and kills the child's
//! process group), pipelines check it between patterns and phases, and long CPU work runs on a
//! worker thread raced against it ([`race`]), so a command stops within a tick, saying so with
//! exit 130, and what finished before is on disk.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::Duration;

static CANCELLED: AtomicBool = AtomicBool::new(false);

/// How often raced work, and a child's wait, look at the flag.
const TICK: Duration = Duration::from_millis(50);

/// The SIGINT handler: sets the flag, nothing else (a lock-free store is async-signal-safe).
extern "C" fn on_interrupt(_: libc::c_int) {
    CANCELLED.store(true, Ordering::SeqCst);
}

/// Install the SIGINT handler (once per process; later calls do nothing).
///
/// A plain `sigaction`, not tokio's signal stream: that needed the tokio runtime (its worker
/// threads and I/O driver) started in every process, a quarter of a millisecond of a small
/// `analyze` that starts no child (`docs/performance.md`, "Native report reading").
pub(crate) fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: `action` is fully initialised (zeroed, then the handler, an empty mask and
        // SA_RESTART, so system calls the signal interrupts resume); the handler only stores
        // to an atomic.
        let failed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) != 0
        };
        if failed {
            crate::messages::warning(format!(
                "cannot handle Ctrl-C ({}): it will stop coalprof without saving",
                std::io::Error::last_os_error()
            ));
        }
    });
}

/// Whether Ctrl-C was pressed.
pub(crate) fn cancelled() -> bool {
    CANCELLED.load(Ordering::SeqCst)
}

/// Ctrl-C was pressed: what a step returns when it stops for it (`Error::Interrupted`, exit 130).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl From<Interrupted> for crate::error::Error {
    fn from(_: Interrupted) -> crate::error::Error {
        crate::error::Error::Interrupted
    }
}

/// `Err(Interrupted)` once Ctrl-C was pressed: called between patterns and phases.
pub(crate) fn check() -> Result<(), Interrupted> {
    if cancelled() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}

/// Resolves when Ctrl-C is pressed (at once if it was already), within a tick.
pub(crate) async fn wait() {
    while !cancelled() {
        tokio::time::sleep(TICK).await;
    }
}

/// Run `work` on a worker thread and wait for it, or for Ctrl-C, whichever comes first; an
/// interrupted worker is left to die with the process (it owns nothing half-written: results
/// are saved by the caller, atomically). A panic in `work` is a bug and panics here too.
pub(crate) fn race<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, Interrupted> {
    check()?;
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    loop {
        match rx.recv_timeout(TICK) {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => check()?,
            Err(RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the worker sends before it ends"),
            },
        }
    }
}
